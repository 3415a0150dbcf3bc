package org.blockyard.plugin.cfq;

import java.util.ArrayList;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.LinkedList;
import java.util.List;
import java.util.ListIterator;
import java.util.Map;
import java.util.TreeMap;

import org.blockyard.api.io.BlockRequest;
import org.blockyard.api.io.Dispatch;
import org.blockyard.api.io.Elevator;
import org.blockyard.api.io.IoRequest;
import org.blockyard.api.io.MergeKind;

/**
 * cfq, as Linux 2.6.20 {@code block/cfq-iosched.c}, for one priority level (best effort 4: requests carry
 * no I/O priority here).
 *
 * <p><b>Data.</b> One {@link CfqQueue} per owner for its sync requests (reads, and writes flagged SYNC that
 * reach it) and one shared queue for every async write. Each queue keeps its requests sorted by (start
 * sector, seq), a FIFO in arrival order, its cached next request and the count of META requests pending.
 * The round-robin list {@code rr} holds the queues that have requests queued and are not active, in service
 * order; the active queue owns the disk for its time slice. Per owner, think time and seek distance are
 * kept as decayed means (fixed point, 1.0 = 256), as in Linux's {@code cfq_io_context}.
 *
 * <p><b>Rules.</b>
 * <ul>
 * <li>Inside a queue ({@link #choose}): sync before async, then META before non-META, then the nearest in
 *     a one-way elevator that allows backward seeks up to {@code back_seek_max} at
 *     {@code back_seek_penalty} times the cost. One FIFO-expired request per slice goes first.</li>
 * <li>Slices: a sync queue gets {@code slice_sync}, the async queue {@code slice_async} and at most
 *     {@code 2*(slice_async_rq + 3*slice_async_rq)} requests while others wait. The slice starts at the
 *     queue's first dispatch.</li>
 * <li>Idling: when the active sync queue runs empty, the disk is kept for it {@code slice_idle} (2 ms for a
 *     seeky owner) unless the owner's mean think time exceeds {@code slice_idle}; the wait is a
 *     {@link Dispatch#wakeAt} answer, never a timer of its own.</li>
 * <li>Preemption ({@link #shouldPreempt}): a new sync request preempts an active async queue, and a new sync
 *     META request preempts an active queue that has no META pending. Linux 2.6.20 also demands that the
 *     newcomer be waiting for a request with {@code slice_idle} of its slice left, a state a queue that is
 *     not active never keeps (expiry clears it); later kernels dropped that clause, and so does this one. As
 *     in 2.6.20, async requests never preempt. The preempted queue goes to the front of {@code rr}, right
 *     behind the preemptor, which runs for what is left of its slice or half a slice.</li>
 * </ul>
 *
 * <p>Invariant: {@code entries} holds every request this elevator owns, each in exactly one queue; a queue
 * with requests queued is either active or on {@code rr}, never both.
 */
final class CfqElevator implements Elevator {

    // ---- tunable defaults (Linux, HZ = 1000) ----
    static final long QUANTUM = 4;
    static final long FIFO_EXPIRE_SYNC_MS = 125;     // HZ/8
    static final long FIFO_EXPIRE_ASYNC_MS = 250;    // HZ/4
    static final long BACK_SEEK_MAX_KIB = 16 * 1024;
    static final long BACK_SEEK_PENALTY = 2;
    static final long SLICE_SYNC_MS = 100;           // HZ/10
    static final long SLICE_ASYNC_MS = 40;           // HZ/25
    static final long SLICE_ASYNC_RQ = 2;
    static final long SLICE_IDLE_MS = 8;             // HZ/125

    /** The priority level every queue has here (best effort, {@code IOPRIO_NORM}). */
    static final int PRIO = 4;
    /** An owner whose mean seek exceeds this many sectors is seeky ({@code CIC_SEEKY}). */
    static final long SEEKY_SECTORS = 128 * 1024;
    /** Idle at most this long for a seeky owner. */
    static final long SEEKY_IDLE_NANOS = 2_000_000L;
    /** A mean counts once its samples exceed this ({@code sample_valid}). */
    static final long VALID_SAMPLES = 80;
    /** More requests than this seen on the device at once mean it queues commands itself ({@code hw_tag}). */
    static final int HW_TAG_DEPTH = 4;
    static final long ASYNC_KEY = Long.MIN_VALUE;

