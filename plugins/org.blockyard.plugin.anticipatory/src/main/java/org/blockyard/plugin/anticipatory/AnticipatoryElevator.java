package org.blockyard.plugin.anticipatory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.blockyard.api.io.BlockRequest;
import org.blockyard.api.io.Dispatch;
import org.blockyard.api.io.Elevator;
import org.blockyard.api.io.IoRequest;
import org.blockyard.api.io.MergeKind;

/**
 * anticipatory, as Linux 2.6.20 {@code block/as-iosched.c}.
 *
 * <p><b>Data.</b> Requests are classed sync (every read, and writes flagged SYNC that reach it) or async.
 * Per class one list sorted by (start sector, seq) and one FIFO ordered by (expiry, seq); {@code nextRq[c]}
 * caches the request the one-way elevator would take next in class {@code c}. Per owner (Linux: the
 * {@code io_context} of the submitting task) an {@link OwnerHistory} holds requests queued and in flight and
 * the decayed means of think time and seek distance.
 *
 * <p><b>Batches.</b> Sync and async batches alternate. A sync batch lasts {@code read_batch_expire},
 * counted from the completion of its first request, and is kept re-armed while no async request waits; an
 * async batch lasts {@code write_batch_expire} or {@code writeBatchCount} requests, the count tuned after
 * each batch ({@link #updateWriteBatch}). On a change of batch nothing is issued until every request of the
 * previous batch has completed ({@code changedBatch}).
 *
 * <p><b>Anticipation.</b> After a sync request of owner P is issued, the elevator may hold the disk idle for
 * P's next request instead of seeking away:
 * <pre>
 *   OFF ──(dispatch finds no good request)──► WAIT_REQ    P's request still on the device
 *   WAIT_REQ ──(it completes)──► WAIT_NEXT                 wake-up asked for at anticStart + antic_expire
 *   WAIT_REQ / WAIT_NEXT ──(good request or timeout)──► FINISHED ──(next issue)──► OFF
 * </pre>
 * A request breaks anticipation ({@link #canBreakAnticipation}) when it is P's own, when P already has
 * requests queued or in flight, when it is sync and close to where the head is ({@link #closeRequest}),
 * or when P's mean think time (or, for an owner without history, the mean of new owners) exceeds
 * {@code antic_expire}. The timer is never armed here: {@link #dispatch} answers
 * {@link Dispatch#wakeAt} and handles the timeout when it is asked at or after that time.
 *
 * <p>Left out: the exit-probability rules ({@code exit_prob}, {@code exit_no_coop}) need to know that a
 * task has exited, and owners here never exit; {@code may_queue} has no counterpart in the queue.
 *
 * <p>Invariant: {@code entries} holds every request this elevator owns, each once, in exactly one sort list
 * and one FIFO of its class.
 */
final class AnticipatoryElevator implements Elevator {

    // ---- tunable defaults (Linux, HZ = 1000) ----
    static final long READ_EXPIRE_MS = 125;          // HZ/8
    static final long WRITE_EXPIRE_MS = 250;         // HZ/4
    static final long READ_BATCH_EXPIRE_MS = 500;    // HZ/2
    static final long WRITE_BATCH_EXPIRE_MS = 125;   // HZ/8
    static final long ANTIC_EXPIRE_MS = 6;           // HZ/150, "default around 6ms"

    /** Sort-list classes (Linux {@code REQ_ASYNC}, {@code REQ_SYNC}). */
    static final int ASYNC = 0, SYNC = 1;

    /** Backward seeks up to this many sectors are taken, at twice the cost of a forward one. */
    static final long MAXBACK_SECTORS = 1024 * 1024;
    static final int BACK_PENALTY = 2;
    /** Think times above this are counted as this ({@code MAX_THINKTIME = HZ/50}). */
    static final long MAX_THINKTIME_NANOS = 20_000_000L;

    enum Antic { OFF, WAIT_REQ, WAIT_NEXT, FINISHED }

    // ---- state ----
    private final long[] fifoExpireNanos = new long[2];
    private final long[] batchExpireNanos = new long[2];
    private final long anticExpireNanos;

