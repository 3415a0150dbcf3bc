package org.blockyard.runtime.alloc;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;

/**
 * One block group's allocation state and algorithms, without any concurrency of its own: the
 * {@link GroupActor} owns one per group (so every method runs on one actor at a time), and the
 * global-lock baseline drives the same code under one lock.
 *
 * <p>Data: a {@link Bitmap} (1 = used) over the group; the system zone (bitmap and descriptor blocks, the
 * journal in group 0) is set at construction and never cleared; the free runs of the bitmap by address
 * and size ({@link FreeRunIndex}); booked reservation windows by start block and by file.
 *
 * <p>Invariants:
 * <ul>
 * <li>windows never overlap and never leave the group; a file has at most one window here;</li>
 * <li>a window holds at least one free block when it is booked (it need not stay so);</li>
 * <li>no system-zone block is ever claimed or freed;</li>
 * <li>{@link #freeBlocks()} equals the number of clear bits in the group's data area;</li>
 * <li>the run index holds exactly the bitmap's free runs: every bitmap change goes through a method
 *     here that reports it to the index at once.</li>
 * </ul>
 *
 * <p>Positions in the public methods are absolute block numbers; the bitmap works group-relative.
 */
public final class BlockGroup implements AllocationPolicy.GroupView {

    /** A booked window {@code [start, end)} of one file. Provisional while its search runs in slices. */
    static final class Window {
        final long file;
        long start;
        long end; // exclusive
        long hit; // blocks allocated from this window since it was booked (ext3 rsv_alloc_hit)
        boolean provisional;

        Window(long file, long start, long end) {
            this.file = file;
            this.start = start;
            this.end = end;
        }

        boolean contains(long block) {
            return block >= start && block < end;
        }

        long blocks() {
            return end - start;
        }

        Extent extent() {
            return new Extent(start, end - start);
        }
    }

    /**
     * A file's allocation request as the group sees it: {@code count} blocks at {@code goal} (-1: anywhere in
     * the group), with a window ({@code window}) or without one (null: ext3's {@code noreservation}, or the last
     * pass before "no space"). {@code newRun} says the request does not continue the file's last run (so with a
     * stripe configured, its new window starts on a stripe boundary).
     */
    public record Request(long file, long goal, int count, boolean newRun, WindowAsk window) {
        /**
         * A request for {@code count} blocks and, with a window ({@code reserve}) of goal size
         * {@code windowGoalBlocks}, up to {@code prefetch} more; no window elsewhere to replace.
         */
        public static Request of(long file, long goal, int count, int prefetch, int windowGoalBlocks, boolean reserve,
                                 boolean newRun) {
            return new Request(file, goal, count, newRun, reserve ? new WindowAsk(windowGoalBlocks, prefetch, null) : null);
        }

        /** Blocks the request may take: {@code count}, and the prefetch of a request with a window. */
        int wanted() {
            return window == null ? count : (int) Math.min(Integer.MAX_VALUE, (long) count + window.prefetch());
        }
    }

    /**
     * What a request with a window says about it: {@code goalBlocks}, the size the policy last chose for the file's
     * windows; up to {@code prefetch} blocks more than the request from the window, right after its blocks, which the
     * file keeps as its preallocation; and, when the file's window is in another group, that window as its group last
     * reported it ({@code replacing}; else null): a window booked here replaces it, and the policy sizes the new one
     * from the old one's length and use. A group never asks the file about a window of its own.
     */
    public record WindowAsk(int goalBlocks, int prefetch, Held replacing) {}

    /**
     * What a group says about a file's window in its answer to a request made with one. The window is the
     * group's: booked, grown, used and dropped here; the answer says what became of it, and the goal size of the
     * file's windows, which the policy changes whenever the group sizes a new window.
     */
    public sealed interface WindowReport permits Held, NoWindow, Dropped {
        int goalBlocks();
    }

    /** The group holds the file's window: {@code blocks} long, {@code hit} of them allocated since it was booked. */
    public record Held(int goalBlocks, long blocks, long hit) implements WindowReport {}

    /** The group has no window for the file: it had none to give (one it held before is gone). */
    public record NoWindow(int goalBlocks) implements WindowReport {}

    /** The claim took all it wanted and the group dropped the file's window with it (a file written whole). */
    public record Dropped(int goalBlocks) implements WindowReport {}

