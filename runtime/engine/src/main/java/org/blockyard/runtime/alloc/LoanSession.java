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
 * <p>What the session holds, each guarded by its lock:
 * <ul>
 * <li>{@code free}: lent and not handed out, pieces in {@link Magazines} by length. An allocation the loan can
 *     serve takes a piece of its length from here.</li>
 * <li>{@code held}: handed out by this session from its loan, and not released yet. A release of blocks all of
 *     which are here is served here: they go back to {@code free} (still booked to this session, so served again
 *     without a message) when {@link #keeps} says so, else to {@code returning}. A
 *     release that mixes them with other blocks frees the others through the allocator first, then these.</li>
 * <li>{@code returning}: given back (released, or loan returned) and on their way to their groups, which free
 *     them in their bitmaps in batches ({@link GroupActor.GiveBack}) and then drop them from here.</li>
 * </ul>
 * The groups' books name the session for every block in any of the three sets. A release that reaches a group
 * and touches lent blocks asks the session under its lock ({@link LoanBook#takeBack}): blocks in {@code held}
 * become ordinary allocations; blocks in {@code free} or {@code returning} are free, and the release is a
 * double free. After the session closed, blocks in no set were handed out before it closed.
 *
 * <p>Refills run ahead of need and never make the caller wait: when fewer than half a batch of pieces could
 * serve the size just asked, the session asks a group for a batch of pieces of that size, best-fit, and a group
 * that cannot give them all passes the rest of the walk on. A request the loan cannot serve takes the
 * allocator's own path at once.
 */
final class LoanSession implements AllocationSession {
    /** Groups one refill asks at most. */
    static final int MAX_HOPS = 8;
    /** Pieces one refill asks for at most. */
    static final int MAX_PIECES = 512;
    /** How long a call waits for a refill in flight at most before it takes the allocator's path. */
    static final long WAIT_BOUND_NANOS = 50_000_000L;

    private final long id;
    private final Thread owner;
    private final ActorBlockAllocator host;
    private final Loans loans;
    private final Geometry geometry;
    private final VolumeState volume;
    private final ReentrantLock lock = new ReentrantLock();

    // Guarded by lock.
    private final Magazines free = new Magazines();
    private final Intervals held;
    private final Intervals returning;
    private final Map<Integer, List<Extent>> unsent = new TreeMap<>();
    private int unsentExtents;
    private final BitSet groupsLent = new BitSet();
    private final Set<Long> refilling = new HashSet<>();
    /** Calls waiting for the refill of their length in flight, oldest first. */
    private final List<Waiting> waiting = new ArrayList<>();
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
        this.held = new Intervals(geometry);
        this.returning = new Intervals(geometry);
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
            long piece = maxExtentBlocks > 0 ? Math.min(wantBlocks, maxExtentBlocks) : wantBlocks;
            if (hint < 0 && refilling.contains(piece)) { // served when the refill arrives, not by a search of its own
                Waiting w = new Waiting(piece, wantBlocks, unitBlocks, maxExtentBlocks, System.nanoTime(),
                        new CompletableFuture<>());
                waiting.add(w);
                return w.answer();
            }
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
     * Frees {@code extents}, all handed out by this session: back into the loan in pieces {@link #keeps} takes,
     * the rest queued for its group. The caller holds the lock.
     */
    private void freeHere(List<Extent> extents) {
        long n = 0;
        for (Extent e : extents) {
            n += e.blocks();
            held.remove(e.start(), e.end());
            // Kept (still booked to this session: served again here) in pieces of the lengths its caller asks,
            // the longest first; what no such piece holds goes back to its group.
            long at = e.start(), left = e.blocks();
            while (left > 0) {
                long piece = keeps(left) ? left : free.askedAtMost(left);
                if (piece == 0 || !keeps(piece)) break;
                free.add(at, piece);
                at += piece;
                left -= piece;
            }
            if (left > 0) {
                returning.add(at, at + left);
                queue(geometry.groupOf(at), at == e.start() ? e : new Extent(at, left));
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
     * is a piece of the loan of exactly its length ({@link Magazines}); with a hint, the piece at the hint when the
     * loan holds one there, and each next piece right after the last, else the allocator's own path, which keeps
     * the hint's promise. A length asked for the second time is lent ahead in a batch of pieces when the loan holds
     * fewer than half a batch of it.
     */
    private List<Extent> fromLoan(long want, int unit, long maxExtent, long hint) {
        long cap = maxExtent > 0 ? maxExtent : Long.MAX_VALUE;
        long firstPiece = Math.min(want, cap);
        if (firstPiece > loanLimit()) return null;
        int align = ExtentWalk.alignment(geometry, unit);
        Magazines.Magazine m = free.of(firstPiece, true);
        List<Extent> got = take(want, cap, align, hint);
        int most = pieces(firstPiece);
        if (got == null && hint < 0 && m.asked > 0 && !m.scarce) m.batch = Math.min(2 * m.batch, most); // outran
        int batch = Math.min(m.batch, most);
        boolean first = m.asked++ == 0; // a length asked once borrows just what the call needs
        if ((!first || got == null) && m.aligned(align, batch / 2 + 1) <= batch / 2)
            refill(firstPiece, first ? (int) Math.min(most, (want + firstPiece - 1) / firstPiece) : batch, unit);
        return got;
    }

    /** The pieces for the request from the loan (booked as handed out), or null (nothing taken). */
    private List<Extent> take(long want, long cap, int align, long hint) {
        if (want <= cap) { // one piece: the common call
            Extent e = takePiece(want, align, hint);
            if (e == null) return null;
            held.add(e.start(), e.end());
            volume.handedOut(want);
            return List.of(e);
        }
        List<Extent> got = new ArrayList<>();
        long at = hint;
        for (long left = want; left > 0; ) {
            long piece = Math.min(left, cap);
            Extent e = takePiece(piece, align, at);
            if (e == null) {
                for (Extent back : got) free.add(back.start(), back.blocks());
                return null;
            }
            got.add(e);
            at = at >= 0 ? e.end() : -1;
            left -= piece;
        }
        for (Extent e : got) held.add(e.start(), e.end());
        volume.handedOut(want);
        return List.copyOf(got);
    }

    private Extent takePiece(long piece, int align, long at) {
        if (at < 0) return free.take(piece, align);
        return at % align == 0 ? free.takeAt(at, piece) : null;
    }

    /**
     * Whether a released piece of {@code length} blocks goes back into the loan: its length is one the caller asks
     * for, the loan holds fewer than two batches of it, and at most twice the {@link #budget()} free in all.
     */
    private boolean keeps(long length) {
        if (length > loanLimit() || free.blocks() + length > 2 * budget()) return false;
        Magazines.Magazine m = free.of(length, false);
        return m != null && m.asked > 0 && m.count < 2 * m.batch;
    }

    /** The longest piece a session borrows: larger requests take the allocator's own path. */
    private long loanLimit() {
        return Math.min(loans.loanBlocks(), geometry.blocksPerGroup() / 2);
    }

    /** The most a session borrows ahead on any volume: the ceiling of its {@link #budget()}. */
    private long keepLimit() {
        return 4 * loans.loanBlocks();
    }

    /**
     * The most this session borrows ahead: {@link #keepLimit()}, and at most an eighth of the volume's free
     * blocks shared among the open sessions, so a nearly full volume is not all on loan and a refill still finds
     * whole pieces. Released pieces may be kept up to twice this.
     */
    private long budget() {
        return Math.min(keepLimit(), volume.totalFreeBlocks() / (8L * Math.max(1, loans.count())));
    }

    private int pieces(long piece) {
        return (int) Math.max(1, Math.min(MAX_PIECES, loans.loanBlocks() / piece));
    }

    private void refill(long piece, int count, int unit) {
        long room = budget() - free.blocks();
        if (room < piece) return;
        count = (int) Math.min(count, room / piece);
        if (closed || !loans.lending() || !refilling.add(piece)) return;
        Magazines.Magazine m = free.of(piece, true);
        m.asking = count;
        m.brought = 0;
        long want = piece * count;
        ExtentWalk walk = new ExtentWalk(volume, want, unit, piece, -1, geometry.groupStart(home)).wholePiecesOnly();
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
        List<Waiting> left;
        lock.lock();
        try {
            refilling.remove(piece);
            Magazines.Magazine m = free.of(piece, false);
            if (m != null) m.scarce = m.brought < m.asking;
            left = unwait(w -> w.piece() == piece);
        } finally {
            lock.unlock();
        }
        viaAllocator(left);
    }

    /**
     * Calls that waited longer than {@link #WAIT_BOUND_NANOS} for a refill take the allocator's path: a refill
     * lost with a stopped group leaves no call unanswered. For the sweeper.
     */
    void expireWaits() {
        long now = System.nanoTime();
        List<Waiting> late;
        lock.lock();
        try {
            late = unwait(w -> now - w.since() > WAIT_BOUND_NANOS);
        } finally {
            lock.unlock();
        }
        viaAllocator(late);
    }

    /** Removes and answers the waiting calls {@code which} picks; the caller holds the lock. */
    private List<Waiting> unwait(java.util.function.Predicate<Waiting> which) {
        if (waiting.isEmpty()) return List.of();
        List<Waiting> out = new ArrayList<>();
        for (java.util.Iterator<Waiting> it = waiting.iterator(); it.hasNext(); ) {
            Waiting w = it.next();
            if (which.test(w)) {
                out.add(w);
                it.remove();
            }
        }
        return out;
    }

    /** Serves waiting calls the loan can serve now; answers them once the lock is released. Holds the lock. */
    private List<Runnable> serveWaiting() {
        if (waiting.isEmpty()) return List.of();
        List<Runnable> answers = new ArrayList<>();
        for (java.util.Iterator<Waiting> it = waiting.iterator(); it.hasNext(); ) {
            Waiting w = it.next();
            long cap = w.maxExtent() > 0 ? w.maxExtent() : Long.MAX_VALUE;
            List<Extent> got = take(w.want(), cap, ExtentWalk.alignment(geometry, w.unit()), -1);
            if (got != null) {
                it.remove();
                answers.add(() -> w.answer().complete(got));
            }
        }
        return answers;
    }

    private void viaAllocator(List<Waiting> calls) {
        for (Waiting w : calls)
            host.allocate(w.want(), w.unit(), w.maxExtent(), -1).whenComplete((got, e) -> {
                if (e != null) w.answer().completeExceptionally(e instanceof java.util.concurrent.CompletionException
                        && e.getCause() != null ? e.getCause() : e);
                else w.answer().complete(got);
            });
    }

    /** A call waiting for the refill of its length. */
    private record Waiting(long piece, long want, int unit, long maxExtent, long since,
                           CompletableFuture<List<Extent>> answer) {}

    /** Whether a group should lend to this session now (it may be closed by the time the group asks it). */
    boolean mayBorrow() {
        return loans.lending();
    }

    /** Group {@code g} lent {@code extents}; false (and nothing taken) when the session is closed. */
    boolean lent(int g, List<Extent> extents) {
        List<Runnable> answers;
        lock.lock();
        try {
            if (closed) return false;
            for (Extent e : extents) free.add(e.start(), e.blocks());
            if (!extents.isEmpty()) free.of(extents.get(0).blocks(), true).brought += extents.size();
            groupsLent.set(g);
            home = g;
            answers = serveWaiting();
        } finally {
            lock.unlock();
        }
        answers.forEach(Runnable::run);
        return true;
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
        List<Waiting> left;
        lock.lock();
        try {
            if (closed) return CompletableFuture.completedFuture(0L);
            closed = true;
            left = unwait(w -> true);
            returnFree();
            held.drain(); // handed out: ordinary allocations from now on, as the groups will see at the ending
            flush(true, acks);
        } finally {
            lock.unlock();
        }
        loans.closed(this);
        viaAllocator(left); // accepted while open: answered as ordinary allocations
        return Loans.sum(acks);
    }

    /** Marks the session closed without giving anything back: the allocator is shutting down. */
    void abandon() {
        List<Waiting> left;
        lock.lock();
        try {
            closed = true;
            left = unwait(w -> true);
        } finally {
            lock.unlock();
        }
        for (Waiting w : left) w.answer().completeExceptionally(closedError());
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