    @SuppressWarnings("unchecked")
    private final TreeMap<Key, BlockRequest>[] sortList = new TreeMap[] {new TreeMap<>(), new TreeMap<>()};
    @SuppressWarnings("unchecked")
    private final TreeMap<Key, BlockRequest>[] fifoList = new TreeMap[] {new TreeMap<>(), new TreeMap<>()};
    private final IdentityHashMap<BlockRequest, Entry> entries = new IdentityHashMap<>();
    private final Map<Long, OwnerHistory> owners = new HashMap<>();

    private final BlockRequest[] nextRq = new BlockRequest[2];
    private final long[] lastSector = new long[2];
    private final long[] lastCheckFifoNanos = new long[2];

    private int batchDir = SYNC;
    private boolean changedBatch;
    private boolean newBatch;
    private long currentBatchExpiresNanos;
    private int writeBatchCount;
    private int currentWriteCount;
    private boolean writeBatchIdled;
    /** Requests this elevator issued that have not completed. */
    private int nrDispatched;

    private Antic antic = Antic.OFF;
    private long anticStartNanos;
    /** Owner of the last sync request issued: the one anticipated on; null after an async one. */
    private OwnerHistory anticOwner;
    /** Whether {@link #anticOwner}'s last request has completed. */
    private boolean ownerFinished;

    /** Think time and seek distance of owners on their first requests (fixed point, 1.0 = 256). */
    private long newThinkTotal, newThinkMeanNanos, newSeekTotal, newSeekMeanSectors;

    private long anticipations, anticipationsBroken, anticipationsTimedOut, fifoExpiredServed;
    private final long[] dispatched = new long[2];

    private record Key(long primary, long seq) implements Comparable<Key> {
        @Override
        public int compareTo(Key o) {
            int c = Long.compare(primary, o.primary);
            return c != 0 ? c : Long.compare(seq, o.seq);
        }
    }

    private static final class Entry {
        Key sortKey;
        Key fifoKey;
        final OwnerHistory owner;

        Entry(OwnerHistory owner) {
            this.owner = owner;
        }
    }

    /** Linux {@code struct as_io_context}: one owner's requests and history. Means are fixed point. */
    static final class OwnerHistory {
        final long id;
        int queued;
        int inFlight;
        boolean ioStarted;
        boolean ioRunning;
        long lastEndRequestNanos;
        long lastRequestPos;
        long thinkSamples, thinkTotal, thinkMeanNanos;
        long seekSamples, seekTotal, seekMeanSectors;

        OwnerHistory(long id) {
            this.id = id;
        }
    }

    AnticipatoryElevator(Map<String, Long> tunables) {
        fifoExpireNanos[SYNC] = ms(tunables.get(AnticipatoryElevatorFactory.READ_EXPIRE));
        fifoExpireNanos[ASYNC] = ms(tunables.get(AnticipatoryElevatorFactory.WRITE_EXPIRE));
        batchExpireNanos[SYNC] = ms(tunables.get(AnticipatoryElevatorFactory.READ_BATCH_EXPIRE));
        batchExpireNanos[ASYNC] = ms(tunables.get(AnticipatoryElevatorFactory.WRITE_BATCH_EXPIRE));
        anticExpireNanos = ms(tunables.get(AnticipatoryElevatorFactory.ANTIC_EXPIRE));
        // as_init_queue: batch_expire[ASYNC] / 10 requests, at least 2 (in jiffies = ms at HZ 1000)
        writeBatchCount = (int) Math.max(2, tunables.get(AnticipatoryElevatorFactory.WRITE_BATCH_EXPIRE) / 10);
    }

    private static long ms(long v) {
        return v * 1_000_000L;
    }

    // ---- helpers ----

    private static int cls(BlockRequest rq) {
        return rq.isSync() ? SYNC : ASYNC;
    }

    private OwnerHistory owner(long id) {
        return owners.computeIfAbsent(id, OwnerHistory::new);
    }

    private BlockRequest neighbour(BlockRequest rq, boolean higher) {
        Entry e = entries.get(rq);
        var n = higher ? sortList[cls(rq)].higherEntry(e.sortKey) : sortList[cls(rq)].lowerEntry(e.sortKey);
        return n == null ? null : n.getValue();
    }