    /**
     * The outcome of a request: {@code blocks > 0} when allocated from {@code start}, 0 when this group cannot
     * serve it; {@code window}, what became of the file's window here (null for a request without a window).
     */
    public record Outcome(long start, int blocks, WindowReport window) {
        /** {@link #windowBlocks()} of an answer whose claim dropped the file's window here. */
        public static final long DROPPED_WINDOW = -1;

        public boolean allocated() {
            return blocks > 0;
        }

        /**
         * The length of the file's window as this answer reports it, for a reader: the window held here, 0 when
         * the group holds none for the file (or was asked without one), {@link #DROPPED_WINDOW} when it dropped it.
         */
        public long windowBlocks() {
            if (window instanceof Held h) return h.blocks();
            return window instanceof Dropped ? DROPPED_WINDOW : 0;
        }
    }

    private final int group;
    private final long start;
    private final long end;
    private final long firstData;
    private final int stripeBlocks;
    private AllocationPolicy policy;
    private final Bitmap bitmap;
    private final FreeRunIndex runs;
    private final TreeMap<Long, Window> windows = new TreeMap<>();
    private RuntimeException injectedFault; // thrown by the next extent claim: fault-injection tests only
    private final Map<Long, Window> byFile = new HashMap<>();
    private GroupJournal journal = GroupJournal.NONE;

    /** A group's shape, and the bitmap every group of that shape starts from (never changed: shared). */
    private record Shape(int bits, int system, int blocks) {}
    private static final ConcurrentHashMap<Shape, Bitmap> INITIAL = new ConcurrentHashMap<>();

    public BlockGroup(Geometry geometry, int group, AllocationPolicy policy) {
        this.group = group;
        this.start = geometry.groupStart(group);
        int blocks = geometry.groupBlocks(group);
        this.end = start + blocks;
        this.firstData = start + geometry.systemBlocks(group);
        this.stripeBlocks = geometry.stripeBlocks();
        this.policy = policy;
        int bits = (blocks + 63) & ~63, system = geometry.systemBlocks(group);
        this.bitmap = INITIAL.computeIfAbsent(new Shape(bits, system, blocks), s -> {
            Bitmap b = new Bitmap(bits);
            b.setUsed(0, system);
            if (bits > blocks) b.setUsed(blocks, bits - blocks); // padding past a short last group
            return b;
        }).sharingCopy();
        this.runs = new FreeRunIndex(bits);
        runs.rebuild(bitmap);
    }

    // ---- views -------------------------------------------------------------------------------------

    @Override
    public int group() {
        return group;
    }

    @Override
    public long firstDataBlock() {
        return firstData;
    }

    @Override
    public long end() {
        return end;
    }

    public long start() {
        return start;
    }

    @Override
    public long freeBlocks() {
        return bitmap.freeCount();
    }

    public long dataBlocks() {
        return end - firstData;
    }

    @Override
    public List<Extent> windows() {
        List<Extent> out = new ArrayList<>(windows.size());
        for (Window w : windows.values()) out.add(w.extent());
        return out;
    }

    /** The window booked by {@code file} here, or null. */
    public Extent windowOf(long file) {
        Window w = byFile.get(file);
        return w == null ? null : w.extent();
    }

    /** The file owning the window that starts at {@code start}, or -1. */
    public long fileOfWindowAt(long start) {
        Window w = windows.get(start);
        return w == null ? -1 : w.file;
    }

    public int windowCount() {
        return windows.size();
    }

    public boolean isUsed(long block) {
        return bitmap.isUsed(rel(block));
    }

    Bitmap bitmap() {
        return bitmap;
    }

    FreeRunIndex runIndex() {
        return runs;
    }

    /** Length of the longest free run here, in blocks (what {@link VolumeState#largestFreeRun} publishes). */
    public int largestFreeRun() {
        return runs.largest();
    }

    /** Bit {@code k} set iff a free run here is {@code [2^k, 2^(k+1))} blocks long. */
    public int freeRunBuckets() {
        return runs.bucketMask();
    }

    /**
     * Makes {@code volume}'s fragmentation-score sums follow this group's free runs from now on: they
     * get every run now free, and every change after. Calling it again with the same volume does nothing.
     */
    public void attach(VolumeState volume) {
        runs.listener(volume == null ? null : volume.scoreListener());
    }