    // ---- state ----
    private final int quantum;
    private final long[] fifoExpireNanos = new long[2];   // [0] async, [1] sync
    private final long backMaxSectors;
    private final long backPenalty;
    private final long sliceSyncNanos, sliceAsyncNanos;
    private final int sliceAsyncRq;
    private final long sliceIdleNanos;

    private final Map<Long, CfqQueue> queues = new HashMap<>();
    private final Map<Long, OwnerHistory> owners = new HashMap<>();
    private final IdentityHashMap<BlockRequest, Entry> entries = new IdentityHashMap<>();
    /** Busy queues waiting for a slice, in service order. */
    private final LinkedList<CfqQueue> rr = new LinkedList<>();

    private CfqQueue active;
    /** Owner of the active sync queue's first dispatched request ({@code active_cic}). */
    private OwnerHistory activeOwner;
    private int dispatchSlice;
    /** When the idle wait of the active queue ends; MAX_VALUE when not idling. */
    private long idleUntilNanos = Long.MAX_VALUE;
    private long lastPosition;
    private int inDriver;
    private boolean hwTag;

    private long slices, preemptions, metaPreemptions, idleWaits, idleHits, fifoExpiredServed;
    private final long[] dispatched = new long[2];

    private record Key(long sector, long seq) implements Comparable<Key> {
        @Override
        public int compareTo(Key o) {
            int c = Long.compare(sector, o.sector);
            return c != 0 ? c : Long.compare(seq, o.seq);
        }
    }

    private static final class Entry {
        final CfqQueue queue;
        Key sortKey;

        Entry(CfqQueue queue) {
            this.queue = queue;
        }
    }

    /** Linux {@code struct cfq_queue}. */
    static final class CfqQueue {
        final long key;
        final boolean sync;
        final TreeMap<Key, BlockRequest> sorted = new TreeMap<>();
        final ArrayDeque<BlockRequest> fifo = new ArrayDeque<>();
        BlockRequest nextRq;
        int metaPending;
        int onDispatch;
        boolean onRr;
        boolean idleWindow;
        boolean mustDispatch;
        boolean waitRequest;
        boolean fifoExpireUsed;
        long sliceEndNanos;       // 0 until the first dispatch of the slice
        long sliceLeftNanos;      // granted by a preemption, used at the next first dispatch
        long serviceLastNanos;

        CfqQueue(long key, boolean sync) {
            this.key = key;
            this.sync = sync;
            this.idleWindow = sync;
        }

        boolean empty() {
            return sorted.isEmpty();
        }

        @Override
        public String toString() {
            return sync ? "sync:" + key : "async";
        }
    }

    /** Linux {@code struct cfq_io_context}: one owner's think time and seek history. */
    static final class OwnerHistory {
        final long id;
        long lastEndRequestNanos, lastQueueNanos, lastRequestPos;
        long thinkSamples, thinkTotal, thinkMeanNanos;
        long seekSamples, seekTotal, seekMeanSectors;

        OwnerHistory(long id) {
            this.id = id;
        }

        boolean seeky() {
            return seekMeanSectors > SEEKY_SECTORS;
        }
    }

    CfqElevator(Map<String, Long> t) {
        quantum = t.get(CfqElevatorFactory.QUANTUM).intValue();
        fifoExpireNanos[1] = ms(t.get(CfqElevatorFactory.FIFO_EXPIRE_SYNC));
        fifoExpireNanos[0] = ms(t.get(CfqElevatorFactory.FIFO_EXPIRE_ASYNC));
        backMaxSectors = t.get(CfqElevatorFactory.BACK_SEEK_MAX) * 2;    // 1 KiB is 2 sectors
        backPenalty = t.get(CfqElevatorFactory.BACK_SEEK_PENALTY);
        sliceSyncNanos = ms(t.get(CfqElevatorFactory.SLICE_SYNC));
        sliceAsyncNanos = ms(t.get(CfqElevatorFactory.SLICE_ASYNC));
        sliceAsyncRq = t.get(CfqElevatorFactory.SLICE_ASYNC_RQ).intValue();
        sliceIdleNanos = ms(t.get(CfqElevatorFactory.SLICE_IDLE));
    }

    private static long ms(long v) {
        return v * 1_000_000L;
    }

    // ---- helpers ----

    private CfqQueue queueFor(BlockRequest rq) {
        long key = rq.isSync() ? rq.owner() : ASYNC_KEY;
        return queues.computeIfAbsent(key, k -> new CfqQueue(k, k != ASYNC_KEY));
    }

