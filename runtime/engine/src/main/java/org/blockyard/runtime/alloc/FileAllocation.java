package org.blockyard.runtime.alloc;

import java.util.List;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.api.alloc.MapRequest;

/**
 * The steps of one {@code getBlocks} on a file, without any concurrency of its own, so that the
 * {@link FileActor} (one message per step) and the global-lock baseline (direct calls under its lock)
 * run the same checks and the same walk. {@link #atOnce} answers what needs no group (a mapped run, a hole,
 * a preallocation hit, a refusal) without building the machine; otherwise {@link #start} asks a group; each group's {@link BlockGroup.Outcome} goes to
 * {@link #answer}, which says the next step. When the walk finds no space the machine asks its driver
 * to have every open file give back its unused preallocation ({@link DropPreallocations}), and retries
 * once if that gave anything back (ext4's discard-and-retry before ENOSPC).
 *
 * <p>The checks, shared with truncate and the unwritten-extent calls ({@link #checkRange}): a file must
 * be open; logical blocks lie in {@code [0, FileState.MAX_LOGICAL_BLOCKS)} and a count is at least 1; a
 * request that would give the file more extents than its {@link FileState.ExtentBound} allows (a durable
 * volume's file table) is refused with that bound's answer. A refused request changes nothing.
 */
final class FileAllocation {

    /** Messages to groups that need no answer, as the driver sends them (a tell, or a call under the lock). */
    interface Groups {
        /** Frees a preallocation the file gave up. */
        void unclaim(Extent extent);

        void discardWindow(int group, long file);
    }

    sealed interface Step permits Answer, Ask, DropPreallocations {}

    /** The request is over: reply with this. */
    record Answer(Reply<BlockRun> reply) implements Step {}

    /** Send {@code request} to {@code group} and pass its outcome to {@link #answer}. */
    /** Ask {@code group}; a {@code closing} claim may drop the file's window with it (a file written whole). */
    record Ask(int group, BlockGroup.Request request, boolean closing) implements Step {}

    /** Have every open file give back its preallocation, then call {@link #preallocationsDropped}. */
    enum DropPreallocations implements Step { INSTANCE }

    private final FileState file;
    private final AllocationPolicy policy;
    private final VolumeState volume;
    private final Geometry geometry;
    private final int preallocMin;
    private final Groups groups;
    private final long logical;
    private final int maxBlocks;
    private final boolean create;
    private final boolean reserve; // for a gap: the blocks are kept as its reservation, not mapped
    private int count;
    private long goal;
    private GroupWalk walk;
    private boolean retried;
    // A request of a file written whole (wholeFile): the most blocks its preallocation may take, and whether
    // its claim holds the rest of the file.
    private long prefetchCap = Long.MAX_VALUE;
    private boolean closing;

    FileAllocation(FileState file, AllocationPolicy policy, VolumeState volume, int preallocMinWindowBlocks,
                   Groups groups, long logicalBlock, int maxBlocks, boolean create) {
        this(file, policy, volume, preallocMinWindowBlocks, groups, logicalBlock, maxBlocks, create, false);
    }

    /**
     * The reservation for the file's gap when it ends at {@code logical} ({@link FileState#gapEndingAt}): the walk
     * of an allocating getBlocks for the gap, whose blocks become its reservation instead of being mapped; null
     * when there is none to make (no such gap, or its first block is mapped or reserved already). Either way the
     * gap is forgotten, and a file that holds as many reservations as it keeps gives back its oldest first.
     */
    static FileAllocation forGap(FileState file, AllocationPolicy policy, VolumeState volume, int preallocMinWindowBlocks,
                                 Groups groups, long logical) {
        long gap = file.gapEndingAt(logical);
        if (gap < 0) return null;
        file.clearGap();
        Extent old = file.reservationToGiveBack();
        if (old != null) groups.unclaim(old);
        if (file.lookup(gap, 1) != null || file.reservedAt(gap)) return null;
        return new FileAllocation(file, policy, volume, preallocMinWindowBlocks, groups, gap, (int) (logical - gap), true, true);
    }

    private FileAllocation(FileState file, AllocationPolicy policy, VolumeState volume, int preallocMinWindowBlocks,
                           Groups groups, long logicalBlock, int maxBlocks, boolean create, boolean reserve) {
        this.reserve = reserve;
        this.file = file;
        this.policy = policy;
        this.volume = volume;
        this.geometry = volume.geometry();
        this.preallocMin = preallocMinWindowBlocks;
        this.groups = groups;
        this.logical = logicalBlock;
        this.maxBlocks = maxBlocks;
        this.create = create;
    }

    /**
     * Makes this the allocation for request {@code index} of a file written whole and closed right after
     * ({@code WriteWhole}): the preallocation its claim makes holds no more than the appends right behind it
     * need, so the close has nothing to give back; and when those appends run to the batch's end, the
     * preallocation can hold them all and {@code mayClose} (the file's only writer, not a gap's reservation),
     * the claim is marked closing, and the group drops the file's window with it, as the close would have.
     */
    FileAllocation wholeFile(List<MapRequest> batch, int index, boolean mayClose) {
        long end = batch.get(index).logicalBlock() + batch.get(index).maxBlocks(), rest = 0;
        int i = index + 1;
        for (; i < batch.size(); i++) {
            MapRequest next = batch.get(i);
            if (next == null || !next.create() || next.logicalBlock() != end) break;
            rest += next.maxBlocks();
            end += next.maxBlocks();
        }
        prefetchCap = rest;
        closing = mayClose && i == batch.size() && file.prefetch(preallocMin) >= rest;
        return this;
    }