    /**
     * Has every later bitmap change reported to {@code journal} (a durable volume's metadata journal). Only
     * before an actor serves the group; changes made before (a bitmap loaded from disk) are not reported.
     */
    public void journal(GroupJournal journal) {
        this.journal = journal == null ? GroupJournal.NONE : journal;
    }

    private void claimBits(int from, int count) {
        bitmap.setUsed(from, count);
        changed(from, count, true);
    }

    /**
     * The one place every bitmap change passes, right after the bits were written: the run index follows
     * it, and the journal gets its record.
     */
    private void changed(int from, int count, boolean used) {
        if (count <= 0) return;
        if (used) runs.claimed(from, count);
        else runs.freed(from, count);
        journal.bitmapChanged(group, abs(from), count, used);
    }

    private int rel(long block) {
        return (int) (block - start);
    }

    private long abs(int bit) {
        return start + bit;
    }

    /**
     * Marks the first {@code blocks} data blocks used, as an aged volume would have them (benchmarks).
     * Only for a group no actor serves yet.
     */
    public void fillFromStart(int blocks) {
        if (blocks < 0 || blocks > dataBlocks()) throw new IllegalArgumentException("cannot fill " + blocks
                + " of " + dataBlocks() + " data blocks");
        claimBits(rel(firstData), blocks);
    }

    /**
     * Marks {@code blocks} free data blocks from {@code block} used, as an aged volume would have them
     * (benchmarks, tests). Only before an actor serves the group, or from the actor that owns it.
     */
    public void markUsed(long block, int blocks) {
        if (blocks < 0 || block < firstData || block > end - blocks) throw new IllegalArgumentException(blocks
                + " blocks at " + block + " are not data blocks of group " + group);
        claimBits(rel(block), blocks);
    }

    // ---- file allocation (ext3_try_to_allocate_with_rsv) --------------------------------------------

    /**
     * Allocates for a file with the whole window search done at once (no slicing): the global-lock
     * baseline, and tests.
     */
    public Outcome allocate(Request r) {
        Started st = begin(r);
        if (st.search() == null) return st.outcome();
        st.search().run(Integer.MAX_VALUE, true);
        return finish(st.search());
    }

    /** What {@link #begin} did: served the request at once ({@code outcome}), or started a window {@code search}. */
    public record Started(Outcome outcome, WindowSearch search) {}

    /**
     * Starts a request: serves it at once when it needs no new window (or no window at all), else
     * returns the window search, to be run in slices with {@link WindowSearch#run} and completed with
     * {@link #finish}.
     */
    public Started begin(Request r) {
        long goal = r.goal() >= firstData && r.goal() < end ? r.goal() : -1;
        WindowAsk ask = r.window();
        if (ask == null) return new Started(allocateWithoutWindow(r, goal), null);
        Window w = byFile.get(r.file());
        // The window being replaced: the file's window here, else the one its group last reported.
        long oldBlocks = ask.replacing() == null ? 0 : ask.replacing().blocks();
        long oldHit = ask.replacing() == null ? 0 : ask.replacing().hit();
        if (w != null && !w.provisional) {
            oldBlocks = w.blocks();
            oldHit = w.hit;
            if (goal < 0 || w.contains(goal)) {
                long from = goal >= 0 ? goal : w.start;
                if (goal >= 0 && w.end - goal < r.count()) tryToExtend(w, r.count() - (w.end - goal));
                Outcome o = claimIn(w, from, r.wanted(), ask.goalBlocks());
                if (o != null) return new Started(o, null);
            }
            removeWindow(w); // exhausted, or the goal moved away: book a new one (ext3 drops the old first)
        }
        int size = policy.nextWindowBlocks(ask.goalBlocks(), oldHit, oldBlocks, r.count(), (int) dataBlocks());
        if (size <= 0) size = Math.max(1, r.count());
        long from = policy.windowSearchStart(goal, size, this);
        if (from < firstData || from >= end) from = firstData;
        if (stripeBlocks > 1 && (goal < 0 || r.newRun())) from = alignedStart(from, size);
        return new Started(null, new WindowSearch(r, goal, size, from));
    }

    /** Completes a request whose window search is done. */
    public Outcome finish(WindowSearch s) {
        if (!s.done()) throw new IllegalStateException("window search still running");
        if (s.window == null) return new Outcome(-1, 0, new NoWindow(s.size));
        Window w = s.window;
        long from = s.goal >= 0 && w.contains(s.goal) ? s.goal : w.start;
        Outcome o = claimIn(w, from, s.request.wanted(), s.size);
        // The search confirmed a free block in the window within this same message.
        if (o == null) throw new IllegalStateException("window " + w.extent() + " booked without a free block");
        return o;
    }

