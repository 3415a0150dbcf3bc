package org.blockyard.runtime.alloc;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Extent;

/**
 * What a file knows about its own blocks: its extent map (logical run to physical run, written or
 * unwritten), the ext3 goal state ({@code last_alloc_logical_block}, {@code last_alloc_physical_block}),
 * its preallocation, and what it needs to ask for its next window (the goal size, the group holding the
 * window and that group's last word on it; the window itself is the group's). Owned by the one actor
 * serving the file (or a lock baseline under its lock); not thread-safe.
 *
 * <p>Invariant: mapped runs never overlap, logically or physically; adjacent runs that are contiguous
 * both logically and physically and in the same state (both written or both unwritten) are kept merged,
 * so the map's size is the file's extent count. Logical blocks lie in {@code [0, MAX_LOGICAL_BLOCKS)}.
 *
 * <p>A fresh allocation is mapped unwritten (ext4): its blocks still hold a previous owner's bytes until
 * the writer converts it with {@link #markWritten}.
 */
public final class FileState {
    /**
     * Logical blocks of a file lie below this: 2^48 blocks (1 EiB of 4 KiB blocks, ext4's 2^32 blocks per
     * file times 2^16). The bound keeps {@code logical + count} far from overflowing a long.
     */
    public static final long MAX_LOGICAL_BLOCKS = 1L << 48;

    private static final int PHYSICAL = 0, BLOCKS = 1, UNWRITTEN = 2;

    /** A change of the extent map, as {@link Listener} hears it. */
    public enum Change {
        /** {@code [logical, +blocks)} mapped unwritten to {@code physical}. */
        MAPPED,
        /** The unwritten runs in {@code [logical, +blocks)} became written. */
        WRITTEN,
        /** The unwritten runs in {@code [logical, +blocks)} were unmapped. */
        DISCARDED,
        /** Every run in {@code [logical, +blocks)}, written or not, was unmapped (a hole punched). */
        PUNCHED,
        /** Everything at {@code logical} and beyond was unmapped ({@code blocks} is what was). */
        TRUNCATED
    }

    /**
     * Hears every change of the extent map, from the file's owner (its actor), right after the change and
     * before the owner answers: a durable volume appends a journal record. Only appends; never blocks.
     */
    @FunctionalInterface
    public interface Listener {
        Listener NONE = (file, change, logical, physical, blocks) -> {};

        void changed(FileState file, Change change, long logical, long physical, long blocks);
    }

    private Listener listener = Listener.NONE;

    /**
     * Says whether the file may hold more extents, before a change that would give it more is made: a durable
     * volume's file table holds a bounded number per file (and may count the room as taken). Null: it may.
     */
    @FunctionalInterface
    public interface ExtentBound {
        ExtentBound NONE = (file, call, extents) -> null;

        /** Null when {@code file} may hold {@code extents} extents after {@code call}; else the refusal. */
        AllocationException refuse(FileState file, String call, int extents);
    }

    private ExtentBound bound = ExtentBound.NONE;
    // MAPPED changes held back while a batch is served (holdMapped): one run, reported as one change.
    private boolean holding;
    private long heldLogical, heldPhysical, heldBlocks; // heldBlocks == 0: nothing held

    public final long id;
    public final String name;
    public final int homeGroup;

    /** logical start -> {physical start, blocks, 1 when unwritten else 0}. */
    private final TreeMap<Long, long[]> map = new TreeMap<>();
    // The last run of the map (null when it is empty), so that appends, the common case, neither box a key
    // nor walk the tree. Kept current after every call; bulk edits (markWritten, discard, truncate) drop it
    // while they run and read it back at their end.
    private long tailKey;
    private long[] tailRun;
    private boolean tailValid = true;
    private long mappedBlocks;
    private int txSeq;