    private OwnerHistory owner(long id) {
        return owners.computeIfAbsent(id, OwnerHistory::new);
    }

    /** {@code cfq_prio_to_slice} at priority 4: the base slice. */
    private long sliceOf(CfqQueue q) {
        return q.sync ? sliceSyncNanos : sliceAsyncNanos;
    }

    /** {@code cfq_prio_to_maxrq} at priority 4: requests an async queue may issue in one slice. */
    private int maxAsyncRequests() {
        return 2 * (sliceAsyncRq + sliceAsyncRq * (7 - PRIO));
    }

    /** {@code cfq_choose_req}: sync, then META, then the nearer for a one-way head at {@code lastPosition}. */
    private BlockRequest choose(BlockRequest rq1, BlockRequest rq2) {
        if (rq1 == null || rq1 == rq2) return rq2;
        if (rq2 == null) return rq1;
        if (rq1.isSync() != rq2.isSync()) return rq1.isSync() ? rq1 : rq2;
        if (rq1.isMeta() != rq2.isMeta()) return rq1.isMeta() ? rq1 : rq2;
        long last = lastPosition;
        long s1 = rq1.sector(), s2 = rq2.sector();
        long d1 = 0, d2 = 0;
        boolean wrap1 = false, wrap2 = false;
        if (s1 >= last) d1 = s1 - last;
        else if (s1 + backMaxSectors >= last) d1 = (last - s1) * backPenalty;
        else wrap1 = true;
        if (s2 >= last) d2 = s2 - last;
        else if (s2 + backMaxSectors >= last) d2 = (last - s2) * backPenalty;
        else wrap2 = true;
        if (!wrap1 && wrap2) return rq1;
        if (wrap1 && !wrap2) return rq2;
        if (wrap1) return s1 <= s2 ? rq1 : rq2;     // both behind: one back seek to the further one
        if (d1 != d2) return d1 < d2 ? rq1 : rq2;
        return s1 >= s2 ? rq1 : rq2;
    }

    /** {@code cfq_find_next_rq}: the better neighbour of {@code last} in its queue, wrapping to the first. */
    private BlockRequest findNext(CfqQueue q, BlockRequest last) {
        Key k = entries.get(last).sortKey;
        var p = q.sorted.lowerEntry(k);
        var n = q.sorted.higherEntry(k);
        BlockRequest prev = p == null ? null : p.getValue();
        BlockRequest next = n == null ? null : n.getValue();
        if (next == null) {
            var first = q.sorted.firstEntry();
            if (first != null && first.getValue() != last) next = first.getValue();
        }
        return choose(next, prev);
    }

    private void removeRequest(BlockRequest rq) {
        Entry e = entries.get(rq);
        CfqQueue q = e.queue;
        if (q.nextRq == rq) q.nextRq = findNext(q, rq);
        q.sorted.remove(e.sortKey);
        q.fifo.remove(rq);
        if (rq.isMeta()) q.metaPending--;
        entries.remove(rq);
        if (q.empty() && q.onRr) {
            rr.remove(q);
            q.onRr = false;
        }
    }

    /**
     * {@code cfq_resort_rr_list}: a preempted queue goes to the front; any other behind the queues served
     * less recently than it (never-served queues keep their place at the front).
     */
    private void putOnRr(CfqQueue q, boolean front) {
        if (q == active || q.empty()) return;
        if (q.onRr) rr.remove(q);
        q.onRr = true;
        if (front) {
            rr.addFirst(q);
            return;
        }
        ListIterator<CfqQueue> it = rr.listIterator(rr.size());
        while (it.hasPrevious()) {
            CfqQueue p = it.previous();
            if (p.serviceLastNanos == 0 || p.serviceLastNanos < q.serviceLastNanos) {
                it.next();
                break;
            }
        }
        it.add(q);
    }

    private void updateThinkTime(OwnerHistory o, long nowNanos) {
        long elapsed = o.lastEndRequestNanos > o.lastQueueNanos ? nowNanos - o.lastEndRequestNanos
                : nowNanos - o.lastQueueNanos;
        long think = Math.min(elapsed, 2 * sliceIdleNanos);
        o.thinkSamples = (7 * o.thinkSamples + 256) / 8;
        o.thinkTotal = (7 * o.thinkTotal + 256 * think) / 8;
        o.thinkMeanNanos = (o.thinkTotal + 128) / o.thinkSamples;
    }