    /** {@code as_choose_req}: the better of two requests of one class for a head at {@code lastSector}. */
    private BlockRequest choose(BlockRequest rq1, BlockRequest rq2) {
        if (rq1 == null || rq1 == rq2) return rq2;
        if (rq2 == null) return rq1;
        long last = lastSector[cls(rq1)];
        long s1 = rq1.sector(), s2 = rq2.sector();
        long d1 = 0, d2 = 0;
        boolean wrap1 = false, wrap2 = false;
        if (s1 >= last) d1 = s1 - last;
        else if (s1 + MAXBACK_SECTORS >= last) d1 = (last - s1) * BACK_PENALTY;
        else wrap1 = true;
        if (s2 >= last) d2 = s2 - last;
        else if (s2 + MAXBACK_SECTORS >= last) d2 = (last - s2) * BACK_PENALTY;
        else wrap2 = true;
        if (!wrap1 && wrap2) return rq1;
        if (wrap1 && !wrap2) return rq2;
        if (wrap1) return s1 <= s2 ? rq1 : rq2;          // both behind the head: the one further behind
        if (d1 != d2) return d1 < d2 ? rq1 : rq2;
        return s1 >= s2 ? rq1 : rq2;
    }

    /** {@code as_find_next_rq}: the better neighbour of {@code last}, wrapping to the lowest sector. */
    private BlockRequest findNext(BlockRequest last) {
        BlockRequest prev = neighbour(last, false);
        BlockRequest next = neighbour(last, true);
        if (next == null) {
            var first = sortList[cls(last)].firstEntry();
            if (first != null && first.getValue() != last) next = first.getValue();
        }
        return choose(next, prev);
    }

    private void removeQueued(BlockRequest rq) {
        int c = cls(rq);
        Entry e = entries.get(rq);
        e.owner.queued--;
        if (nextRq[c] == rq) nextRq[c] = findNext(rq);
        entries.remove(rq);
        sortList[c].remove(e.sortKey);
        fifoList[c].remove(e.fifoKey);
    }

    /** {@code as_update_thinktime}; {@code thinkNanos} already capped. */
    private void updateThinkTime(OwnerHistory o, long thinkNanos) {
        if (o.thinkSamples == 0) {
            newThinkTotal = (7 * newThinkTotal + 256 * thinkNanos) / 8;
            newThinkMeanNanos = newThinkTotal / 256;
        }
        o.thinkSamples = (7 * o.thinkSamples + 256) / 8;
        o.thinkTotal = (7 * o.thinkTotal + 256 * thinkNanos) / 8;
        o.thinkMeanNanos = (o.thinkTotal + 128) / o.thinkSamples;
    }

    /** {@code as_update_seekdist}: a decayed mean, the odd far seek clamped. */
    private void updateSeekDistance(OwnerHistory o, long distance) {
        if (o.seekSamples == 0) {
            newSeekTotal = (7 * newSeekTotal + 256 * distance) / 8;
            newSeekMeanSectors = newSeekTotal / 256;
        }
        long limit = o.seekSamples <= 60 ? 2L * 1024 * 1024 : 2L * 1024 * 64;
        distance = Math.min(distance, o.seekMeanSectors * 4 + limit);
        o.seekSamples = (7 * o.seekSamples + 256) / 8;
        o.seekTotal = (7 * o.seekTotal + 256 * distance) / 8;
        o.seekMeanSectors = (o.seekTotal + o.seekSamples / 2) / o.seekSamples;
    }

    /** {@code as_update_iohist}: think time and seek distance of a new sync request of {@code o}. */
    private void updateHistory(OwnerHistory o, BlockRequest rq, long nowNanos) {
        if (!rq.isSync()) return;
        if (o.ioRunning || o.ioStarted) {
            long think = 0;
            if (o.ioRunning && o.queued + o.inFlight == 0)
                think = Math.min(nowNanos - o.lastEndRequestNanos, MAX_THINKTIME_NANOS - 1);
            updateThinkTime(o, think);
            updateSeekDistance(o, Math.abs(rq.sector() - o.lastRequestPos));
        }
        o.lastRequestPos = rq.endSector();
        o.ioStarted = true;
    }

    private boolean anticExpired(long nowNanos) {
        return nowNanos - anticStartNanos > anticExpireNanos;
    }