    // Preallocation: physical blocks claimed for the file right after its last allocation and not yet
    // mapped; the next sequential getBlocks takes them without asking a group (ext4's inode PA).
    long preLogical = -1;
    long prePhysical = -1;
    int preBlocks;
    // Gaps' reservations, oldest first, each {logical, physical, blocks}: blocks claimed for the part of a
    // request answered short when the caller went on past it (see gapEndingAt). Not mapped: the caller's own
    // request for that part takes them, as it would the preallocation; given back with the preallocation
    // otherwise. Null until the first. A caller with many requests in flight has a gap per window end among
    // them; past MAX_GAP_RESERVATIONS the oldest goes back.
    private ArrayList<long[]> reservations;

    /** Gaps' reservations a file keeps at most. */
    static final int MAX_GAP_RESERVATIONS = 64;

    // The part of the last allocating getBlocks left unanswered: it asked for [logical, gapEnd) and got a
    // shorter run (its window or group ended), so the caller asks again at gapStart, or has already gone on.
    private long gapStart = -1, gapEnd = -1;

    long lastLogical = -1;
    long lastPhysical = -1;
    // The reservation window is its group's (BlockGroup books, grows, uses and drops it); the file keeps what it
    // needs to ask for its next block. The goal size of its windows, the policy's, as the last group that sized one
    // said; it is what the file asks for, how much it prefetches, and which groups a walk skips.
    int windowGoalBlocks;
    // The group that holds its window, or held it last (a window a group could not replace is gone there), or -1:
    // where a close, truncate or policy switch drops it, and whether a walk treats the file as having one.
    int windowGroup = -1;
    // That group's last word on the window: shown to a group asked to book the next one elsewhere, which sizes it
    // from the one it replaces. Null with no window.
    BlockGroup.Held window;
    int writers;

    public FileState(long id, String name, int homeGroup, int initialWindowBlocks) {
        this.id = id;
        this.name = name;
        this.homeGroup = homeGroup;
        this.windowGoalBlocks = initialWindowBlocks;
    }

    /** Has every later change of the extent map reported to {@code listener}; the map's owner calls it. */
    public void listen(Listener listener) {
        this.listener = listener == null ? Listener.NONE : listener;
    }

    /** Has every change that would give the file more extents asked of {@code bound} first. */
    public void bound(ExtentBound bound) {
        this.bound = bound == null ? ExtentBound.NONE : bound;
    }

    /** The refusal of {@code call} when it would leave the file {@code extents} extents, more than it may hold; else null. */
    AllocationException refuseGrowth(String call, int extents) {
        return extents <= map.size() ? null : bound.refuse(this, call, extents);
    }

    /**
     * Until {@link #releaseMapped}, consecutive MAPPED changes that continue each other (logically and
     * physically) reach the listener as one, when the next change that does not continue them comes or at the
     * release: a batch of appends costs a durable volume one journal record instead of one per call. The
     * owner releases before it answers the batch, so whoever waits for the file's records waits for these.
     */
    public void holdMapped() {
        holding = true;
    }

    /** Reports the MAPPED change held back, if any, and stops holding. */
    public void releaseMapped() {
        holding = false;
        reportHeld();
    }

    private void reportHeld() {
        if (heldBlocks == 0) return;
        long blocks = heldBlocks;
        heldBlocks = 0;
        listener.changed(this, Change.MAPPED, heldLogical, heldPhysical, blocks);
    }

    /** Reports a change to the listener, after whatever is held (so the listener hears them in order). */
    private void changed(Change change, long logical, long physical, long blocks) {
        if (holding && change == Change.MAPPED) {
            if (heldBlocks > 0 && heldLogical + heldBlocks == logical && heldPhysical + heldBlocks == physical) {
                heldBlocks += blocks;
                return;
            }
            reportHeld();
            heldLogical = logical;
            heldPhysical = physical;
            heldBlocks = blocks;
            return;
        }
        reportHeld();
        listener.changed(this, change, logical, physical, blocks);
    }