    private static void updateSeekTime(OwnerHistory o, BlockRequest rq) {
        long d = Math.abs(rq.sector() - o.lastRequestPos);
        long limit = o.seekSamples <= 60 ? 2L * 1024 * 1024 : 2L * 1024 * 64;
        d = Math.min(d, o.seekMeanSectors * 4 + limit);
        o.seekSamples = (7 * o.seekSamples + 256) / 8;
        o.seekTotal = (7 * o.seekTotal + 256 * d) / 8;
        o.seekMeanSectors = (o.seekTotal + o.seekSamples / 2) / o.seekSamples;
    }

    /** {@code cfq_update_idle_window}: idle only for owners that come back within {@code slice_idle}. */
    private void updateIdleWindow(CfqQueue q, OwnerHistory o) {
        boolean enable = q.idleWindow;
        if (sliceIdleNanos == 0 || (hwTag && o.seeky())) enable = false;
        else if (o.thinkSamples > VALID_SAMPLES) enable = o.thinkMeanNanos <= sliceIdleNanos;
        q.idleWindow = enable;
    }

    /** {@code cfq_should_preempt} (see the class comment for the clause left out). */
    private boolean shouldPreempt(CfqQueue newQ, BlockRequest rq) {
        CfqQueue cur = active;
        if (cur == null || cur == newQ) return false;
        if (rq.isSync() && !cur.sync) return true;
        return rq.isMeta() && cur.metaPending == 0;
    }

    /** {@code cfq_slice_expired}: the active queue gives up the disk; what is left of its slice is kept. */
    private void sliceExpired(boolean preempted, long nowNanos) {
        CfqQueue q = active;
        if (q == null) return;
        q.mustDispatch = false;
        q.waitRequest = false;
        idleUntilNanos = Long.MAX_VALUE;
        q.sliceLeftNanos = q.sliceEndNanos > nowNanos ? q.sliceEndNanos - nowNanos : 0;
        active = null;
        activeOwner = null;
        dispatchSlice = 0;
        putOnRr(q, preempted);
    }

    /** {@code cfq_preempt_queue}: {@code q} runs next, for its slice left or half a slice. */
    private void preempt(CfqQueue q, long nowNanos) {
        sliceExpired(true, nowNanos);
        long left = q.sliceLeftNanos > 0 ? q.sliceLeftNanos : sliceOf(q) / 2;
        if (q.onRr) rr.remove(q);
        rr.addFirst(q);
        q.onRr = true;
        q.sliceEndNanos = nowNanos + left;
        q.mustDispatch = true;
        preemptions++;
    }

    private void setActive(CfqQueue q) {
        if (q != null) {
            rr.remove(q);
            q.onRr = false;
            q.sliceEndNanos = q.mustDispatch ? q.sliceEndNanos : 0;   // a preemptor's slice end is already set
            q.sliceLeftNanos = 0;
            q.fifoExpireUsed = false;
            slices++;
        }
        active = q;
    }

    /** {@code cfq_arm_slice_timer}: keep the disk for the emptied active sync queue; false when not worth it. */
    private boolean armIdle(CfqQueue q, long nowNanos) {
        if (sliceIdleNanos == 0 || !q.idleWindow) return false;
        q.mustDispatch = true;
        q.waitRequest = true;
        long sl = Math.min(q.sliceEndNanos - nowNanos, sliceIdleNanos);
        OwnerHistory o = activeOwner != null ? activeOwner : owners.get(q.key);
        if (o != null && o.seekSamples > VALID_SAMPLES && o.seeky()) sl = Math.min(sl, SEEKY_IDLE_NANOS);
        idleUntilNanos = nowNanos + Math.max(sl, 0);
        idleWaits++;
        return true;
    }

    /** {@code cfq_idle_slice_timer}, run when asked at or after the end of the idle wait. */
    private void idleTimeout(long nowNanos) {
        CfqQueue q = active;
        idleUntilNanos = Long.MAX_VALUE;
        if (q == null) return;
        q.waitRequest = false;
        if (q.sliceEndNanos != 0 && nowNanos > q.sliceEndNanos) {
            sliceExpired(false, nowNanos);
        } else if (rr.isEmpty() && q.empty()) {
            q.mustDispatch = false;                  // nobody else wants the disk: stay, do not spin
        } else if (!q.empty()) {
            q.mustDispatch = true;
        } else {
            sliceExpired(false, nowNanos);
        }
    }