    /**
     * ext3_try_to_allocate restricted to a window: the first free block from {@code from}, then its free
     * neighbours up to {@code count}; null when the window has no free block left.
     */
    private Outcome claimIn(Window w, long from, int count, int windowGoalBlocks) {
        int f = bitmap.nextFree(rel(Math.max(from, w.start)), rel(w.end));
        if (f < 0) return null;
        int n = bitmap.claimRun(f, (int) Math.min(count, w.end - abs(f)));
        changed(f, n, true);
        w.hit += n;
        return new Outcome(abs(f), n, new Held(windowGoalBlocks, w.blocks(), w.hit));
    }

    /** ext3 try_to_extend_reservation: grow the window's end, never into the next window or out of the group. */
    private void tryToExtend(Window w, long blocks) {
        Map.Entry<Long, Window> next = windows.higherEntry(w.start);
        long limit = next == null ? end : next.getValue().start;
        w.end = Math.min(limit, w.end + blocks);
    }

    /** No window (ext3 noreservation, or the last pass before "no space"): first fit from the goal. */
    private Outcome allocateWithoutWindow(Request r, long goal) {
        long from = goal >= 0 ? goal : firstData;
        int f = bitmap.nextFree(rel(from), rel(end));
        if (f < 0 && from > firstData) f = bitmap.nextFree(rel(firstData), rel(from));
        if (f < 0) return new Outcome(-1, 0, null);
        if (goal < 0 || abs(f) != goal) {
            // ext3: step back up to 7 blocks so the run starts at the beginning of its free gap.
            int floor = rel(Math.max(from, firstData));
            for (int i = 0; i < 7 && f > floor && !bitmap.isUsed(f - 1); i++) f--;
        }
        int n = bitmap.claimRun(f, r.count());
        changed(f, n, true);
        return new Outcome(abs(f), n, null);
    }

    /** First stripe-aligned block at or after {@code from} with a free stripe-long run (or any free block). */
    private long alignedStart(long from, int size) {
        int align = stripeBlocks;
        int offset = (int) Math.floorMod(start, (long) align);
        int p = bitmap.nextAlignedFree(rel(from), rel(end), align, offset, Math.min(align, size));
        return p < 0 ? from : abs(p);
    }

    /**
     * alloc_new_reservation in bounded slices. While it runs, its candidate window is booked as
     * provisional, so other searches do not take it, and a request aimed at the space it may slide
     * into ({@link #contends}) should wait until it is done.
     */
    public final class WindowSearch {
        /**
         * What one slide of the window costs against a slice's word budget. Booking the next candidate (a
         * gap search among the booked windows and two tree updates) costs some hundreds of times a bitmap
         * word's scan ({@code bench stall} measures both: docs/perf/stall.md), so a budget of words alone let
         * one message run a whole 2,000-slide search: the stretch is only 500 words long. Charged as 16
         * words, a default slice of 512 words makes at most 32 slides.
         */
        static final int SLIDE_WORDS = 16;
        final Request request;
        final long goal;
        final int size;
        private long from;
        private Window candidate;
        private int scan; // group-relative bit the bitmap scan resumes at
        private long provisionalFrom = Long.MAX_VALUE;
        private boolean done;
        Window window; // the confirmed window, or null when the group has none to give

        WindowSearch(Request request, long goal, int size, long from) {
            this.request = request;
            this.goal = goal;
            this.size = size;
            this.from = from;
        }

        public boolean done() {
            return done;
        }

        public int windowBlocks() {
            return size;
        }