    /** The mapped run containing {@code logical}, up to {@code max} blocks and in one state, or null for a hole. */
    public BlockRun lookup(long logical, int max) {
        if (tailRun == null) return null;
        long lstart;
        long[] run;
        if (logical >= tailKey) {
            lstart = tailKey;
            run = tailRun;
        } else {
            Map.Entry<Long, long[]> e = map.floorEntry(logical);
            if (e == null) return null;
            lstart = e.getKey();
            run = e.getValue();
        }
        long len = run[BLOCKS];
        if (logical >= lstart + len) return null;
        long off = logical - lstart;
        return new BlockRun(logical, run[PHYSICAL] + off, (int) Math.min(max, len - off), false, run[UNWRITTEN] != 0);
    }

    /** Unmapped blocks from {@code logical} up to the next mapped one, capped at {@code max}. */
    public int holeLength(long logical, int max) {
        if (tailRun == null || logical >= tailKey) return max; // nothing is mapped after the last run's start
        Long next = map.higherKey(logical);
        return next == null ? max : (int) Math.min(max, next - logical);
    }

    /**
     * The physical block of the nearest mapped logical block before {@code logical}, or -1: for a hole at
     * {@code logical}, the last block of the run before it.
     */
    public long precedingPhysical(long logical) {
        if (tailRun != null && logical > tailKey) return tailRun[PHYSICAL] + tailRun[BLOCKS] - 1;
        Map.Entry<Long, long[]> e = map.lowerEntry(logical);
        if (e == null) return -1;
        return e.getValue()[PHYSICAL] + e.getValue()[BLOCKS] - 1;
    }

    private void refreshTail() {
        Map.Entry<Long, long[]> last = map.lastEntry();
        tailKey = last == null ? 0 : last.getKey();
        tailRun = last == null ? null : last.getValue();
        tailValid = true;
    }

    /** Records a fresh (unwritten) allocation and updates the ext3 goal state (ext3_splice_branch). */
    public void map(long logical, long physical, int blocks) {
        put(logical, physical, blocks, true);
        mappedBlocks += blocks;
        lastLogical = logical + blocks - 1;
        lastPhysical = physical + blocks - 1;
        changed(Change.MAPPED, logical, physical, blocks);
    }

    /** Inserts a run over a hole, merging it with neighbours that continue it in the same state. */
    private void put(long logical, long physical, long blocks, boolean unwritten) {
        long flag = unwritten ? 1 : 0;
        if (tailValid && tailRun != null && logical == tailKey + tailRun[BLOCKS]
                && physical == tailRun[PHYSICAL] + tailRun[BLOCKS] && tailRun[UNWRITTEN] == flag) {
            tailRun[BLOCKS] += blocks; // an append that continues the last run: nothing after it to merge
            return;
        }
        putInTree(logical, physical, blocks, flag);
        if (tailValid) refreshTail();
    }

    private void putInTree(long logical, long physical, long blocks, long flag) {
        Map.Entry<Long, long[]> prev = map.lowerEntry(logical);
        long[] cur;
        if (prev != null && prev.getKey() + prev.getValue()[BLOCKS] == logical
                && prev.getValue()[PHYSICAL] + prev.getValue()[BLOCKS] == physical && prev.getValue()[UNWRITTEN] == flag) {
            cur = prev.getValue();
            cur[BLOCKS] += blocks;
            logical = prev.getKey();
        } else {
            cur = new long[] {physical, blocks, flag};
            map.put(logical, cur);
        }
        Map.Entry<Long, long[]> next = map.higherEntry(logical);
        if (next != null && logical + cur[BLOCKS] == next.getKey() && cur[PHYSICAL] + cur[BLOCKS] == next.getValue()[PHYSICAL]
                && next.getValue()[UNWRITTEN] == flag) {
            cur[BLOCKS] += next.getValue()[BLOCKS];
            map.remove(next.getKey());
        }
    }

