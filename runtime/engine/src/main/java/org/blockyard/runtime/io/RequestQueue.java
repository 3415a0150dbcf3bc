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
import org.blockyard.api.io.Elevator;
import org.blockyard.api.io.IoCompletion;
import org.blockyard.api.io.IoException;
import org.blockyard.api.io.IoFlag;
import org.blockyard.api.io.IoOp;
import org.blockyard.api.io.IoRequest;
import org.blockyard.api.io.MergeKind;
import org.blockyard.api.io.QueueLimits;
import org.blockyard.api.io.QueueStats;

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
 * <p><b>Faults in the elevator</b> (a plugin may be buggy; the queue must not stop): every call into it goes
 * through {@link GuardedElevator}, which keeps its own list of the requests the elevator holds, checks every
 * answer against it, and retires a faulty elevator for the default with every request on the list (its
 * header has the rules). Each request is thus issued exactly once, and every submission completes once.
 *
 * <p><b>Plugging</b> (Linux 2.6): a submission that finds nothing queued plugs the queue; it unplugs when
 * {@code unplugThreshold} requests are queued, after {@code unplugDelayNanos}, or on a SYNC or FLUSH
 * submission. While plugged, contiguous submissions merge instead of trickling out one by one.
 */
public final class RequestQueue {
    private final QueueLimits limits;
    private final long capacitySectors;
    private final int unplugThreshold;
    private final long unplugDelayNanos;
    private final QueueEvents events;
    /** The elevator, every call checked. */
    private final GuardedElevator elevator;
    /** The time of the latest call, for the calls that may retire an elevator without being given one. */
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
    private long nextSeq = 1;

    private long submissions, requestsDispatched, sectorsDispatched, backMerges, frontMerges, coalesced, completed;
    private int maxRequestSectors;

    /**
     * @param stallLimitNanos longest one elevator call may take before the elevator is retired (real time)
     */
    RequestQueue(QueueLimits limits, long capacitySectors, Elevator elevator, String elevatorId,
                 int unplugThreshold, long unplugDelayNanos, QueueEvents events,
                 GuardedElevator.Supervisor supervisor, long stallLimitNanos) {
        if (capacitySectors <= 0) throw new IllegalArgumentException("device of " + capacitySectors + " sectors");
        if (unplugThreshold < 1) throw new IllegalArgumentException("unplug threshold must be at least 1");
        if (unplugDelayNanos < 0) throw new IllegalArgumentException("negative unplug delay");
        this.limits = limits;
        this.capacitySectors = capacitySectors;
        this.elevator = new GuardedElevator(limits, elevator, elevatorId, supervisor, stallLimitNanos);
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
        return elevator.id();
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
            drainForFlush(nowNanos);
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
        if (rq.isMeta() && !elevator.takesMeta()) meta.add(rq);
        else elevator.add(rq, nowNanos);
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
        if (rq == null || rq.started || !fits(rq, bio.sectors()) || !mayMerge(rq, bio, MergeKind.BACK, nowNanos))
            return false;
        unindex(rq);
        long before = rq.sector();
        rq.appendBack(b);
        backMerges++;
        events.backMerged(bio, rq, nowNanos);
        notifyMerged(rq, MergeKind.BACK, before, nowNanos);
        Request next = byStart.get(key(rq.endSector(), rq));
        if (next != null && next != rq && fits(rq, next.sectors())) {
            unindex(next);
            rq.absorb(next);
            dropCoalesced(rq, next, before, nowNanos);
        }
        index(rq);
        return true;
    }

    private boolean tryFrontMerge(Request.Bio b, long nowNanos) {
        IoRequest bio = b.io();
        Request rq = byStart.get(key(bio.endSector(), bio.op(), bio.flags()));
        if (rq == null || rq.started || !fits(rq, bio.sectors()) || !mayMerge(rq, bio, MergeKind.FRONT, nowNanos))
            return false;
        unindex(rq);
        long before = rq.sector();
        rq.prependFront(b);
        frontMerges++;
        events.frontMerged(bio, rq, nowNanos);
        notifyMerged(rq, MergeKind.FRONT, before, nowNanos);
        Request prev = byEnd.get(key(rq.sector(), rq));
        if (prev != null && prev != rq && fits(rq, prev.sectors())) {
            unindex(prev);
            long beforeCoalesce = rq.sector();
            rq.absorbFront(prev);
            dropCoalesced(rq, prev, beforeCoalesce, nowNanos);
        }
        index(rq);
        return true;
    }

