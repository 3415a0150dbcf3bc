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
 * <li>{@code meta}: asynchronous META requests in arrival order; they merge, and go ahead of bulk data;</li>
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

    private Elevator elevator;
    private String elevatorId;

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

    public RequestQueue(QueueLimits limits, long capacitySectors, Elevator elevator, String elevatorId,
                        int unplugThreshold, long unplugDelayNanos, QueueEvents events) {
        if (capacitySectors <= 0) throw new IllegalArgumentException("device of " + capacitySectors + " sectors");
        if (unplugThreshold < 1) throw new IllegalArgumentException("unplug threshold must be at least 1");
        if (unplugDelayNanos < 0) throw new IllegalArgumentException("negative unplug delay");
        this.limits = limits;
        this.capacitySectors = capacitySectors;
        this.elevator = elevator;
        this.elevatorId = elevatorId;
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
        if (rq.isMeta()) meta.add(rq);
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

    /** Sector and kind in one key: op, META and AHEAD are the kind; different kinds never merge. */
    private static long key(long sector, IoOp op, Set<IoFlag> flags) {
        int k = (op == IoOp.WRITE ? 1 : 0) | (flags.contains(IoFlag.META) ? 2 : 0)
                | (flags.contains(IoFlag.AHEAD) ? 4 : 0);
        return (sector << 3) | k;
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

    /** META requests are the queue's own and always merge; every other one asks its elevator. */
    private boolean mayMerge(Request rq, IoRequest bio, MergeKind kind) {
        return rq.isMeta() || elevator.allowMerge(rq, bio, kind);
    }

    private void notifyMerged(Request rq, MergeKind kind, long previousSector) {
        if (!rq.isMeta()) elevator.merged(rq, kind, previousSector);
    }

    private void dropCoalesced(Request survivor, Request gone, long previousSector) {
        coalesced++;
        if (survivor.isMeta()) meta.remove(gone);
        else elevator.mergedRequests(survivor, gone, previousSector);
    }

    private void drainForFlush() {
        for (Request rq : sync) ordered.add(rq);
        sync.clear();
        for (Request rq : meta) {
            unindex(rq);
            ordered.add(rq);
        }
        meta.clear();
        for (BlockRequest br : elevator.drainAll()) {
            Request rq = (Request) br;
            unindex(rq);
            ordered.add(rq);
        }
    }

    /** Requests waiting to be issued. */
    public int queuedRequests() {
        return ordered.size() + sync.size() + meta.size() + elevator.queued();
    }

    public int inFlight() {
        return inFlight.size();
    }

    /**
     * The next request to issue at {@code nowNanos}, already marked started and counted, or null when none
     * may go now (see {@link #wakeAtNanos()} for when to ask again).
     */
    public Request next(long nowNanos) {
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
                Dispatch d = elevator.dispatch(nowNanos);
                if (d instanceof Dispatch.Issue issue) {
                    rq = (Request) issue.request();
                    unindex(rq);
                    rq.issuedBy = elevator;
                } else if (d instanceof Dispatch.WakeAt w) {
                    elevatorWakeNanos = w.nanos();
                }
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
        if (rq.isFlush()) flushInFlight = false;
        if (rq.issuedBy != null && rq.issuedBy == elevator) elevator.completed(rq, nowNanos);
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
     */
    public int switchTo(Elevator fresh, String freshId, long nowNanos) {
        Elevator old = elevator;
        List<BlockRequest> moved = old.drainAll();
        Set<BlockRequest> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (BlockRequest br : moved) {
            if (!seen.add(br))
                throw new IllegalStateException(elevatorId + " handed back " + br + " twice while draining");
        }
        if (old.queued() != 0)
            throw new IllegalStateException(elevatorId + " kept " + old.queued() + " requests after draining");
        for (BlockRequest br : moved) fresh.add(br, nowNanos);
        elevator = fresh;
        elevatorId = freshId;
        elevatorWakeNanos = Long.MAX_VALUE;
        old.close();
        return moved.size();
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

    public QueueStats stats() {
        return new QueueStats(submissions, requestsDispatched, sectorsDispatched, maxRequestSectors, backMerges,
                frontMerges, coalesced, completed, elevatorId, elevator.stats());
    }
}