    /** The runs overlapping {@code [from, to)}, clipped to it: {logical, physical, blocks, unwritten}. */
    private List<long[]> piecesIn(long from, long to) {
        List<long[]> out = new ArrayList<>();
        Map.Entry<Long, long[]> head = map.floorEntry(from);
        Long first = head != null && head.getKey() + head.getValue()[BLOCKS] > from ? head.getKey() : map.ceilingKey(from);
        if (first == null || first >= to) return out; // nothing mapped in the range (a run may start after it)
        for (Map.Entry<Long, long[]> e : map.subMap(first, true, to, false).entrySet()) {
            long l = e.getKey(), len = e.getValue()[BLOCKS];
            long a = Math.max(l, from), b = Math.min(l + len, to);
            if (a < b) out.add(new long[] {a, e.getValue()[PHYSICAL] + (a - l), b - a, e.getValue()[UNWRITTEN]});
        }
        return out;
    }

    /** Cuts the runs at {@code at} so that no run crosses it. */
    private void splitAt(long at) {
        Map.Entry<Long, long[]> e = map.lowerEntry(at);
        if (e == null) return;
        long[] v = e.getValue();
        long keep = at - e.getKey();
        if (keep >= v[BLOCKS]) return;
        map.put(at, new long[] {v[PHYSICAL] + keep, v[BLOCKS] - keep, v[UNWRITTEN]});
        v[BLOCKS] = keep;
    }

    /**
     * Converts the unwritten runs in {@code [logical, logical + blocks)} to written
     * (ext4_convert_unwritten_extents); answers how many blocks changed state.
     */
    public long markWritten(long logical, long blocks) {
        long to = logical + blocks, converted = 0;
        List<long[]> pieces = piecesIn(logical, to);
        for (long[] p : pieces) if (p[3] != 0) converted += p[2];
        if (converted == 0) return 0;
        tailValid = false;
        splitAt(logical);
        splitAt(to);
        for (long[] p : pieces) {
            if (p[3] == 0) continue;
            map.remove(p[0]);
            put(p[0], p[1], p[2], false);
        }
        // Converted runs may now continue written runs on either side of the range.
        remergeAround(logical);
        remergeAround(to);
        refreshTail();
        changed(Change.WRITTEN, logical, -1, blocks);
        return converted;
    }

    /** Merges the run ending at {@code at} with the one starting there when they continue each other. */
    private void remergeAround(long at) {
        long[] next = map.get(at);
        if (next == null) return;
        map.remove(at);
        put(at, next[PHYSICAL], next[BLOCKS], next[UNWRITTEN] != 0);
    }

    /** The extents {@link #markWritten} of {@code [logical, logical + blocks)} would leave; changes nothing. */
    public int extentCountAfterMarkWritten(long logical, long blocks) {
        return extentCountAfter(logical, logical + blocks, false, false);
    }

    /** The extents {@link #discardUnwritten} of {@code [logical, logical + blocks)} would leave; changes nothing. */
    public int extentCountAfterDiscard(long logical, long blocks) {
        return extentCountAfter(logical, logical + blocks, true, false);
    }

    /** The extents a punched hole ({@link #discard} with written runs) of {@code [logical, logical + blocks)} would leave; changes nothing. */
    public int extentCountAfterPunch(long logical, long blocks) {
        return extentCountAfter(logical, logical + blocks, true, true);
    }

    /**
     * The map's size after the unwritten runs in {@code [from, to)} become written, or are unmapped with
     * {@code discard} (the written ones too with {@code written}): the runs that meet the range or touch its
     * ends are cut at its ends, changed, and merged where they continue each other in one state, as the change
     * itself leaves them (runs further away keep their neighbours).
     */
    private int extentCountAfter(long from, long to, boolean discard, boolean written) {
        Map.Entry<Long, long[]> before = map.lowerEntry(from);
        Long first = before != null && before.getKey() + before.getValue()[BLOCKS] >= from ? before.getKey()
                : map.ceilingKey(from);
        if (first == null || first > to) return map.size();
        int window = 0, after = 0;
        long[] last = null; // the last piece kept: {logical, physical, blocks, unwritten}
        for (Map.Entry<Long, long[]> e : map.subMap(first, true, to, true).entrySet()) {
            window++;
            long l = e.getKey(), end = l + e.getValue()[BLOCKS], p = e.getValue()[PHYSICAL], u = e.getValue()[UNWRITTEN];
            long a = Math.min(Math.max(l, from), end), b = Math.max(a, Math.min(end, to));
            long[][] pieces = {{l, p, a - l, u}, {a, p + (a - l), b - a, u != 0 && !discard ? 0 : u}, {b, p + (b - l), end - b, u}};
            for (int i = 0; i < 3; i++) {
                long[] piece = pieces[i];
                if (piece[2] == 0 || (i == 1 && discard && (u != 0 || written))) continue;
                if (last != null && last[0] + last[2] == piece[0] && last[1] + last[2] == piece[1] && last[3] == piece[3]) {
                    last[2] += piece[2];
                } else {
                    last = piece;
                    after++;
                }
            }
        }
        return map.size() - window + after;
    }