    /** {@code cfq_select_queue}: the queue to serve now, or null to wait (idling, or its requests in flight). */
    private CfqQueue selectQueue(long nowNanos) {
        CfqQueue q = active;
        if (q != null) {
            boolean expired = !q.mustDispatch && q.sliceEndNanos != 0 && nowNanos > q.sliceEndNanos;
            if (!expired) {
                if (!q.empty()) return q;
                if (q.onDispatch > 0) return null;                    // wait for its requests to complete
                if (q.waitRequest) return null;                       // idling
                if (q.sync && armIdle(q, nowNanos)) return null;
            }
            sliceExpired(false, nowNanos);
        }
        CfqQueue next = rr.peekFirst();
        setActive(next);
        return next;
    }

    // ---- dispatch ----

    @Override
    public Dispatch dispatch(long nowNanos) {
        if (entries.isEmpty()) return Dispatch.IDLE;
        if (idleUntilNanos != Long.MAX_VALUE && nowNanos >= idleUntilNanos) idleTimeout(nowNanos);
        CfqQueue q = selectQueue(nowNanos);
        if (q == null) {
            return Dispatch.wakeAt(idleUntilNanos);    // MAX_VALUE: the next completion or arrival
        }
        if (!rr.isEmpty() && q.onDispatch >= quantum) return Dispatch.wakeAt(Long.MAX_VALUE);
        q.mustDispatch = false;
        if (q.waitRequest) idleHits++;
        q.waitRequest = false;
        idleUntilNanos = Long.MAX_VALUE;

        BlockRequest rq = checkFifo(q, nowNanos);
        if (rq == null) rq = q.nextRq;
        OwnerHistory o = owner(rq.owner());
        removeRequest(rq);
        q.onDispatch++;
        inDriver++;
        if (inDriver > HW_TAG_DEPTH) hwTag = true;
        lastPosition = rq.endSector();
        dispatchSlice++;
        dispatched[q.sync ? 1 : 0]++;
        if (activeOwner == null && q.sync) activeOwner = o;
        if (q.sliceEndNanos == 0) q.sliceEndNanos = nowNanos + sliceOf(q);
        if (!rr.isEmpty() && !q.sync && dispatchSlice >= maxAsyncRequests()) {
            q.sliceEndNanos = nowNanos + 1;                // the async queue used up its requests
            sliceExpired(false, nowNanos);
        }
        return Dispatch.issue(rq);
    }

    /** {@code cfq_check_fifo}: at most one expired request per slice goes ahead of sort order. */
    private BlockRequest checkFifo(CfqQueue q, long nowNanos) {
        if (q.fifoExpireUsed || q.fifo.isEmpty()) return null;
        BlockRequest head = q.fifo.peekFirst();
        if (nowNanos > head.arrivalNanos() + fifoExpireNanos[q.sync ? 1 : 0]) {
            q.fifoExpireUsed = true;
            fifoExpiredServed++;
            return head;
        }
        return null;
    }

    // ---- callbacks ----

    @Override
    public void add(BlockRequest request, long nowNanos) {
        if (entries.containsKey(request)) throw new IllegalStateException(request + " added twice");
        CfqQueue q = queueFor(request);
        Entry e = new Entry(q);
        e.sortKey = new Key(request.sector(), request.seq());
        entries.put(request, e);
        q.sorted.put(e.sortKey, request);
        q.fifo.addLast(request);
        if (!q.onRr && q != active) putOnRr(q, false);
        if (request.isMeta()) q.metaPending++;
        q.nextRq = choose(q.nextRq, request);

        OwnerHistory o = owner(request.owner());
        if (!request.isSync()) {
            // a sync owner that the disk idles for wrote async instead: stop waiting for it
            if (active != null && active.waitRequest && active.key == o.id) sliceExpired(false, nowNanos);
            return;                                  // async requests neither idle nor preempt
        }
        updateThinkTime(o, nowNanos);
        updateSeekTime(o, request);
        updateIdleWindow(q, o);
        o.lastQueueNanos = nowNanos;
        o.lastRequestPos = request.endSector();
        if (q == active) {
            if (q.waitRequest) {                      // what the disk idled for: run it now
                q.mustDispatch = true;
                idleUntilNanos = Long.MAX_VALUE;
            }
        } else if (shouldPreempt(q, request)) {
            if (active.sync) metaPreemptions++;      // sync over sync: only the META rule preempts
            preempt(q, nowNanos);
        }
    }

    @Override
    public boolean allowMerge(BlockRequest request, IoRequest submission, MergeKind kind) {
        // cfq_allow_merge: a sync request only takes submissions of its own owner's queue
        return !request.isSync() || submission.owner() == request.owner();
    }