    /** Requests in the META lane are the queue's own and always merge; every other one asks its elevator. */
    private boolean mayMerge(Request rq, IoRequest bio, MergeKind kind, long nowNanos) {
        return inMetaLane(rq) || elevator.allowMerge(rq, bio, kind, nowNanos);
    }

    private void notifyMerged(Request rq, MergeKind kind, long previousSector, long nowNanos) {
        if (!inMetaLane(rq)) elevator.merged(rq, kind, previousSector, nowNanos);
    }

    private void dropCoalesced(Request survivor, Request gone, long previousSector, long nowNanos) {
        coalesced++;
        if (inMetaLane(survivor)) meta.remove(gone);
        else elevator.mergedRequests(survivor, gone, previousSector, nowNanos);
    }

    /** A queued, indexed request is either in the META lane or held by the elevator. */
    private boolean inMetaLane(Request rq) {
        return rq.isMeta() && !elevator.holds(rq);
    }

    private void drainForFlush(long nowNanos) {
        for (Request rq : sync) ordered.add(rq);
        sync.clear();
        for (Request rq : meta) {
            unindex(rq);
            ordered.add(rq);
        }
        meta.clear();
        for (Request rq : elevator.drainAll(nowNanos)) {
            unindex(rq);
            ordered.add(rq);
        }
    }

    /** Requests waiting to be issued. */
    public int queuedRequests() {
        return ordered.size() + sync.size() + meta.size() + elevator.held();
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
                rq = elevator.dispatch(nowNanos);
                if (rq != null) unindex(rq);
            }
        }
        if (rq == null) return null;
        if (!inFlight.add(rq)) throw new IllegalStateException(rq + " issued twice by " + elevator.id());
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
        return Math.min(plug, elevator.wakeAtNanos());
    }

    /** The device finished {@code rq} (with {@code error} when it failed); every submission in it completes. */
    public void complete(Request rq, long nowNanos, Throwable error) {
        if (!inFlight.remove(rq)) throw new IllegalStateException(rq + " completed but not in flight");
        lastNowNanos = nowNanos;
        if (rq.isFlush()) flushInFlight = false;
        elevator.completed(rq, nowNanos);
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
     * set), it is retired (recorded as failed) and {@code fresh} takes the requests from the guard's own list
     * instead; when {@code fresh} throws taking them, it is retired in turn and the default takes them.
     */
    public int switchTo(Elevator fresh, String freshId, long nowNanos) {
        lastNowNanos = nowNanos;
        GuardedElevator.Handover h = elevator.beginSwitch(freshId);
        boolean freshTakesMeta = GuardedElevator.takesMeta(fresh);
        List<Request> moving = new ArrayList<>(h.requests().size() + meta.size());
        for (Request rq : h.requests()) {
            if (rq.isMeta() && !freshTakesMeta) meta.add(rq);     // back into the queue's own lane
            else moving.add(rq);
        }
        if (freshTakesMeta) {                                     // the lane's requests go to the elevator
            moving.addAll(meta);
            meta.clear();
        }
        elevator.finishSwitch(h, fresh, freshId, freshTakesMeta, moving, nowNanos);
        return h.requests().size();
    }

    /**
     * Fails every request the queue holds, queued or in flight, with {@code error} (the queue is closing);
     * answers how many submissions were failed. The queue holds nothing afterwards.
     */
    public int abortAll(IoException error) {
        List<Request> all = new ArrayList<>(inFlight);
        inFlight.clear();
        flushInFlight = false;
        drainForFlush(lastNowNanos); // every queued request, in dispatch order, into `ordered`
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
        Map<String, Object> elevatorStats = elevator.stats(lastNowNanos);
        return new QueueStats(submissions, requestsDispatched, sectorsDispatched, maxRequestSectors, backMerges,
                frontMerges, coalesced, completed, elevator.id(), elevatorStats);
    }
}