    /**
     * The unwritten runs in {@code [logical, logical + blocks)} as physical extents, the written ones too with
     * {@code written}: what {@link #discard} of the range would unmap; changes nothing.
     */
    public List<Extent> mappedIn(long logical, long blocks, boolean written) {
        List<Extent> out = new ArrayList<>();
        for (long[] p : piecesIn(logical, logical + blocks)) if (written || p[3] != 0) out.add(new Extent(p[1], p[2]));
        return out;
    }

    /**
     * Unmaps the unwritten runs in {@code [logical, logical + blocks)} (their blocks are to be freed in their
     * groups); answers how many blocks were unmapped. Written runs stay.
     */
    public long discardUnwritten(long logical, long blocks) {
        return discard(logical, blocks, false);
    }

    /** Unmaps the unwritten runs in the range, the written ones too with {@code written}; answers how many blocks. */
    long discard(long logical, long blocks, boolean written) {
        clearGap(); // a failed write or a punched hole: the caller starts that range afresh
        long to = logical + blocks, dropped = 0;
        List<long[]> pieces = piecesIn(logical, to);
        for (long[] p : pieces) if (written || p[3] != 0) dropped += p[2];
        if (dropped == 0) return 0;
        tailValid = false;
        splitAt(logical);
        splitAt(to);
        for (long[] p : pieces) if (written || p[3] != 0) map.remove(p[0]);
        remergeAround(logical);
        remergeAround(to);
        mappedBlocks -= dropped;
        refreshTail();
        if (lastLogical >= logical) recomputeLast();
        changed(written ? Change.PUNCHED : Change.DISCARDED, logical, -1, blocks);
        return dropped;
    }

    private void recomputeLast() {
        Map.Entry<Long, long[]> last = map.lastEntry();
        lastLogical = last == null ? -1 : last.getKey() + last.getValue()[BLOCKS] - 1;
        lastPhysical = last == null ? -1 : last.getValue()[PHYSICAL] + last.getValue()[BLOCKS] - 1;
    }

    /**
     * A transaction id for a two-phase free in the groups, unique among files (the file's id is in it); negative,
     * so never one of the extent interface's.
     */
    long nextTx() {
        return -((id << 24) | (++txSeq & 0xFF_FFFFL));
    }

    /**
     * Notes how an allocating getBlocks for {@code [logical, logical + max)} was answered: a run shorter
     * than asked leaves the rest as the file's gap ({@link #gapEndingAt}); anything else clears it.
     */
    void answered(long logical, int max, boolean create, Reply<BlockRun> reply) {
        long got = reply.isOk() ? reply.value().blocks() : 0;
        if (create && got > 0 && got < max) {
            gapStart = logical + got;
            gapEnd = logical + max;
        } else {
            clearGap();
        }
    }

    /**
     * Where the gap starts when an allocating getBlocks at {@code logical} begins right where the gap ends:
     * the caller went on past the part of its last request that was answered short, as a caller with
     * several requests in flight (or in one batch) does before it sees the short answer. Its host reserves
     * blocks for the gap first ({@link #reserveGap}), so the blocks follow each other on disk as they do for a
     * caller that asks again at once, instead of the gap landing after the next request's run. -1 when there
     * is no such gap.
     */
    long gapEndingAt(long logical) {
        return gapEnd == logical && gapStart >= 0 && gapStart < gapEnd ? gapStart : -1;
    }