        /**
         * Runs one slice of at most {@code maxWords} bitmap words (summary words included), sliding the
         * window as often as the budget allows; with {@code toEnd}, runs to the end whatever it costs.
         *
         * @return true when done
         */
        public boolean run(int maxWords, boolean toEnd) {
            if (done) return true;
            if (candidate == null && !book(from)) return true;
            long budgetEnd = bitmap.wordsExamined() + maxWords;
            while (true) {
                int left = (int) Math.max(1, Math.min(Integer.MAX_VALUE, budgetEnd - bitmap.wordsExamined()));
                int r = bitmap.nextFreeSliced(scan, rel(end), toEnd ? Integer.MAX_VALUE : left);
                if (Bitmap.exhausted(r)) {
                    scan = Bitmap.resumeAt(r);
                    return false;
                }
                windows.remove(candidate.start);
                if (r == Bitmap.NOT_FOUND) {
                    candidate = null;
                    done = true;
                    return true;
                }
                long free = abs(r);
                if (free < candidate.end) {
                    candidate.provisional = false;
                    candidate.hit = 0;
                    windows.put(candidate.start, candidate);
                    byFile.put(request.file(), candidate);
                    window = candidate;
                    done = true;
                    return true;
                }
                // The window slides to where free space is; the next candidate is booked at once, so
                // the space stays provisional between slices. The slice goes on while its budget lasts.
                if (!book(free)) return true;
                budgetEnd -= SLIDE_WORDS;
                if (!toEnd && bitmap.wordsExamined() >= budgetEnd) return false;
            }
        }

        private boolean book(long at) {
            candidate = findReservable(request.file(), at, size);
            if (candidate == null) {
                done = true;
                return false;
            }
            candidate.provisional = true;
            windows.put(candidate.start, candidate);
            scan = rel(candidate.start);
            provisionalFrom = candidate.start;
            return true;
        }

        /**
         * Whether a request aimed at {@code goal} must wait for this search: it targets the space at or
         * after the provisional window, which the window may still slide into.
         */
        public boolean contends(long goal) {
            return !done && goal >= provisionalFrom && goal < end;
        }

        /** Drops the provisional window (the actor is stopping). */
        void abandon() {
            if (candidate != null && !done) windows.remove(candidate.start);
            done = true;
        }
    }

    /**
     * find_next_reservable_window: the first gap of {@code size} blocks at or after {@code from} between
     * booked windows, clipped to the group; null when none starts inside the group.
     */
    private Window findReservable(long file, long from, int size) {
        long cur = Math.max(from, firstData);
        Map.Entry<Long, Window> before = windows.floorEntry(cur);
        if (before != null && before.getValue().end > cur) cur = before.getValue().end;
        for (Window w : windows.tailMap(cur, true).values()) {
            if (cur + size <= w.start) break;
            cur = Math.max(cur, w.end);
        }
        if (cur >= end) return null;
        return new Window(file, cur, Math.min(cur + size, end));
    }

    private void removeWindow(Window w) {
        windows.remove(w.start);
        byFile.remove(w.file);
    }

    /** Frees a file's unused preallocation. */
    public AllocationException unclaim(Extent e) {
        return free(List.of(e));
    }

    /**
     * After a fault in code that works on this group (a bug, or a policy that threw): checks the bitmap,
     * which every change validates before it writes, rebuilds the run index from it, and drops every
     * reservation window, which are hints
     * that files rebuild on their next allocation (as after an ext3 remount).
     *
     * @throws IllegalStateException when the bitmap itself is inconsistent (then nothing can be trusted)
     */
    public void recoverAfterFault() {
        bitmap.checkConsistency();
        runs.rebuild(bitmap); // the fault may have come between a bitmap change and its index update
        windows.clear();
        byFile.clear();
    }

    /**
     * Switches to {@code next} at a message boundary: windows booked under the old policy are given back
     * (files book new ones under the new policy); a window search still running finishes as it started.
     */
    public void usePolicy(AllocationPolicy next) {
        policy = next;
        windows.values().removeIf(w -> !w.provisional);
        byFile.values().removeIf(w -> !w.provisional);
    }

    /** Makes the next {@link #claimExtents} throw {@code fault}, as a bug would: for fault-injection tests. */
    void injectFaultInNextClaim(RuntimeException fault) {
        injectedFault = fault;
    }

    /** ext3_discard_reservation: drop the file's window here, if it has one. */
    public void discardWindow(long file) {
        Window w = byFile.get(file);
        if (w != null && !w.provisional) removeWindow(w);
    }

    // ---- extents (BlueStore-style allocate / release) -----------------------------------------------