    /**
     * {@code as_close_req}: {@code rq} lies near the head, in a window that grows with the time already
     * waited (8192 sectors, doubled per millisecond), or nearer than the anticipated owner's mean seek.
     */
    private boolean closeRequest(OwnerHistory o, BlockRequest rq, long nowNanos) {
        long last = lastSector[batchDir];
        long next = rq.sector();
        long delayMs = antic == Antic.OFF || !ownerFinished ? 0 : (nowNanos - anticStartNanos) / 1_000_000L;
        long delta;
        if (delayMs == 0) delta = 8192;
        else if (delayMs <= 20 && delayMs * 1_000_000L <= anticExpireNanos) delta = 8192L << delayMs;
        else return true;
        if (last <= next + (delta >> 1) && next <= last + delta) return true;
        long s = Math.abs(next - last);
        return o.seekSamples == 0 ? newSeekMeanSectors > s : o.seekMeanSectors > s;
    }

    /** {@code as_can_break_anticipation}: whether {@code rq} (may be null) ends the wait for the owner. */
    private boolean canBreakAnticipation(BlockRequest rq, long nowNanos) {
        OwnerHistory o = anticOwner;
        if (rq != null && entries.get(rq).owner == o) return true;       // the owner's own request
        if (ownerFinished && anticExpired(nowNanos)) return true;        // the timer is due
        if (o.queued > 0 || o.inFlight > 0) return true;                 // it has more going already
        if (rq != null && rq.isSync() && closeRequest(o, rq, nowNanos)) {
            updateHistory(o, rq, nowNanos);                              // cooperating owners share history
            return true;
        }
        if (o.thinkSamples == 0) return newThinkMeanNanos > anticExpireNanos;
        return o.thinkMeanNanos > anticExpireNanos;                      // it thinks too long between requests
    }

    private boolean canAnticipate(BlockRequest rq, long nowNanos) {
        if (anticOwner == null) return false;          // the last request issued was async
        if (antic == Antic.FINISHED) return false;     // just finished waiting: run the next request
        return !canBreakAnticipation(rq, nowNanos);
    }

    private void anticStop(boolean broken) {
        if (antic == Antic.WAIT_REQ || antic == Antic.WAIT_NEXT) {
            antic = Antic.FINISHED;
            if (broken) anticipationsBroken++;
        }
    }

    private void anticWaitNext() {
        antic = Antic.WAIT_NEXT;
    }

    private void anticWaitReq() {
        if (antic != Antic.OFF) return;
        anticipations++;
        if (anticOwner == null || ownerFinished) anticWaitNext();
        else antic = Antic.WAIT_REQ;
    }

    private boolean batchExpired(long nowNanos) {
        if (changedBatch || newBatch) return false;
        if (batchDir == SYNC) return nowNanos > currentBatchExpiresNanos;
        return nowNanos > currentBatchExpiresNanos || currentWriteCount == 0;
    }

    /** {@code as_fifo_expired}: checked at most once per expiry interval, else expiries would seek-storm. */
    private boolean fifoExpired(int c, long nowNanos) {
        if (nowNanos < lastCheckFifoNanos[c] + fifoExpireNanos[c]) return false;
        lastCheckFifoNanos[c] = nowNanos;
        if (fifoList[c].isEmpty()) return false;
        return nowNanos > fifoList[c].firstKey().primary();
    }

    /** {@code update_write_batch}: halve or shrink the async batch if it ran long, grow it if it ran short. */
    private void updateWriteBatch(long nowNanos) {
        long batch = batchExpireNanos[ASYNC];
        long writeTime = Math.max(0, nowNanos - currentBatchExpiresNanos + batch);
        if (writeTime > batch && !writeBatchIdled) {
            if (writeTime > batch * 3) writeBatchCount /= 2;
            else writeBatchCount--;
        } else if (writeTime < batch && currentWriteCount == 0) {
            if (batch > writeTime * 3) writeBatchCount *= 2;
            else writeBatchCount++;
        }
        if (writeBatchCount < 1) writeBatchCount = 1;
    }

    /** {@code as_move_to_dispatch}. */
    private Dispatch moveToDispatch(BlockRequest rq) {
        int c = cls(rq);
        anticStop(false);
        antic = Antic.OFF;
        lastSector[c] = rq.endSector();
        Entry e = entries.get(rq);
        if (c == SYNC) {
            anticOwner = e.owner;
        } else {
            anticOwner = null;
            if (currentWriteCount != 0) currentWriteCount--;
        }
        ownerFinished = false;
        nextRq[c] = findNext(rq);
        removeQueued(rq);
        e.owner.inFlight++;
        nrDispatched++;
        dispatched[c]++;
        return Dispatch.issue(rq);
    }