    void clearGap() {
        gapStart = gapEnd = -1;
    }

    /**
     * Maps up to {@code count} blocks at {@code logical} from the preallocation, or from a gap's reservation
     * that starts there; null if neither does.
     */
    public BlockRun takePrealloc(long logical, int count) {
        if (preBlocks == 0 || logical != preLogical) return reservations == null ? null : takeReserved(logical, count);
        int n = Math.min(count, preBlocks);
        long physical = prePhysical;
        map(logical, physical, n);
        preLogical += n;
        prePhysical += n;
        preBlocks -= n;
        return new BlockRun(logical, physical, n, true, true);
    }

    private BlockRun takeReserved(long logical, int count) {
        for (int i = 0; i < reservations.size(); i++) {
            long[] r = reservations.get(i);
            if (r[0] != logical) continue;
            int n = (int) Math.min(count, r[2]);
            long physical = r[1];
            map(logical, physical, n);
            r[0] += n;
            r[1] += n;
            r[2] -= n;
            if (r[2] == 0) reservations.remove(i);
            return new BlockRun(logical, physical, n, true, true);
        }
        return null;
    }

    /** Whether a gap's reservation starts at {@code logical}. */
    boolean reservedAt(long logical) {
        if (reservations != null) for (long[] r : reservations) if (r[0] == logical) return true;
        return false;
    }

    /** The oldest gap's reservation when the file holds as many as it keeps (to be freed in its group), else null. */
    Extent reservationToGiveBack() {
        if (reservations == null || reservations.size() < MAX_GAP_RESERVATIONS) return null;
        long[] r = reservations.remove(0);
        return new Extent(r[1], r[2]);
    }

    /** Gives up every gap's reservation: what to free, in their groups (empty when none). */
    List<Extent> dropReservations() {
        if (reservations == null || reservations.isEmpty()) return List.of();
        List<Extent> out = new ArrayList<>(reservations.size());
        for (long[] r : reservations) out.add(new Extent(r[1], r[2]));
        reservations.clear();
        return out;
    }

    /** Gives up the preallocation and the gaps' reservations: what to free, in their groups (empty when none). */
    List<Extent> dropPreallocations() {
        Extent pre = dropPrealloc();
        if (reservations == null || reservations.isEmpty()) return pre == null ? List.of() : List.of(pre);
        List<Extent> out = new ArrayList<>(dropReservations());
        if (pre != null) out.add(pre);
        return out;
    }

    /** Whether the file holds blocks unmapped: a preallocation or a gap's reservation. */
    boolean holdsUnmapped() {
        return preBlocks > 0 || reservations != null && !reservations.isEmpty();
    }

    /** The blocks held unmapped: the gaps' reservations and the preallocation. */
    List<Extent> preallocated() {
        List<Extent> out = new ArrayList<>(2);
        if (reservations != null) for (long[] r : reservations) out.add(new Extent(r[1], r[2]));
        if (preBlocks > 0) out.add(new Extent(prePhysical, preBlocks));
        return out;
    }

    /** Gives up the preallocation; answers it (to be freed in its group), or null when there is none. */
    public Extent dropPrealloc() {
        if (preBlocks == 0) return null;
        Extent e = new Extent(prePhysical, preBlocks);
        preBlocks = 0;
        preLogical = prePhysical = -1;
        return e;
    }

    /** Blocks to ask for beyond a request, to keep as preallocation: the window's size once it is big. */
    int prefetch(int preallocMinWindowBlocks) {
        return preallocMinWindowBlocks > 0 && windowGoalBlocks >= preallocMinWindowBlocks ? windowGoalBlocks : 0;
    }