    /**
     * What an extent allocation asks of one group: up to {@code wantBlocks} as extents that start on an
     * {@code alignBlocks} boundary (absolute), are multiples of {@code unitBlocks} and at most
     * {@code maxExtentBlocks} long (0 = no limit); {@code hint} (absolute, or -1) is where the caller
     * would like them, used only to choose between runs of equal length. With {@code honourWindows},
     * other files' windows are left alone. With {@code wholeOnly}, the group hands out only whole pieces
     * (each {@code min(remaining, maxExtentBlocks)} from one free run) and never splits one to serve part
     * of it, and then, when {@code runsBelowBlocks > 0}, only from runs shorter than that (the walk's
     * tightest fits first).
     */
    public record ExtentClaim(long wantBlocks, int unitBlocks, long maxExtentBlocks, int alignBlocks, long hint,
                              boolean honourWindows, boolean wholeOnly, long runsBelowBlocks) {
        public ExtentClaim(long wantBlocks, int unitBlocks, long maxExtentBlocks, int alignBlocks, long hint,
                           boolean honourWindows) {
            this(wantBlocks, unitBlocks, maxExtentBlocks, alignBlocks, hint, honourWindows, false, 0);
        }
    }

    /**
     * Claims what {@code c} asks for, in as few extents as this group allows. Each piece ({@code
     * min(remaining, maxExtentBlocks)} blocks) comes whole from the smallest free run that holds it (best
     * fit: large runs are not chipped while a smaller one will do, and holes left by frees are filled
     * first); between runs of that length, the one holding the hint (the end of the previous piece for
     * the pieces after the first), else the lowest address. When no run holds the piece (and the claim is
     * not {@code wholeOnly}), the longest usable run is taken, and the search starts again for what is
     * left. Answers the extents claimed (possibly fewer blocks than wanted, possibly none).
     */
    public List<Extent> claimExtents(ExtentClaim c) {
        if (injectedFault != null) {
            RuntimeException e = injectedFault;
            injectedFault = null;
            throw e;
        }
        List<Extent> out = new ArrayList<>();
        long remaining = c.wantBlocks();
        long cap = c.maxExtentBlocks() > 0 ? c.maxExtentBlocks() : Long.MAX_VALUE;
        long below = c.wholeOnly() && c.runsBelowBlocks() > 0 ? c.runsBelowBlocks() : Long.MAX_VALUE;
        int unit = c.unitBlocks();
        int align = c.alignBlocks();
        long hint = c.hint();
        while (remaining > 0) {
            long piece = Math.min(remaining, cap);
            // Several whole pieces of one length, the caller's hint (if any) served by the first: one walk.
            if (remaining >= 2 * piece && piece <= dataBlocks() && (hint < 0 || !out.isEmpty())) {
                long got = carve(piece, remaining / piece, below, align, c.honourWindows(), out);
                if (got > 0) {
                    remaining -= got;
                    hint = out.get(out.size() - 1).end();
                    continue;
                }
            }
            long at = piece <= dataBlocks() ? findFit(piece, hint, below, align, c.honourWindows()) : -1;
            if (at < 0) {
                if (c.wholeOnly()) break;
                long[] longest = longestUsable(unit, align, c.honourWindows());
                if (longest == null) break;
                at = longest[0];
                piece = Math.min(piece, longest[1]);
            }
            claimBits(rel(at), (int) piece);
            out.add(new Extent(at, piece));
            remaining -= piece;
            hint = at + piece;
        }
        return out;
    }

    /**
     * Claims up to {@code count} whole pieces of {@code piece} blocks in one best-fit walk, each run carved from
     * its start while pieces fit: what as many calls of {@link #findFit} would claim (after a piece is cut from the
     * smallest run that holds it, what is left of that run is the smallest that may hold the next), without a walk
     * per piece. Answers the blocks claimed.
     */
    private long carve(long piece, long count, long below, int align, boolean honourWindows, List<Extent> out) {
        long took = 0, want = piece * count;
        for (FreeRunIndex.Run r : runs.bySizeFrom((int) piece)) {
            if (r.length() >= below) break;
            long from = abs(r.start()), to = abs(r.end());
            while (took < want) {
                long at = fitIn(from, to, piece, align, honourWindows);
                if (at < 0) break;
                claimBits(rel(at), (int) piece);
                out.add(new Extent(at, piece));
                took += piece;
                from = at + piece;
            }
            if (took >= want) break;
        }
        return took;
    }

