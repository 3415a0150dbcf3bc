package org.blockyard.runtime.alloc;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.AllocationSession;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;

/**
 * A caller's session over the actors: a loan of free runs that group actors cut best-fit from their run
 * index and booked in their {@link LoanBook}, served on the caller's thread.
 *
 * <p>What the session holds, each a set of block ranges guarded by its lock:
 * <ul>
 * <li>{@code free}: lent and not handed out. An allocation the loan can serve takes the best fit from here.</li>
 * <li>{@code held}: handed out by this session from its loan, and not released yet. A release of blocks all of
 *     which are here is served here: they go back to {@code free} (still booked to this session, so served again
 *     without a message) while the loan keeps less than {@link #keepLimit()} free, else to {@code returning}. A
 *     release that mixes them with other blocks frees the others through the allocator first, then these.</li>
 * <li>{@code returning}: given back (released, or loan returned) and on their way to their groups, which free
 *     them in their bitmaps in batches ({@link GroupActor.GiveBack}) and then drop them from here.</li>
 * </ul>
 * The groups' books name the session for every block in any of the three sets. A release that reaches a group
 * and touches lent blocks asks the session under its lock ({@link LoanBook#takeBack}): blocks in {@code held}
 * become ordinary allocations; blocks in {@code free} or {@code returning} are free, and the release is a
 * double free. After the session closed, blocks in no set were handed out before it closed.
 *
 * <p>Refills run ahead of need and never make the caller wait: when fewer than half a batch of runs could
 * serve the size just asked, the session asks a group for a batch of pieces of that size, best-fit, and a group
 * that cannot give them all passes the rest of the walk on. A request the loan cannot serve takes the
 * allocator's own path at once.
 */
final class LoanSession implements AllocationSession {
    /** Groups one refill asks at most. */
    static final int MAX_HOPS = 8;
    /** Pieces one refill asks for at most. */
    static final int MAX_PIECES = 512;
    /** Request sizes remembered, the most recent ones. */
    static final int SIZES = 32;

    private final long id;
    private final Thread owner;
    private final ActorBlockAllocator host;
    private final Loans loans;
    private final Geometry geometry;
    private final VolumeState volume;
    private final ReentrantLock lock = new ReentrantLock();