    /**
     * The request this file sends group {@code group} for {@code count} blocks at {@code goal}, in the
     * pass {@code walk} is in: the goal only in the goal group; with a window, its goal size, the prefetch for
     * the preallocation (at most {@code prefetchCap}) and, to a group other than the one holding it, the window
     * as that group last reported it (a group knows its own).
     */
    BlockGroup.Request requestFor(int group, GroupWalk walk, long goal, int count, int preallocMinWindowBlocks,
                                  long prefetchCap) {
        BlockGroup.WindowAsk ask = walk.reserve() ? new BlockGroup.WindowAsk(windowGoalBlocks,
                (int) Math.min(prefetch(preallocMinWindowBlocks), prefetchCap), windowGroup == group ? null : window)
                : null;
        return new BlockGroup.Request(id, walk.isGoalGroup(group) ? goal : -1, count, goal != lastPhysical + 1, ask);
    }

    /** Maps a fresh run of which the first {@code count} blocks were asked for; keeps the rest as preallocation. */
    public BlockRun mapAllocated(long logical, int count, long physical, int blocks) {
        int mapped = Math.min(count, blocks);
        map(logical, physical, mapped);
        if (blocks > mapped) {
            preLogical = logical + mapped;
            prePhysical = physical + mapped;
            preBlocks = blocks - mapped;
        }
        return new BlockRun(logical, physical, mapped, true, true);
    }

    /**
     * Keeps the first {@code count} blocks of a fresh run as the reservation for the gap at {@code logical}
     * (not mapped; the host made room, see {@link #reservationToGiveBack}), the rest as preallocation after it.
     */
    BlockRun reserveGap(long logical, int count, long physical, int blocks) {
        int n = Math.min(count, blocks);
        if (reservations == null) reservations = new ArrayList<>(4);
        reservations.add(new long[] {logical, physical, n});
        if (blocks > n) {
            preLogical = logical + n;
            prePhysical = physical + n;
            preBlocks = blocks - n;
        }
        return new BlockRun(logical, physical, n, true, true);
    }

    /** The physical extents that {@link #truncate} at {@code fromLogical} would release; changes nothing. */
    public List<Extent> extentsFrom(long fromLogical) {
        List<Extent> out = new ArrayList<>();
        for (long[] p : piecesIn(fromLogical, Long.MAX_VALUE)) out.add(new Extent(p[1], p[2]));
        return out;
    }

    /** Unmaps everything at {@code fromLogical} and beyond; answers the physical extents released. */
    public List<Extent> truncate(long fromLogical) {
        List<Extent> freed = extentsFrom(fromLogical);
        if (freed.isEmpty()) return freed;
        tailValid = false;
        splitAt(fromLogical);
        map.tailMap(fromLogical, true).clear();
        refreshTail();
        for (Extent e : freed) mappedBlocks -= e.blocks();
        if (lastLogical >= fromLogical) recomputeLast();
        changed(Change.TRUNCATED, fromLogical, -1, freed.stream().mapToLong(Extent::blocks).sum());
        return freed;
    }

    /** Physical extents in logical order. */
    public List<Extent> extents() {
        List<Extent> out = new ArrayList<>(map.size());
        for (long[] v : map.values()) out.add(new Extent(v[PHYSICAL], v[BLOCKS]));
        return out;
    }

    public int extentCount() {
        return map.size();
    }

    public long mappedBlocks() {
        return mappedBlocks;
    }

    /**
     * Takes what group {@code group} said about the file's window in its answer to a request made with one.
     * Answers the group whose window the file must now discard (its window moved to {@code group}), or -1.
     */
    int windowFrom(int group, BlockGroup.WindowReport report) {
        windowGoalBlocks = report.goalBlocks();
        if (report instanceof BlockGroup.Held held) {
            int old = windowGroup != group ? windowGroup : -1;
            windowGroup = group;
            window = held;
            return old;
        }
        // A closing claim dropped the window this group held: nothing is left to discard.
        if (report instanceof BlockGroup.Dropped && group == windowGroup) {
            windowGroup = -1;
            window = null;
        }
        return -1;
    }

    void windowDiscarded() {
        clearGap(); // on close, truncate or a policy change: the caller's next request starts afresh
        windowGroup = -1;
        window = null;
    }
}