    @Override
    public void merged(BlockRequest request, MergeKind kind, long previousSector) {
        if (kind == MergeKind.FRONT) rekey(request);
    }

    private void rekey(BlockRequest request) {
        Entry e = entries.get(request);
        e.queue.sorted.remove(e.sortKey);
        e.sortKey = new Key(request.sector(), request.seq());
        e.queue.sorted.put(e.sortKey, request);
    }

    @Override
    public void mergedRequests(BlockRequest request, BlockRequest next, long previousSector) {
        Entry survivor = entries.get(request);
        CfqQueue q = survivor.queue;
        // cfq_merged_requests: the survivor takes the FIFO place of the earlier one
        if (fifoIndex(q, next) < fifoIndex(q, request)) {
            q.fifo.remove(request);
            int at = fifoIndex(q, next);
            List<BlockRequest> copy = new ArrayList<>(q.fifo);
            copy.add(at, request);
            q.fifo.clear();
            q.fifo.addAll(copy);
        }
        removeRequest(next);
        if (request.sector() != previousSector) rekey(request);
    }

    private static int fifoIndex(CfqQueue q, BlockRequest rq) {
        int i = 0;
        for (BlockRequest r : q.fifo) {
            if (r == rq) return i;
            i++;
        }
        return i;
    }

    @Override
    public void completed(BlockRequest request, long nowNanos) {
        CfqQueue q = queues.get(request.isSync() ? request.owner() : ASYNC_KEY);
        if (inDriver > 0) inDriver--;
        if (q == null) return;
        if (q.onDispatch > 0) q.onDispatch--;
        if (q.onDispatch == 0) {
            q.serviceLastNanos = nowNanos;
            if (q.onRr) putOnRr(q, false);
        }
        if (request.isSync()) owner(request.owner()).lastEndRequestNanos = nowNanos;
        if (q == active) {
            if (q.sliceEndNanos != 0 && nowNanos > q.sliceEndNanos) sliceExpired(false, nowNanos);
            else if (q.sync && q.empty() && q.onDispatch == 0) armIdle(q, nowNanos);
        }
    }

    /** Forced dispatch: the active queue, then {@code rr} in order, each queue from its next request. */
    @Override
    public List<BlockRequest> drainAll() {
        List<BlockRequest> all = new ArrayList<>(entries.size());
        List<CfqQueue> order = new ArrayList<>();
        if (active != null) order.add(active);
        order.addAll(rr);
        for (CfqQueue q : queues.values()) if (!order.contains(q) && !q.empty()) order.add(q);
        for (CfqQueue q : order) {
            while (!q.empty()) {
                BlockRequest rq = q.nextRq != null ? q.nextRq : q.sorted.firstEntry().getValue();
                lastPosition = rq.endSector();
                q.nextRq = findNext(q, rq);
                removeRequest(rq);
                all.add(rq);
            }
        }
        if (active != null) {
            active.mustDispatch = false;
            active.waitRequest = false;
            active = null;
        }
        activeOwner = null;
        dispatchSlice = 0;
        rr.clear();
        for (CfqQueue q : queues.values()) q.onRr = false;
        idleUntilNanos = Long.MAX_VALUE;
        return all;
    }

    @Override
    public boolean schedulesMeta() {
        return true;
    }

    // ---- introspection ----

    @Override
    public int queued() {
        return entries.size();
    }

    /** The queue serving now, for tests and the shell. */
    String activeQueue() {
        return active == null ? "none" : active.toString();
    }

    @Override
    public Map<String, Object> stats() {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("queued", entries.size());
        s.put("active_queue", activeQueue());
        s.put("active_slice_end_ns", active == null ? -1L : active.sliceEndNanos);
        s.put("busy_queues", rr.size() + (active != null && !active.empty() ? 1 : 0));
        s.put("rr", rr.toString());
        s.put("idling_until_ns", idleUntilNanos == Long.MAX_VALUE ? -1L : idleUntilNanos);
        s.put("slices", slices);
        s.put("preemptions", preemptions);
        s.put("meta_preemptions", metaPreemptions);
        s.put("idle_waits", idleWaits);
        s.put("idle_hits", idleHits);
        s.put("fifo_expired_served", fifoExpiredServed);
        s.put("sync_dispatched", dispatched[1]);
        s.put("async_dispatched", dispatched[0]);
        s.put("hw_tag", hwTag);
        return s;
    }
}