    // Guarded by lock.
    private final Intervals free;
    private final Intervals held;
    private final Intervals returning;
    private final Map<Integer, List<Extent>> unsent = new TreeMap<>();
    private int unsentExtents;
    private final BitSet groupsLent = new BitSet();
    private final Set<Long> refilling = new HashSet<>();
    /** How often each recent request size was asked; access order, at most {@value #SIZES}. */
    private final Map<Long, Integer> sizes = new java.util.LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Integer> eldest) {
            return size() > SIZES;
        }
    };
    private int home;
    private boolean closed;
    private long localCalls, messageCalls;

    private volatile long lastUse = System.nanoTime();

    LoanSession(long id, Thread owner, ActorBlockAllocator host, Loans loans, int home) {
        this.id = id;
        this.owner = owner;
        this.host = host;
        this.loans = loans;
        this.geometry = host.geometry();
        this.volume = host.volume();
        this.free = new Intervals(geometry, true, false); // pieces keep their lent length
        this.held = new Intervals(geometry, false);
        this.returning = new Intervals(geometry, false);
        this.home = home;
    }

    long id() {
        return id;
    }

    Thread owner() {
        return owner;
    }

    long lastUse() {
        return lastUse;
    }

    void lock() {
        lock.lock();
    }

    void unlock() {
        lock.unlock();
    }

    // ---- the caller's calls ---------------------------------------------------------------------------

    @Override
    public CompletionStage<List<Extent>> allocate(long wantBlocks, int unitBlocks, long maxExtentBlocks, long hint) {
        lastUse = System.nanoTime();
        try {
            ExtentChecks.allocate(geometry, wantBlocks, unitBlocks, maxExtentBlocks, hint);
        } catch (AllocationException e) {
            return CompletableFuture.failedFuture(e);
        }
        lock.lock();
        try {
            if (closed) return CompletableFuture.failedFuture(closedError());
            List<Extent> got = fromLoan(wantBlocks, unitBlocks, maxExtentBlocks, hint);
            if (got != null) {
                localCalls++;
                return CompletableFuture.completedFuture(got);
            }
            messageCalls++;
        } finally {
            lock.unlock();
        }
        return host.allocate(wantBlocks, unitBlocks, maxExtentBlocks, hint);
    }

    @Override
    public CompletionStage<Void> release(List<Extent> extents) {
        lastUse = System.nanoTime();
        if (extents == null || extents.isEmpty()) return isClosed()
                ? CompletableFuture.failedFuture(closedError()) : CompletableFuture.completedFuture(null);
        List<Extent> sorted;
        try {
            sorted = ExtentChecks.release(geometry, extents);
        } catch (AllocationException e) {
            return CompletableFuture.failedFuture(e);
        }
        List<Extent> mine = new ArrayList<>(sorted.size()), others = new ArrayList<>();
        lock.lock();
        try {
            if (closed) return CompletableFuture.failedFuture(closedError());
            for (Extent e : sorted) (held.covers(e.start(), e.end()) ? mine : others).add(e);
            if (others.isEmpty()) {
                freeHere(mine);
                localCalls++;
                return CompletableFuture.completedFuture(null);
            }
            messageCalls++;
        } finally {
            lock.unlock();
        }
        if (mine.isEmpty()) return host.release(sorted); // this session's blocks among them: LoanBook.takeBack
        // The part handed out here is freed here once the rest was: a refused release frees nothing.
        return host.release(others).thenRun(() -> {
            lock.lock();
            try {
                if (closed) throw new java.util.concurrent.CompletionException(closedError());
                for (Extent e : mine)
                    if (!held.covers(e.start(), e.end())) throw new java.util.concurrent.CompletionException(
                            new AllocationException.DoubleFree("blocks " + e + " were released meanwhile"));
                freeHere(mine);
            } finally {
                lock.unlock();
            }
        });
    }

    /**
     * Frees {@code extents}, all handed out by this session: back into the loan while it keeps less than
     * {@link #keepLimit()} free, else queued for their groups. The caller holds the lock.
     */
    private void freeHere(List<Extent> extents) {
        long n = 0;
        for (Extent e : extents) n += e.blocks();
        boolean keep = free.blocks() + n <= keepLimit();
        for (Extent e : extents) {
            held.remove(e.start(), e.end());
            if (keep) { // still booked to this session: served again here
                free.add(e.start(), e.end());
            } else {
                returning.add(e.start(), e.end());
                queue(geometry.groupOf(e.start()), e);
            }
        }
        volume.handedOut(-n);
        if (unsentExtents >= loans.freeBatch()) flush(false, null);
    }

    @Override
    public void close() {
        CompletableFuture<Long> back = closeAsync();
        try {
            back.get(loans.closeWait().toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            // The groups are closed or slow; what was on loan goes back when they get to it.
        }
    }

    // ---- serving from the loan -----------------------------------------------------------------------

    /**
     * The extents for the request from the loan, or null (nothing taken) when the loan cannot serve it. Each piece
     * is a run of the loan of exactly its length (a request is never carved out of a run lent for a larger size,
     * where the allocator's own best fit would have placed it elsewhere); with a hint, the piece at the hint when a
     * run of the loan holds it there, and each next piece right after the last, else the allocator's own path,
     * which keeps the hint's promise. A size asked for the second time is lent ahead in a batch of pieces when
     * the loan holds fewer than half a batch of it.
     */
    private List<Extent> fromLoan(long want, int unit, long maxExtent, long hint) {
        long cap = maxExtent > 0 ? maxExtent : Long.MAX_VALUE;
        long firstPiece = Math.min(want, cap);
        int align = ExtentWalk.alignment(geometry, unit);
        List<Extent> got = new ArrayList<>(1);
        long at = hint;
        for (long left = want; left > 0; ) {
            long piece = Math.min(left, cap);
            Extent e = at >= 0 ? free.takeAt(at, piece, align) : free.takeBestFit(piece, align, piece);
            if (e == null) {
                for (Extent back : got) free.add(back.start(), back.end());
                got = null;
                break;
            }
            got.add(e);
            at = e.end();
            left -= piece;
        }
        boolean seen = sizes.merge(firstPiece, 1, Integer::sum) >= 2;
        if (seen && firstPiece <= loanLimit()) {
            int k = pieces(firstPiece);
            if (free.rangesOf(firstPiece, align, k / 2 + 1) <= k / 2) refill(firstPiece, unit, align);
        }
        if (got == null) return null;
        long n = 0;
        for (Extent e : got) {
            held.add(e.start(), e.end());
            n += e.blocks();
        }
        volume.handedOut(n);
        return got.size() == 1 ? List.of(got.get(0)) : List.copyOf(got);
    }

    /** The longest piece a session borrows: larger requests take the allocator's own path. */
    private long loanLimit() {
        return Math.min(loans.loanBlocks(), geometry.blocksPerGroup() / 2);
    }

    /** The most a session keeps free on loan of what its caller released: beyond it, releases go back to the groups. */
    private long keepLimit() {
        return 4 * loans.loanBlocks();
    }

    private int pieces(long piece) {
        return (int) Math.max(1, Math.min(MAX_PIECES, loans.loanBlocks() / piece));
    }

    private void refill(long piece, int unit, int align) {
        if (closed || !loans.lending() || free.blocks() >= 2 * loans.loanBlocks() || !refilling.add(piece)) return;
        long want = piece * pieces(piece);
        ExtentWalk walk = new ExtentWalk(volume, want, unit, piece, -1, geometry.groupStart(home));
        host.groupActors().get(home).tell(new GroupActor.Lend(this, walk, piece, false, 0));
    }

    // ---- what group actors call ----------------------------------------------------------------------

    /**
     * The next hop of a refill, on the actor that served the last one: the walk's next group is asked, or the
     * refill is over.
     */
    void continueLend(GroupActor.Lend m) {
        int g = m.hops() < MAX_HOPS && m.walk().remaining() > 0 && !isClosed() ? m.walk().next() : -1;
        if (g >= 0) {
            host.groupActors().get(g).tell(new GroupActor.Lend(this, m.walk(), m.piece(), true, m.hops() + 1));
            return;
        }
        refillOver(m.piece());
    }

    /** The refill for pieces of {@code piece} blocks is over: the next one may start. */
    void refillOver(long piece) {
        lock.lock();
        try {
            refilling.remove(piece);
        } finally {
            lock.unlock();
        }
    }

    /** Whether a group should lend to this session now (it may be closed by the time the group asks it). */
    boolean mayBorrow() {
        return loans.lending();
    }

    /** Group {@code g} lent {@code extents}; false (and nothing taken) when the session is closed. */
    boolean lent(int g, List<Extent> extents) {
        lock.lock();
        try {
            if (closed) return false;
            for (Extent e : extents) free.add(e.start(), e.end());
            groupsLent.set(g);
            home = g;
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** Whether no block of {@code [from, to)} is free or on its way back. The caller holds the lock. */
    boolean handedOutOrLetGo(long from, long to) {
        return !free.intersects(from, to) && !returning.intersects(from, to);
    }

    /** A group took back {@code [from, to)}, handed out: an ordinary allocation now. The caller holds the lock. */
    void takenBack(long from, long to) {
        held.remove(from, to);
    }

    /** Group took back what it was given back; called by the group under no lock. */
    void arrived(List<Extent> extents) {
        lock.lock();
        try {
            for (Extent e : extents) returning.remove(e.start(), e.end());
        } finally {
            lock.unlock();
        }
    }

    // ---- giving back ----------------------------------------------------------------------------------

    private void queue(int g, Extent e) {
        unsent.computeIfAbsent(g, k -> new ArrayList<>()).add(e);
        unsentExtents++;
    }

    /**
     * Sends what is queued to its groups; with {@code ending}, every group that ever lent to the session is
     * told to forget it. Each give-back completes a future added to {@code acks} (when not null) with the
     * blocks it freed. The caller holds the lock.
     */
    private void flush(boolean ending, List<CompletableFuture<Long>> acks) {
        if (ending) for (int g = groupsLent.nextSetBit(0); g >= 0; g = groupsLent.nextSetBit(g + 1))
            unsent.computeIfAbsent(g, k -> new ArrayList<>());
        for (Map.Entry<Integer, List<Extent>> e : unsent.entrySet()) {
            CompletableFuture<Long> done = acks == null ? null : new CompletableFuture<>();
            if (done != null) acks.add(done);
            host.groupActors().get(e.getKey()).tell(new GroupActor.GiveBack(this, e.getValue(), ending, done));
        }
        unsent.clear();
        unsentExtents = 0;
    }

    /** Sends the frees queued, if any; for the sweeper, which skips a session whose thread holds the lock. */
    void flushIfQueued() {
        if (!lock.tryLock()) return;
        try {
            if (unsentExtents > 0) flush(false, null);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Gives back everything on loan (the session stays open and borrows again when asked); completes with the
     * blocks the groups freed, frees queued included.
     */
    CompletableFuture<Long> returnLoan() {
        List<CompletableFuture<Long>> acks = new ArrayList<>();
        lock.lock();
        try {
            if (closed) return CompletableFuture.completedFuture(0L);
            returnFree();
            flush(false, acks);
        } finally {
            lock.unlock();
        }
        return Loans.sum(acks);
    }

    /** Closes the session: everything on loan goes back, and the groups forget it. */
    CompletableFuture<Long> closeAsync() {
        List<CompletableFuture<Long>> acks = new ArrayList<>();
        lock.lock();
        try {
            if (closed) return CompletableFuture.completedFuture(0L);
            closed = true;
            returnFree();
            held.drain(); // handed out: ordinary allocations from now on, as the groups will see at the ending
            flush(true, acks);
        } finally {
            lock.unlock();
        }
        loans.closed(this);
        return Loans.sum(acks);
    }

    /** Marks the session closed without giving anything back: the allocator is shutting down. */
    void abandon() {
        lock.lock();
        try {
            closed = true;
        } finally {
            lock.unlock();
        }
    }

    private void returnFree() {
        for (Extent e : free.drain()) {
            returning.add(e.start(), e.end());
            queue(geometry.groupOf(e.start()), e);
        }
    }

    boolean isClosed() {
        lock.lock();
        try {
            return closed;
        } finally {
            lock.unlock();
        }
    }

    /** For checks and stats: blocks free on loan, handed out and on their way back; calls served here and not. */
    record Figures(long free, long held, long returning, long localCalls, long messageCalls, boolean closed) {}

    Figures figures() {
        lock.lock();
        try {
            return new Figures(free.blocks(), held.blocks(), returning.blocks(), localCalls, messageCalls, closed);
        } finally {
            lock.unlock();
        }
    }

    /** The ranges on loan and not handed out, for checks. */
    List<Extent> freeRanges() {
        lock.lock();
        try {
            return free.toList();
        } finally {
            lock.unlock();
        }
    }

    private static AllocationException closedError() {
        return new AllocationException.Closed("the session is closed");
    }

    @Override
    public String toString() {
        return "session " + id + " of " + owner.getName();
    }
}