    /** Held back on purpose: ask again at the anticipation timeout, else at the next completion or arrival. */
    private Dispatch holdBack() {
        if (antic == Antic.WAIT_NEXT) return Dispatch.wakeAt(anticStartNanos + anticExpireNanos);
        return Dispatch.wakeAt(Long.MAX_VALUE);
    }

    // ---- dispatch ----

    @Override
    public Dispatch dispatch(long nowNanos) {
        if (entries.isEmpty()) return Dispatch.IDLE;
        if (antic == Antic.WAIT_NEXT && nowNanos >= anticStartNanos + anticExpireNanos) {
            antic = Antic.FINISHED;                                       // as_antic_timeout
            anticipationsTimedOut++;
        }
        boolean reads = !fifoList[SYNC].isEmpty();
        boolean writes = !fifoList[ASYNC].isEmpty();
        if (batchDir == ASYNC && !reads && (currentWriteCount == 0 || !writes)) writeBatchIdled = true;
        if (antic == Antic.WAIT_REQ || antic == Antic.WAIT_NEXT || changedBatch) return holdBack();

        BlockRequest rq = null;
        boolean choose = true;
        if (!(reads && writes && batchExpired(nowNanos))) {
            rq = nextRq[batchDir];
            if (batchDir == SYNC && anticExpireNanos > 0) {
                if (fifoExpired(SYNC, nowNanos)) {
                    return expired(SYNC, nowNanos);
                }
                if (canAnticipate(rq, nowNanos)) {
                    anticWaitReq();
                    return holdBack();
                }
            }
            if (rq != null) {
                if (reads && !writes) currentBatchExpiresNanos = nowNanos + batchExpireNanos[SYNC];
                choose = false;
            }
        }
        if (choose) {
            if (reads && !(writes && batchDir == SYNC)) {
                if (batchDir == ASYNC) changedBatch = true;
                batchDir = SYNC;
                rq = fifoList[SYNC].firstEntry().getValue();
                lastCheckFifoNanos[SYNC] = nowNanos;
            } else if (writes) {
                if (batchDir == SYNC) {
                    changedBatch = true;
                    newBatch = false;
                }
                batchDir = ASYNC;
                currentWriteCount = writeBatchCount;
                writeBatchIdled = false;
                rq = nextRq[ASYNC];
            } else {
                return Dispatch.IDLE;   // unreachable: entries is not empty
            }
        }
        if (fifoExpired(batchDir, nowNanos)) return expired(batchDir, nowNanos);
        return issue(rq, nowNanos);
    }

    private Dispatch expired(int c, long nowNanos) {
        fifoExpiredServed++;
        return issue(fifoList[c].firstEntry().getValue(), nowNanos);
    }

    private Dispatch issue(BlockRequest rq, long nowNanos) {
        if (changedBatch) {
            if (nrDispatched > 0) return holdBack();      // the previous batch must finish first
            if (batchDir == ASYNC) currentBatchExpiresNanos = nowNanos + batchExpireNanos[ASYNC];
            else newBatch = true;
            changedBatch = false;
        }
        return moveToDispatch(rq);
    }

    // ---- callbacks ----

    @Override
    public void add(BlockRequest request, long nowNanos) {
        if (entries.containsKey(request)) throw new IllegalStateException(request + " added twice");
        int c = cls(request);
        OwnerHistory o = owner(request.owner());
        updateHistory(o, request, nowNanos);
        o.queued++;
        Entry e = new Entry(o);
        e.sortKey = new Key(request.sector(), request.seq());
        e.fifoKey = new Key(nowNanos + fifoExpireNanos[c], request.seq());
        entries.put(request, e);
        sortList[c].put(e.sortKey, request);
        fifoList[c].put(e.fifoKey, request);
        nextRq[c] = choose(request, nextRq[c]);                    // as_update_rq
        if ((antic == Antic.WAIT_REQ || antic == Antic.WAIT_NEXT) && canBreakAnticipation(request, nowNanos))
            anticStop(true);
    }

    @Override
    public boolean allowMerge(BlockRequest request, IoRequest submission, MergeKind kind) {
        return true;
    }