    /**
     * Where a piece of {@code blocks} fits whole in the smallest run shorter than {@code below}, or -1.
     * Among runs of that length the one holding {@code hint} wins, and then the piece starts at the hint
     * when it fits from there; otherwise the lowest address.
     */
    private long findFit(long blocks, long hint, long below, int align, boolean honourWindows) {
        for (FreeRunIndex.Run r : runs.bySizeFrom((int) blocks)) {
            if (r.length() >= below) break;
            long at = fitIn(abs(r.start()), abs(r.end()), blocks, align, honourWindows);
            if (at < 0) continue;
            FreeRunIndex.Run h = hint >= firstData && hint < end ? runs.runAt(rel(hint)) : null;
            if (h != null && h.length() == r.length()) {
                long there = fitIn(hint, abs(h.end()), blocks, align, honourWindows);
                if (there < 0) there = fitIn(abs(h.start()), abs(h.end()), blocks, align, honourWindows);
                if (there >= 0) return there;
            }
            return at;
        }
        return -1;
    }

    /** The first aligned start in {@code [from, to)} of {@code blocks} blocks clear of windows, or -1. */
    private long fitIn(long from, long to, long blocks, int align, boolean honourWindows) {
        long at = alignUp(from, align);
        while (at + blocks <= to) {
            Window w = honourWindows ? windowOverlapping(at, blocks) : null;
            if (w == null) return at;
            at = alignUp(w.end, align);
        }
        return -1;
    }

    /**
     * The longest piece any free run offers: {@code {start, blocks}} with an aligned start, clear of
     * windows, a multiple of the unit; null when no run offers one unit.
     */
    private long[] longestUsable(int unit, int align, boolean honourWindows) {
        long[] best = null;
        for (FreeRunIndex.Run r : runs.bySizeDescending()) {
            if (r.length() < unit || best != null && r.length() <= best[1]) break;
            long a = abs(r.start()), b = abs(r.end());
            long gap = a;
            if (honourWindows) {
                Map.Entry<Long, Window> before = windows.floorEntry(a);
                if (before != null && before.getValue().end > gap) gap = before.getValue().end;
                for (Window w : windows.subMap(a, false, b, false).values()) {
                    best = better(best, gap, w.start, unit, align);
                    gap = Math.max(gap, w.end);
                }
            }
            best = better(best, gap, b, unit, align);
        }
        return best;
    }

    private static long[] better(long[] best, long from, long to, int unit, int align) {
        long at = alignUp(from, align);
        long blocks = to - at;
        blocks -= blocks % unit;
        if (blocks < unit || best != null && blocks <= best[1]) return best;
        return new long[] {at, blocks};
    }

    private static long alignUp(long block, int align) {
        long rem = Math.floorMod(block, (long) align);
        return rem == 0 ? block : block + (align - rem);
    }

    private Window windowOverlapping(long at, long blocks) {
        Map.Entry<Long, Window> e = windows.floorEntry(at + blocks - 1);
        if (e != null && e.getValue().end > at) return e.getValue();
        return null;
    }

    /** Checks that every extent may be freed here; null when all may, else the reason. Changes nothing. */
    public AllocationException checkFree(List<Extent> extents) {
        for (Extent e : extents) {
            if (e.start() < start || e.end() > end)
                return new AllocationException.OutOfRange("extent " + e + " is not inside group " + group
                        + " [" + start + ", " + end + ")");
            if (e.start() < firstData)
                return new AllocationException.SystemZone("extent " + e + " touches the system zone of group "
                        + group + " [" + start + ", " + firstData + ")");
            int free = bitmap.firstFreeIn(rel(e.start()), (int) e.blocks());
            if (free >= 0)
                return new AllocationException.DoubleFree("block " + abs(free) + " of extent " + e + " is already free");
        }
        return null;
    }

    /** Frees the extents, all or none. */
    public AllocationException free(List<Extent> extents) {
        AllocationException bad = checkFree(extents);
        if (bad != null) return bad;
        for (Extent e : extents) {
            bitmap.setFree(rel(e.start()), (int) e.blocks());
            changed(rel(e.start()), (int) e.blocks(), false);
        }
        return null;
    }

    /** Free runs inside {@code [from, to)} clipped to the group, at most {@code max} of them. */
    public List<Extent> freeRuns(long from, long to, int max) {
        List<Extent> out = new ArrayList<>();
        long a = Math.max(from, start), b = Math.min(to, end);
        if (a >= b || max <= 0) return out;
        bitmap.forEachFreeRun(rel(a), rel(b), (s, len) -> {
            out.add(new Extent(abs(s), len));
            return out.size() < max;
        });
        return out;
    }
}