    static AllocationException notOpen(FileState file) {
        return new AllocationException.UnknownFile("file " + file.name + " is not open (closed by its last writer)");
    }

    /** Refuses {@code [logical, logical + blocks)} unless the file is open and the range is a valid one. */
    static AllocationException checkRange(FileState file, String call, long logical, long blocks) {
        if (file.writers == 0) return notOpen(file);
        if (logical < 0)
            return new AllocationException.InvalidRequest(call + " of " + file.name + " at logical block " + logical
                    + ": logical blocks start at 0");
        if (blocks < 1)
            return new AllocationException.InvalidRequest(call + " for " + blocks + " blocks of " + file.name
                    + ": the count must be at least 1");
        if (logical >= FileState.MAX_LOGICAL_BLOCKS || blocks > FileState.MAX_LOGICAL_BLOCKS - logical)
            return new AllocationException.OutOfRange(call + " of " + blocks + " blocks at logical block " + logical
                    + " of " + file.name + " reaches past the largest file, " + FileState.MAX_LOGICAL_BLOCKS
                    + " blocks");
        // A conversion, a discard or a punch in the middle of a run cuts it: the file may not hold that many.
        if (call.equals("markWritten"))
            return file.refuseGrowth(call, file.extentCountAfterMarkWritten(logical, blocks));
        if (call.equals("discardUnwritten"))
            return file.refuseGrowth(call, file.extentCountAfterDiscard(logical, blocks));
        if (call.equals("punchHole"))
            return file.refuseGrowth(call, file.extentCountAfterPunch(logical, blocks));
        return null;
    }

    static AllocationException checkTruncate(FileState file, long fromLogicalBlock) {
        if (file.writers == 0) return notOpen(file);
        if (fromLogicalBlock < 0)
            return new AllocationException.InvalidRequest("truncate of " + file.name + " at logical block "
                    + fromLogicalBlock + ": logical blocks start at 0");
        return null;
    }

    /**
     * What is answered without a group, computed without building the machine: a refusal, a
     * mapped run, a hole ({@code create} false) or a preallocation hit; null when a group must be asked.
     * Most appends of a file with a window end here, so every driver tries this first, then {@link #start}.
     */
    static Reply<BlockRun> atOnce(FileState file, long logical, int maxBlocks, boolean create) {
        AllocationException bad = checkRange(file, "getBlocks", logical, maxBlocks);
        if (bad != null) return Reply.fail(bad);
        BlockRun mapped = file.lookup(logical, maxBlocks);
        if (mapped != null) return Reply.ok(mapped);
        if (!create) return Reply.ok(new BlockRun(logical, -1, 0, false, false));
        bad = file.refuseGrowth("getBlocks", file.extentCount() + 1); // the run it maps may be one of its own
        if (bad != null) return Reply.fail(bad);
        BlockRun pre = file.takePrealloc(logical, file.holeLength(logical, maxBlocks));
        return pre != null ? Reply.ok(pre) : null;
    }

    /**
     * The walk for a request {@link #atOnce} could not answer (its caller tried that first): the goal group is
     * asked, then the others.
     */
    Step start() {
        count = file.holeLength(logical, maxBlocks);
        dropPrealloc(); // not sequential: its preallocation would only be in the way
        goal = policy.goal(logical, file.lastLogical, file.lastPhysical, file.precedingPhysical(logical),
                file.homeGroup, volume);
        if (goal < 0 || goal >= geometry.totalBlocks()) goal = geometry.groupStart(file.homeGroup);
        startWalk();
        return next();
    }

    /** The outcome of the last {@link Ask}. */
    Step answer(int group, BlockGroup.Outcome o) {
        if (walk.reserve() && o.window() != null) {
            int stale = file.windowFrom(group, o.window());
            if (stale >= 0) groups.discardWindow(stale, file.id);
        }
        if (!o.allocated()) return next();
        return ok(reserve ? file.reserveGap(logical, count, o.start(), o.blocks())
                : file.mapAllocated(logical, count, o.start(), o.blocks()));
    }

    /** After {@link DropPreallocations}: {@code blocks} were given back on the whole volume. */
    Step preallocationsDropped(long blocks) {
        if (blocks <= 0) return noSpace();
        startWalk();
        return next();
    }

    private void startWalk() {
        walk = new GroupWalk(policy, volume, geometry.groupOf(goal), file.windowGoalBlocks, file.windowGroup >= 0);
    }

    private Step next() {
        int g = walk.next();
        if (g >= 0) return new Ask(g, file.requestFor(g, walk, goal, count, preallocMin, prefetchCap), closing);
        if (!retried) {
            retried = true;
            return DropPreallocations.INSTANCE;
        }
        return noSpace();
    }

    private Step noSpace() {
        return fail(new AllocationException.NoSpace("no free block for " + file.name + " (logical " + logical
                + "), even without reservation windows and after open files gave back their preallocations"));
    }

    private void dropPrealloc() {
        Extent e = file.dropPrealloc();
        if (e != null) groups.unclaim(e);
    }

    private static Step ok(BlockRun run) {
        return new Answer(Reply.ok(run));
    }

    private static Step fail(AllocationException e) {
        return new Answer(Reply.fail(e));
    }
}