    @Override
    public void merged(BlockRequest request, MergeKind kind, long previousSector) {
        if (kind == MergeKind.FRONT) rekey(request);
    }

    private void rekey(BlockRequest request) {
        Entry e = entries.get(request);
        int c = cls(request);
        sortList[c].remove(e.sortKey);
        e.sortKey = new Key(request.sector(), request.seq());
        sortList[c].put(e.sortKey, request);
    }

    @Override
    public void mergedRequests(BlockRequest request, BlockRequest next, long previousSector) {
        Entry survivor = entries.get(request);
        Entry gone = entries.get(next);
        int c = cls(request);
        if (gone.fifoKey.primary() < survivor.fifoKey.primary()) {  // the survivor keeps the earlier expiry
            fifoList[c].remove(survivor.fifoKey);
            survivor.fifoKey = new Key(gone.fifoKey.primary(), request.seq());
            fifoList[c].put(survivor.fifoKey, request);
        }
        removeQueued(next);
        if (request.sector() != previousSector) rekey(request);
    }

    @Override
    public void completed(BlockRequest request, long nowNanos) {
        OwnerHistory o = owner(request.owner());
        if (changedBatch && nrDispatched == 1) {
            changedBatch = false;
            if (batchDir == SYNC) newBatch = true;
        }
        if (nrDispatched > 0) nrDispatched--;
        if (o.inFlight > 0) o.inFlight--;
        int c = cls(request);
        if (newBatch && batchDir == c) {         // a batch counts from its first completion
            updateWriteBatch(nowNanos);
            currentBatchExpiresNanos = nowNanos + batchExpireNanos[SYNC];
            newBatch = false;
        }
        if (anticOwner == o) {
            anticStartNanos = nowNanos;
            ownerFinished = true;
            if (antic == Antic.WAIT_REQ) anticWaitNext();
        }
        if (c == SYNC) {                         // as_put_io_context
            o.ioRunning = true;
            o.lastEndRequestNanos = nowNanos;
        }
    }

    /**
     * Forced dispatch ({@code as_dispatch_request(force)}): every sync request, then every async one, each
     * class in elevator order from its cached next request. Accounting restarts: what is handed back here is
     * not issued by this elevator.
     */
    @Override
    public List<BlockRequest> drainAll() {
        List<BlockRequest> all = new ArrayList<>(entries.size());
        for (int c : new int[] {SYNC, ASYNC}) {
            while (!sortList[c].isEmpty()) {
                BlockRequest rq = nextRq[c] != null ? nextRq[c] : sortList[c].firstEntry().getValue();
                lastSector[c] = rq.endSector();
                nextRq[c] = findNext(rq);
                removeQueued(rq);
                all.add(rq);
            }
        }
        batchDir = SYNC;
        changedBatch = false;
        newBatch = false;
        antic = Antic.OFF;
        anticOwner = null;
        return all;
    }

    @Override
    public boolean schedulesMeta() {
        return true;                              // as-iosched.c has no META rule
    }

    // ---- introspection ----

    @Override
    public int queued() {
        return entries.size();
    }

    /** The anticipation state, for tests and the shell. */
    Antic anticState() {
        return antic;
    }

    @Override
    public Map<String, Object> stats() {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("sync_queued", sortList[SYNC].size());
        s.put("async_queued", sortList[ASYNC].size());
        s.put("batch", batchDir == SYNC ? "sync" : "async");
        s.put("antic_status", antic.name().toLowerCase());
        s.put("anticipating_owner", anticOwner == null ? -1L : anticOwner.id);
        s.put("write_batch_count", writeBatchCount);
        s.put("in_flight", nrDispatched);
        s.put("anticipations", anticipations);
        s.put("anticipations_broken", anticipationsBroken);
        s.put("anticipations_timed_out", anticipationsTimedOut);
        s.put("fifo_expired_served", fifoExpiredServed);
        s.put("sync_dispatched", dispatched[SYNC]);
        s.put("async_dispatched", dispatched[ASYNC]);
        s.put("est_time", estTime());
        return s;
    }

    /**
     * The read-only {@code est_time} of Linux: new owners' mean think time and seek distance (the exit
     * probabilities are not kept, see the class comment).
     */
    String estTime() {
        return newThinkMeanNanos / 1000 + " us new thinktime, " + newSeekMeanSectors + " sectors new seek distance";
    }
}
