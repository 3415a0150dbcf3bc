package org.blockyard.runtime.io;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;

import org.blockyard.api.io.BlockRequest;
import org.blockyard.api.io.Dispatch;
import org.blockyard.api.io.Elevator;
import org.blockyard.api.io.IoCompletion;
import org.blockyard.api.io.IoException;
import org.blockyard.api.io.IoFlag;
import org.blockyard.api.io.IoOp;
import org.blockyard.api.io.IoRequest;
import org.blockyard.api.io.MergeKind;
import org.blockyard.api.io.QueueLimits;
import org.blockyard.api.io.QueueStats;
import org.blockyard.runtime.io.elevator.NoopElevator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The request queue proper, without threads or clocks: {@link QueueActor} drives it in real time and
 * {@link Simulation} on a virtual clock; both hand it {@code now} on every call.
 *
 * <p><b>Data.</b> Queued requests live in exactly one of four places, checked in this order when the device
 * can take one more:
 * <ol>
 * <li>{@code ordered}: a FIFO of requests that left scheduling because a FLUSH arrived behind them, and the
 *     FLUSH itself (Linux: the dispatch list after {@code elv_drain_elevator});</li>
 * <li>{@code sync}: SYNC submissions in arrival order; each unplugs the queue and is issued before anything
 *     else, never merged (log writes, seed 004);</li>
 * <li>{@code meta}: asynchronous META requests in arrival order; they merge, and go ahead of bulk data
 *     (only while the elevator does not {@linkplain Elevator#schedulesMeta schedule META itself}; one that
 *     does, such as cfq, is given them like every other request);</li>
 * <li>the elevator: every other READ and WRITE.</li>
 * </ol>
 * Requests in {@code meta} and the elevator are mergeable and indexed by start and end sector per kind; a
 * request leaves both indexes when it is issued or moved to {@code ordered}.
 *
 * <p><b>Invariants.</b> Every submission is in exactly one request until that request completes, and every
 * request is queued in one place, or in flight, never both. A merged request has one op, one META/AHEAD
 * class, and at most {@code max_sectors}. Nothing submitted after a FLUSH is issued before the FLUSH
 * completes, and the FLUSH is issued only when everything before it has completed (ordered drain, Linux
 * {@code QUEUE_ORDERED_DRAIN_FLUSH}). At most {@code queueDepth} requests are in flight.
 *
 * <table>
 * <caption>Operations</caption>
 * <tr><td>{@link #submit}</td><td>validate; FLUSH drains; SYNC bypasses; else back merge, front merge (each
 *     followed by an attempt to coalesce with the neighbour), or a new request</td></tr>
 * <tr><td>{@link #next}</td><td>the next request to issue, or null (depth full, FLUSH pending, plugged,
 *     elevator waiting, empty)</td></tr>
 * <tr><td>{@link #complete}</td><td>completes every submission of a request</td></tr>
 * <tr><td>{@link #switchTo}</td><td>{@code elevator_switch}: the new elevator takes every queued request</td></tr>
 * </table>
 *
 * <p><b>Faults in the elevator</b> (a plugin may be buggy; the queue must not stop). The queue keeps its own
 * list of the requests the elevator holds: a request joins it when it is given to {@code add} and leaves it
 * when {@code dispatch} or {@code drainAll} hands it back, or when it is coalesced away (O(1) links on the
 * request, no allocation). Every call into the elevator is checked. It is <i>retired</i> when a call throws,
 * when it breaks the contract (hands out a request it does not hold: never given, already dispatched or
 * returned twice; answers idle while holding requests; leaves requests behind in {@code drainAll}; reports
 * a {@code queued()} that differs from the list), or when one call takes longer than
 * {@code stallLimitNanos} (real time, {@code System.nanoTime}, whatever clock the queue runs on). Retiring
 * records the fault with the {@link Supervisor} (the registry lists it as failed), builds the default
 * elevator (or, when the default is the one that failed, noop as the last resort) and gives it every
 * request from the list, in the order they were first given; the faulty elevator's own answers are never
 * trusted. Each request is thus issued exactly once, and every submission completes once.
 *
 * <p><b>Plugging</b> (Linux 2.6): a submission that finds nothing queued plugs the queue; it unplugs when
 * {@code unplugThreshold} requests are queued, after {@code unplugDelayNanos}, or on a SYNC or FLUSH
 * submission. While plugged, contiguous submissions merge instead of trickling out one by one.
 */
public final class RequestQueue {
    private static final Logger LOG = LoggerFactory.getLogger(RequestQueue.class);

    /** What the queue needs to retire a faulty elevator; {@link QueueSetup} answers from its registry. */
    public interface Supervisor {
        /** The built-in default, which replaces a retired elevator. */
        String defaultId();

        /** Whether {@code id} was retired before (then it is not used as a replacement). */
        boolean isFailed(String id);

        /**
         * Whether {@code id} is one of the queue's own elevators. They are not retired for time: their calls take
         * microseconds, so one that took longer was paused with the JVM (a collection) or the machine; a
         * plugin's slow call cannot be told from such a pause, and is retired.
         */
        boolean isBuiltIn(String id);

        /** A new elevator of {@code id}; may throw. */
        Elevator build(String id);

        /** {@code id} was retired; {@code reason} names the callback and the fault. */
        void retired(String id, String reason);
    }

    /** Elevator used when the default itself failed: a queue is never left without one. */
    static final String LAST_RESORT = "noop";

    private final QueueLimits limits;
    private final long capacitySectors;
    private final int unplugThreshold;
    private final long unplugDelayNanos;
    private final QueueEvents events;
    private final Supervisor supervisor;
    private final long stallLimitNanos;

    private Elevator elevator;
    private String elevatorId;
    /** Whether the elevator takes asynchronous META requests itself (asked once per elevator installed). */
    private boolean elevatorTakesMeta;
    /** Requests the elevator holds, in the order given (linked through the requests); see the class comment. */
    private Request heldHead, heldTail;
    private int heldCount;
    /** The time of the latest call, for the calls that retire an elevator without being given one. */
    private long lastNowNanos;

    private final ArrayDeque<Request> ordered = new ArrayDeque<>();
    private final ArrayDeque<Request> sync = new ArrayDeque<>();
    private final LinkedHashSet<Request> meta = new LinkedHashSet<>();
    private final Map<Long, Request> byStart = new HashMap<>();
    private final Map<Long, Request> byEnd = new HashMap<>();
    private final Set<Request> inFlight = Collections.newSetFromMap(new IdentityHashMap<>());

    private boolean flushInFlight;
    private boolean plugged;
    private long plugDeadlineNanos;
    private long elevatorWakeNanos = Long.MAX_VALUE;
    private long nextSeq = 1;

    private long submissions, requestsDispatched, sectorsDispatched, backMerges, frontMerges, coalesced, completed;
    private int maxRequestSectors;

    /**
     * @param stallLimitNanos longest one elevator call may take before the elevator is retired (real time)
     */
    public RequestQueue(QueueLimits limits, long capacitySectors, Elevator elevator, String elevatorId,
                        int unplugThreshold, long unplugDelayNanos, QueueEvents events, Supervisor supervisor,
                        long stallLimitNanos) {
        if (capacitySectors <= 0) throw new IllegalArgumentException("device of " + capacitySectors + " sectors");
        if (stallLimitNanos <= 0) throw new IllegalArgumentException("the elevator stall limit must be positive");
        this.supervisor = supervisor;
        this.stallLimitNanos = stallLimitNanos;
        if (unplugThreshold < 1) throw new IllegalArgumentException("unplug threshold must be at least 1");
        if (unplugDelayNanos < 0) throw new IllegalArgumentException("negative unplug delay");
        this.limits = limits;
        this.capacitySectors = capacitySectors;
        this.elevator = elevator;
        this.elevatorId = elevatorId;
        this.elevatorTakesMeta = takesMeta(elevator);
        this.unplugThreshold = unplugThreshold;
        this.unplugDelayNanos = unplugDelayNanos;
        this.events = events == null ? QueueEvents.NONE : events;
    }

    public QueueLimits limits() {
        return limits;
    }

    public long capacitySectors() {
        return capacitySectors;
    }

    public String elevatorId() {
        return elevatorId;
    }

    /** Checks a submission without queueing it; throws {@link IoException.InvalidRequest}. */
    public void validate(IoRequest bio) {
        if (bio.op() == IoOp.FLUSH) return;
        if (bio.endSector() > capacitySectors)
            throw new IoException.InvalidRequest("sectors [" + bio.sector() + ", " + bio.endSector()
                    + ") lie beyond the device end at " + capacitySectors);
        if (bio.sectors() > limits.maxSectors())
            throw new IoException.InvalidRequest(bio.sectors() + " sectors exceed max_sectors "
                    + limits.maxSectors() + "; split the submission");
        int lbs = limits.logicalBlockBytes() / IoRequest.SECTOR_BYTES;
        if (bio.sector() % lbs != 0 || bio.sectors() % lbs != 0)
            throw new IoException.InvalidRequest("submission " + bio.sector() + "+" + bio.sectors()
                    + " is not aligned to the logical block of " + limits.logicalBlockBytes() + " bytes");
    }

    /** Queues a submission; {@code done} receives its completion. Throws {@link IoException.InvalidRequest}. */
    public void submit(IoRequest bio, long nowNanos, BiConsumer<IoCompletion, Throwable> done) {
        validate(bio);
        lastNowNanos = nowNanos;
        submissions++;
        events.queued(bio, nowNanos);
        Request.Bio b = new Request.Bio(bio, nowNanos, done);
        if (bio.op() == IoOp.FLUSH) {
            drainForFlush();
            Request flush = newRequest(b, nowNanos);
            ordered.add(flush);
            plugged = false;
            return;
        }
        if (bio.has(IoFlag.SYNC)) {
            sync.add(newRequest(b, nowNanos));
            plugged = false;
            return;
        }
        if (queuedRequests() == 0 && !plugged) {
            plugged = true;
            plugDeadlineNanos = nowNanos + unplugDelayNanos;
        }
        if (tryBackMerge(b, nowNanos) || tryFrontMerge(b, nowNanos)) return;
        Request rq = newRequest(b, nowNanos);
        index(rq);
        if (rq.isMeta() && !elevatorTakesMeta) meta.add(rq);
        else addToElevator(rq, nowNanos);
        if (queuedRequests() >= unplugThreshold) plugged = false;
    }

    private Request newRequest(Request.Bio b, long nowNanos) {
        Request rq = new Request(nextSeq++, b);
        events.inserted(rq, nowNanos);
        return rq;
    }

    private static long key(long sector, BlockRequest kind) {
        return key(sector, kind.op(), kind.flags());
    }

    /** Sector and kind in one key: op, META, AHEAD and FUA are the kind; different kinds never merge. */
    private static long key(long sector, IoOp op, Set<IoFlag> flags) {
        int k = (op == IoOp.WRITE ? 1 : 0) | (flags.contains(IoFlag.META) ? 2 : 0)
                | (flags.contains(IoFlag.AHEAD) ? 4 : 0) | (flags.contains(IoFlag.FUA) ? 8 : 0);
        return (sector << 4) | k;
    }

    private void index(Request rq) {
        byStart.put(key(rq.sector(), rq), rq);
        byEnd.put(key(rq.endSector(), rq), rq);
    }

    private void unindex(Request rq) {
        byStart.remove(key(rq.sector(), rq), rq);
        byEnd.remove(key(rq.endSector(), rq), rq);
    }

    private boolean fits(Request rq, int moreSectors) {
        return (long) rq.sectors() + moreSectors <= limits.maxSectors();
    }

    private boolean tryBackMerge(Request.Bio b, long nowNanos) {
        IoRequest bio = b.io();
        Request rq = byEnd.get(key(bio.sector(), bio.op(), bio.flags()));
        if (rq == null || rq.started || !fits(rq, bio.sectors()) || !mayMerge(rq, bio, MergeKind.BACK))
            return false;
        unindex(rq);
        long before = rq.sector();
        rq.appendBack(b);
        backMerges++;
        events.backMerged(bio, rq, nowNanos);
        notifyMerged(rq, MergeKind.BACK, before);
        Request next = byStart.get(key(rq.endSector(), rq));
        if (next != null && next != rq && fits(rq, next.sectors())) {
            unindex(next);
            rq.absorb(next);
            dropCoalesced(rq, next, before);
        }
        index(rq);
        return true;
    }

    private boolean tryFrontMerge(Request.Bio b, long nowNanos) {
        IoRequest bio = b.io();
        Request rq = byStart.get(key(bio.endSector(), bio.op(), bio.flags()));
        if (rq == null || rq.started || !fits(rq, bio.sectors()) || !mayMerge(rq, bio, MergeKind.FRONT))
            return false;
        unindex(rq);
        long before = rq.sector();
        rq.prependFront(b);
        frontMerges++;
        events.frontMerged(bio, rq, nowNanos);
        notifyMerged(rq, MergeKind.FRONT, before);
        Request prev = byEnd.get(key(rq.sector(), rq));
        if (prev != null && prev != rq && fits(rq, prev.sectors())) {
            unindex(prev);
            long beforeCoalesce = rq.sector();
            rq.absorbFront(prev);
            dropCoalesced(rq, prev, beforeCoalesce);
        }
        index(rq);
        return true;
    }

    /** Requests in the META lane are the queue's own and always merge; every other one asks its elevator. */
    private boolean mayMerge(Request rq, IoRequest bio, MergeKind kind) {
        if (inMetaLane(rq)) return true;
        long start = System.nanoTime();
        boolean allow;
        try {
            allow = elevator.allowMerge(rq, bio, kind);
        } catch (Throwable t) {
            threw("allowMerge", t);
            return false;
        }
        return !stalled("allowMerge", start) && allow;
    }

    private void notifyMerged(Request rq, MergeKind kind, long previousSector) {
        if (inMetaLane(rq)) return;
        long start = System.nanoTime();
        try {
            elevator.merged(rq, kind, previousSector);
        } catch (Throwable t) {
            threw("merged", t);
            return;
        }
        stalled("merged", start);
    }

    private void dropCoalesced(Request survivor, Request gone, long previousSector) {
        coalesced++;
        if (inMetaLane(survivor)) {
            meta.remove(gone);
            return;
        }
        release(gone);
        long start = System.nanoTime();
        try {
            elevator.mergedRequests(survivor, gone, previousSector);
        } catch (Throwable t) {
            threw("mergedRequests", t);
            return;
        }
        stalled("mergedRequests", start);
    }

    /** A queued, indexed request is either in the META lane or held by the elevator. */
    private boolean inMetaLane(Request rq) {
        return rq.isMeta() && !holds(rq);
    }

    /** {@link Elevator#schedulesMeta}, false when it throws (the queue then keeps META in its lane). */
    private static boolean takesMeta(Elevator e) {
        try {
            return e.schedulesMeta();
        } catch (RuntimeException ex) {
            LOG.warn("io scheduler {} threw in schedulesMeta: {}; the queue keeps META requests itself",
                    e.getClass().getName(), describe(ex));
            return false;
        }
    }

    // ---- the elevator's requests, as the queue counts them ----

    private void hold(Request rq) {
        rq.holder = this;
        rq.heldPrev = heldTail;
        rq.heldNext = null;
        if (heldTail == null) heldHead = rq;
        else heldTail.heldNext = rq;
        heldTail = rq;
        heldCount++;
    }

    private void release(Request rq) {
        if (rq.heldPrev == null) heldHead = rq.heldNext;
        else rq.heldPrev.heldNext = rq.heldNext;
        if (rq.heldNext == null) heldTail = rq.heldPrev;
        else rq.heldNext.heldPrev = rq.heldPrev;
        rq.holder = null;
        rq.heldPrev = null;
        rq.heldNext = null;
        heldCount--;
    }

    private boolean holds(BlockRequest br) {
        return br instanceof Request rq && rq.holder == this;
    }

    /** Takes every held request off the list, in the order given. */
    private List<Request> releaseAll() {
        List<Request> all = new ArrayList<>(heldCount);
        while (heldHead != null) {
            Request rq = heldHead;
            release(rq);
            all.add(rq);
        }
        return all;
    }

    /** Why handing out {@code br} breaks the contract (it is not held by this queue's elevator). */
    private static String notHeld(BlockRequest br) {
        if (!(br instanceof Request rq)) return br + ", which the queue never gave it";
        if (rq.started) return rq + ", which was already dispatched";
        return rq + ", which it does not hold";
    }

    // ---- guarded calls into the elevator ----

    private void addToElevator(Request rq, long nowNanos) {
        hold(rq);
        long start = System.nanoTime();
        try {
            elevator.add(rq, nowNanos);
        } catch (Throwable t) {
            threw("add", t);
            return;
        }
        stalled("add", start);
    }

    /** The next request from the elevator, checked; a faulty elevator is retired and its successor asked. */
    private Request dispatchFromElevator(long nowNanos) {
        for (int attempt = 0; attempt < 4; attempt++) {
            Elevator e = elevator;
            long start = System.nanoTime();
            Dispatch d;
            try {
                d = e.dispatch(nowNanos);
            } catch (Throwable t) {
                threw("dispatch", t);
                continue;
            }
            if (stalled("dispatch", start)) continue;       // its answer is dropped; what it held is recovered
            if (d instanceof Dispatch.Issue issue) {
                BlockRequest br = issue.request();
                if (!holds(br)) {
                    retire("dispatch", "handed out " + notHeld(br), null);
                    continue;
                }
                Request rq = (Request) br;
                release(rq);
                unindex(rq);
                rq.issuedBy = e;
                return rq;
            }
            if (d instanceof Dispatch.WakeAt w) {
                if (w.nanos() <= nowNanos && attempt < 3) continue;   // a time already reached is served at once
                elevatorWakeNanos = w.nanos();
                return null;
            }
            if (d == null) {
                retire("dispatch", "answered null", null);
                continue;
            }
            if (heldCount == 0) return null;
            retire("dispatch", "answered idle while holding " + heldCount + " requests (lost them)", null);
        }
        return null;
    }

    private void completedByElevator(Request rq, long nowNanos) {
        long start = System.nanoTime();
        try {
            elevator.completed(rq, nowNanos);
        } catch (Throwable t) {
            threw("completed", t);
            return;
        }
        stalled("completed", start);
    }

    /** What {@code drainAll} gave back, checked; {@code fault} says how it broke the contract, else null. */
    private record Drained(List<Request> requests, String fault, Throwable cause) {}

    /**
     * Empties the elevator. Each request it hands back once that it holds is taken in its order; when it
     * throws, stalls, hands back one it does not hold, or keeps any, the rest come from the queue's own
     * list (in the order given) and the fault is reported for the caller to act on.
     */
    private Drained drainElevator() {
        long start = System.nanoTime();
        List<BlockRequest> given;
        try {
            given = elevator.drainAll();
        } catch (Throwable t) {
            rethrowFatal(t);
            return new Drained(releaseAll(), "threw " + describe(t), t);
        }
        List<Request> out = new ArrayList<>(heldCount);
        String fault = null;
        if (given == null) {
            fault = "answered null";
        } else {
            for (BlockRequest br : given) {
                if (!holds(br)) {
                    if (fault == null) fault = "handed back " + (out.contains(br) ? br + " twice" : notHeld(br));
                    continue;
                }
                Request rq = (Request) br;
                release(rq);
                out.add(rq);
            }
        }
        if (fault == null && heldCount > 0) fault = "kept " + heldCount + " requests (lost them)";
        if (fault == null) {
            try {
                int left = elevator.queued();
                if (left != 0) fault = "reports queued() " + left + " after handing back everything";
            } catch (Throwable t) {
                rethrowFatal(t);
                fault = "queued() threw " + describe(t);
            }
        }
        long took = System.nanoTime() - start;
        if (fault == null && overLimit(elevatorId, "drainAll", took)) fault = stallReason(took);
        out.addAll(releaseAll());
        return new Drained(out, fault, null);
    }

    private void drainForFlush() {
        for (Request rq : sync) ordered.add(rq);
        sync.clear();
        for (Request rq : meta) {
            unindex(rq);
            ordered.add(rq);
        }
        meta.clear();
        Drained d = drainElevator();
        for (Request rq : d.requests()) {
            unindex(rq);
            ordered.add(rq);
        }
        if (d.fault() != null) retire("drainAll", d.fault(), d.cause(), d.requests().size());
    }

    /** Requests waiting to be issued. */
    public int queuedRequests() {
        return ordered.size() + sync.size() + meta.size() + heldCount;
    }

    public int inFlight() {
        return inFlight.size();
    }

    /** Whether {@code rq} was issued and has not completed (a request failed as overdue no longer is). */
    public boolean isInFlight(Request rq) {
        return inFlight.contains(rq);
    }

    /** When the oldest request in flight was issued, or {@code Long.MAX_VALUE} with none. */
    public long oldestIssuedNanos() {
        long oldest = Long.MAX_VALUE;
        for (Request rq : inFlight) oldest = Math.min(oldest, rq.issuedNanos);
        return oldest;
    }

    /** The requests in flight issued at or before {@code issuedByNanos}. */
    public List<Request> inFlightIssuedBy(long issuedByNanos) {
        List<Request> out = new ArrayList<>();
        for (Request rq : inFlight) if (rq.issuedNanos <= issuedByNanos) out.add(rq);
        return out;
    }

    /**
     * The next request to issue at {@code nowNanos}, already marked started and counted, or null when none
     * may go now (see {@link #wakeAtNanos()} for when to ask again).
     */
    public Request next(long nowNanos) {
        lastNowNanos = nowNanos;
        if (plugged && nowNanos >= plugDeadlineNanos) plugged = false;
        if (inFlight.size() >= limits.queueDepth() || flushInFlight) return null;
        Request rq = null;
        if (!ordered.isEmpty()) {
            Request head = ordered.peek();
            if (head.isFlush() && !inFlight.isEmpty()) return null;
            rq = ordered.poll();
        } else if (!sync.isEmpty()) {
            rq = sync.poll();
        } else {
            if (plugged) return null;
            if (!meta.isEmpty()) {
                var it = meta.iterator();
                rq = it.next();
                it.remove();
                unindex(rq);
            } else {
                elevatorWakeNanos = Long.MAX_VALUE;
                rq = dispatchFromElevator(nowNanos);
            }
        }
        if (rq == null) return null;
        if (!inFlight.add(rq)) throw new IllegalStateException(rq + " issued twice by " + elevatorId);
        rq.started = true;
        rq.issuedNanos = nowNanos;
        if (rq.isFlush()) flushInFlight = true;
        requestsDispatched++;
        sectorsDispatched += rq.sectors();
        maxRequestSectors = Math.max(maxRequestSectors, rq.sectors());
        events.issued(rq, nowNanos);
        return rq;
    }

    /** When the queue wants {@link #next} called again even if nothing else happens; MAX_VALUE for never. */
    public long wakeAtNanos() {
        long plug = plugged && queuedRequests() > 0 && inFlight.size() < limits.queueDepth()
                ? plugDeadlineNanos : Long.MAX_VALUE;
        return Math.min(plug, elevatorWakeNanos);
    }

    /** The device finished {@code rq} (with {@code error} when it failed); every submission in it completes. */
    public void complete(Request rq, long nowNanos, Throwable error) {
        if (!inFlight.remove(rq)) throw new IllegalStateException(rq + " completed but not in flight");
        lastNowNanos = nowNanos;
        if (rq.isFlush()) flushInFlight = false;
        if (rq.issuedBy != null && rq.issuedBy == elevator) completedByElevator(rq, nowNanos);
        events.completed(rq, nowNanos, error != null);
        for (Request.Bio b : rq.bios) {
            completed++;
            IoRequest io = b.io();
            if (error == null) {
                b.done().accept(new IoCompletion(io.id(), io.op(), io.sector(), io.sectors(), b.queuedNanos(),
                        rq.issuedNanos, nowNanos, rq.sectors()), null);
            } else {
                b.done().accept(null, error instanceof IoException ? error
                        : new IoException.DeviceError(rq + " failed: " + error.getMessage(), error));
            }
        }
    }

    /**
     * {@code elevator_switch}: {@code fresh} (already built) takes every request the current elevator holds,
     * in the order the old one would have issued them; the old one is closed. Requests in flight complete
     * without telling either. Returns how many moved.
     *
     * <p>When the old elevator fails while handing its requests over (throws, stalls, or hands back a wrong
     * set), it is retired (recorded as failed) and {@code fresh} takes the requests from the queue's own list
     * instead; when {@code fresh} throws taking them, it is retired in turn and the default takes them.
     */
    public int switchTo(Elevator fresh, String freshId, long nowNanos) {
        lastNowNanos = nowNanos;
        Elevator old = elevator;
        String oldId = elevatorId;
        Drained d = drainElevator();
        if (d.fault() != null) recordFault(oldId, "drainAll", d.fault(), d.cause(), d.requests().size(), freshId);
        boolean freshTakesMeta = takesMeta(fresh);
        List<Request> moving = new ArrayList<>(d.requests().size() + meta.size());
        for (Request rq : d.requests()) {
            if (rq.isMeta() && !freshTakesMeta) meta.add(rq);     // back into the queue's own lane
            else moving.add(rq);
        }
        if (freshTakesMeta) {                                     // the lane's requests go to the elevator
            moving.addAll(meta);
            meta.clear();
        }
        for (Request rq : moving) hold(rq);
        elevator = fresh;
        elevatorId = freshId;
        elevatorTakesMeta = freshTakesMeta;
        elevatorWakeNanos = Long.MAX_VALUE;
        for (Request rq : moving) {
            long start = System.nanoTime();
            try {
                fresh.add(rq, nowNanos);
            } catch (Throwable t) {
                threw("add", t);              // every request is on the list: the default takes them all
                break;
            }
            if (stalled("add", start)) break;
        }
        close(old, oldId, d.fault() == null);
        return d.requests().size();
    }

    // ---- retiring a faulty elevator ----

    private static void rethrowFatal(Throwable t) {
        if (t instanceof VirtualMachineError && !(t instanceof StackOverflowError)) throw (VirtualMachineError) t;
    }

    private static String describe(Throwable t) {
        return t.getClass().getSimpleName() + (t.getMessage() == null ? "" : ": " + t.getMessage());
    }

    /**
     * Whether a call of {@code id}'s that took {@code tookNanos} counts as a stall: over the limit, and not a
     * built-in's (logged instead).
     */
    private boolean overLimit(String id, String callback, long tookNanos) {
        if (tookNanos <= stallLimitNanos) return false;
        if (!supervisor.isBuiltIn(id)) return true;
        LOG.warn("built-in io scheduler {} took {} ms in {} (limit {} ms); kept: a pause of the JVM or the machine",
                id, tookNanos / 1_000_000, callback, stallLimitNanos / 1_000_000);
        return false;
    }

    private String stallReason(long tookNanos) {
        return "stalled for " + tookNanos / 1_000_000 + " ms (limit " + stallLimitNanos / 1_000_000 + " ms)";
    }

    private void threw(String callback, Throwable t) {
        rethrowFatal(t);
        retire(callback, "threw " + describe(t), t);
    }

    /** Retires the elevator when the call that began at {@code startNanos} took too long; true if it did. */
    private boolean stalled(String callback, long startNanos) {
        long took = System.nanoTime() - startNanos;
        if (!overLimit(elevatorId, callback, took)) return false;
        retire(callback, stallReason(took), null);
        return true;
    }

    private void recordFault(String id, String callback, String reason, Throwable cause, int recovered,
                             String successor) {
        supervisor.retired(id, callback + " " + reason);
        LOG.error("io scheduler {} failed in {}: {}; retired, {} takes over. The queue recovered the {} requests "
                + "it held from its own records", id, callback, reason, successor, recovered, cause);
    }

    /**
     * Replaces the active elevator after a fault in {@code callback}: records it, builds the default (noop
     * when the default is the one failing or failed before), gives it every request on the queue's list in
     * the order first given, and closes the faulty one. A replacement that fails to start or to take the
     * requests is retired as well, down to noop.
     */
    private void retire(String callback, String reason, Throwable cause) {
        retire(callback, reason, cause, heldCount);
    }

    /** {@link #retire(String, String, Throwable)}, {@code recovered} requests having been taken from the list. */
    private void retire(String callback, String reason, Throwable cause, int recovered) {
        Elevator bad = elevator;
        String badId = elevatorId;
        String defaultId = supervisor.defaultId();
        boolean useDefault = !defaultId.equals(badId) && !supervisor.isFailed(defaultId);
        recordFault(badId, callback, reason, cause, recovered, useDefault ? defaultId : LAST_RESORT);
        String[] candidates = useDefault ? new String[] {defaultId, LAST_RESORT} : new String[] {LAST_RESORT};
        for (int i = 0; i < candidates.length; i++) {
            String id = candidates[i];
            boolean lastResort = i == candidates.length - 1;
            if (lastResort && !useDefault)
                LOG.error("io scheduler {} failed and it is the default ({}); running on {} as the last resort",
                        badId, defaultId, LAST_RESORT);
            Elevator next;
            try {
                next = lastResort ? NoopElevator.FACTORY.create(limits, Map.of()) : supervisor.build(id);
                for (Request rq = heldHead; rq != null; rq = rq.heldNext) next.add(rq, lastNowNanos);
            } catch (RuntimeException e) {
                if (lastResort) throw new IllegalStateException("the last-resort elevator refused the queue's requests", e);
                supervisor.retired(id, "add threw " + describe(e) + " while taking over from " + badId);
                LOG.error("io scheduler {} could not take over from {}: {}; running on {} as the last resort",
                        id, badId, describe(e), LAST_RESORT, e);
                continue;
            }
            elevator = next;
            elevatorId = id;
            elevatorTakesMeta = takesMeta(next);   // META it was given stays with it; new META follows the rule
            elevatorWakeNanos = Long.MAX_VALUE;
            break;
        }
        close(bad, badId, false);
    }

    /** Closes a retired elevator; a healthy one ({@code checked}) that throws or stalls in close is recorded as failed. */
    private void close(Elevator e, String id, boolean checked) {
        long start = System.nanoTime();
        try {
            e.close();
        } catch (Throwable t) {
            rethrowFatal(t);
            if (checked) recordFault(id, "close", "threw " + describe(t), t, 0, elevatorId);
            else LOG.warn("retired io scheduler {} threw in close: {}", id, describe(t));
            return;
        }
        long took = System.nanoTime() - start;
        if (checked && overLimit(id, "close", took)) recordFault(id, "close", stallReason(took), null, 0, elevatorId);
    }

    /**
     * Fails every request the queue holds, queued or in flight, with {@code error} (the queue is closing);
     * answers how many submissions were failed. The queue holds nothing afterwards.
     */
    public int abortAll(IoException error) {
        List<Request> all = new ArrayList<>(inFlight);
        inFlight.clear();
        flushInFlight = false;
        drainForFlush(); // every queued request, in dispatch order, into `ordered`
        all.addAll(ordered);
        ordered.clear();
        int failed = 0;
        for (Request rq : all) {
            for (Request.Bio b : rq.bios) {
                b.done().accept(null, error);
                failed++;
            }
        }
        return failed;
    }

    /**
     * The counters and the elevator's own; an elevator whose {@code stats} or {@code queued} throws or stalls,
     * or whose {@code queued} differs from what the queue gave it, is retired first.
     */
    public QueueStats stats() {
        Map<String, Object> elevatorStats = Map.of();
        for (int attempt = 0; attempt < 4; attempt++) {
            long start = System.nanoTime();
            int queued;
            try {
                queued = elevator.queued();
            } catch (Throwable t) {
                threw("queued", t);
                continue;
            }
            if (stalled("queued", start)) continue;
            if (queued != heldCount) {
                retire("queued", "reports " + queued + " requests while holding " + heldCount, null);
                continue;
            }
            start = System.nanoTime();
            try {
                elevatorStats = elevator.stats();
            } catch (Throwable t) {
                threw("stats", t);
                continue;
            }
            if (stalled("stats", start)) continue;
            break;
        }
        return new QueueStats(submissions, requestsDispatched, sectorsDispatched, maxRequestSectors, backMerges,
                frontMerges, coalesced, completed, elevatorId, elevatorStats);
    }
}
