package org.blockyard.runtime.io;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.blockyard.api.io.BlockRequest;
import org.blockyard.api.io.Dispatch;
import org.blockyard.api.io.Elevator;
import org.blockyard.api.io.IoRequest;
import org.blockyard.api.io.MergeKind;
import org.blockyard.api.io.QueueLimits;
import org.blockyard.runtime.io.elevator.NoopElevator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The queue's elevator as {@link RequestQueue} calls it: a plugin may be buggy, and the queue must not stop
 * (the elevators' counterpart of {@code GuardedPolicy}).
 *
 * <p><b>Data.</b> The guard keeps its own list of the requests the elevator holds: a request joins it when it
 * is given to {@code add} and leaves it when {@code dispatch} or {@code drainAll} hands it back, or when it
 * is coalesced away (O(1) links on the request, no allocation). The list is in the order the requests were
 * given, and it is the truth: the elevator's own answers are checked against it.
 *
 * <p><b>Faults.</b> Every call into the elevator is checked. It is <i>retired</i> when a call throws, when it
 * breaks the contract (hands out a request it does not hold: never given, already dispatched or returned
 * twice; answers idle while holding requests; leaves requests behind in {@code drainAll}; reports a
 * {@code queued()} that differs from the list), or when one call takes longer than {@code stallLimitNanos}
 * (real time, {@code System.nanoTime}, whatever clock the queue runs on; not for the queue's own elevators,
 * {@link Supervisor#isBuiltIn}). Retiring records the fault with the {@link Supervisor} (the registry lists
 * it as failed), builds the default elevator (or, when the default is the one that failed, noop as the last
 * resort) and gives it every request from the list, in the order they were first given; the faulty
 * elevator's own answers are never trusted. Each request is thus issued exactly once, and every submission
 * completes once.
 *
 * <p>Not thread-safe: the queue's thread calls it. Every call that may retire takes the time of the queue's
 * call, at which the successor is given the requests.
 */
final class GuardedElevator {
    private static final Logger LOG = LoggerFactory.getLogger(GuardedElevator.class);

    /** What the guard needs to retire a faulty elevator; {@link QueueSetup} answers from its registry. */
    interface Supervisor {
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

    private final QueueLimits limits;
    private final Supervisor supervisor;
    private final long stallLimitNanos;

    private Elevator elevator;
    private String elevatorId;
    /** Whether the elevator takes asynchronous META requests itself (asked once per elevator installed). */
    private boolean takesMeta;
    /** Requests the elevator holds, in the order given (linked through the requests); see the class comment. */
    private Request heldHead, heldTail;
    private int heldCount;
    /** When the elevator asked to be woken ({@code Dispatch.WakeAt}); MAX_VALUE for never. */
    private long wakeNanos = Long.MAX_VALUE;

    /** @param stallLimitNanos longest one elevator call may take before the elevator is retired (real time) */
    GuardedElevator(QueueLimits limits, Elevator elevator, String elevatorId, Supervisor supervisor,
                    long stallLimitNanos) {
        if (stallLimitNanos <= 0) throw new IllegalArgumentException("the elevator stall limit must be positive");
        this.limits = limits;
        this.supervisor = supervisor;
        this.stallLimitNanos = stallLimitNanos;
        this.elevator = elevator;
        this.elevatorId = elevatorId;
        this.takesMeta = takesMeta(elevator);
    }

    String id() {
        return elevatorId;
    }

    /** Whether the elevator takes asynchronous META requests itself (else the queue keeps them in its lane). */
    boolean takesMeta() {
        return takesMeta;
    }

    /** Requests the elevator holds. */
    int held() {
        return heldCount;
    }

    /** When the elevator wants {@link #dispatch} called again even if nothing else happens; MAX_VALUE for never. */
    long wakeAtNanos() {
        return wakeNanos;
    }

    /** {@link Elevator#schedulesMeta}, false when it throws (the queue then keeps META in its lane). */
    static boolean takesMeta(Elevator e) {
        try {
            return e.schedulesMeta();
        } catch (RuntimeException ex) {
            LOG.warn("io scheduler {} threw in schedulesMeta: {}; the queue keeps META requests itself",
                    e.getClass().getName(), describe(ex));
            return false;
        }
    }

    // ---- the elevator's requests, as the guard counts them ----

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

    /** Whether the elevator holds {@code br} (given by {@code add}, not handed back). */
    boolean holds(BlockRequest br) {
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

    // ---- checked calls ----

    void add(Request rq, long nowNanos) {
        hold(rq);
        long start = System.nanoTime();
        try {
            elevator.add(rq, nowNanos);
        } catch (Throwable t) {
            threw("add", t, nowNanos);
            return;
        }
        stalled("add", start, nowNanos);
    }

    /** The elevator's merge decision for a request it holds; false when the call failed. */
    boolean allowMerge(Request rq, IoRequest bio, MergeKind kind, long nowNanos) {
        long start = System.nanoTime();
        boolean allow;
        try {
            allow = elevator.allowMerge(rq, bio, kind);
        } catch (Throwable t) {
            threw("allowMerge", t, nowNanos);
            return false;
        }
        return !stalled("allowMerge", start, nowNanos) && allow;
    }

    void merged(Request rq, MergeKind kind, long previousSector, long nowNanos) {
        long start = System.nanoTime();
        try {
            elevator.merged(rq, kind, previousSector);
        } catch (Throwable t) {
            threw("merged", t, nowNanos);
            return;
        }
        stalled("merged", start, nowNanos);
    }

    /** {@code gone}, which the elevator held, was coalesced into {@code survivor}: off the list, and told. */
    void mergedRequests(Request survivor, Request gone, long previousSector, long nowNanos) {
        release(gone);
        long start = System.nanoTime();
        try {
            elevator.mergedRequests(survivor, gone, previousSector);
        } catch (Throwable t) {
            threw("mergedRequests", t, nowNanos);
            return;
        }
        stalled("mergedRequests", start, nowNanos);
    }

    /**
     * The next request from the elevator, checked and off the list, or null (idle, or a wake-up time, see
     * {@link #wakeAtNanos}); a faulty elevator is retired and its successor asked.
     */
    Request dispatch(long nowNanos) {
        wakeNanos = Long.MAX_VALUE;
        for (int attempt = 0; attempt < 4; attempt++) {
            Elevator e = elevator;
            long start = System.nanoTime();
            Dispatch d;
            try {
                d = e.dispatch(nowNanos);
            } catch (Throwable t) {
                threw("dispatch", t, nowNanos);
                continue;
            }
            if (stalled("dispatch", start, nowNanos)) continue;     // its answer is dropped; what it held is recovered
            if (d instanceof Dispatch.Issue issue) {
                BlockRequest br = issue.request();
                if (!holds(br)) {
                    retire("dispatch", "handed out " + notHeld(br), null, nowNanos);
                    continue;
                }
                Request rq = (Request) br;
                release(rq);
                rq.issuedBy = e;
                return rq;
            }
            if (d instanceof Dispatch.WakeAt w) {
                if (w.nanos() <= nowNanos && attempt < 3) continue;   // a time already reached is served at once
                wakeNanos = w.nanos();
                return null;
            }
            if (d == null) {
                retire("dispatch", "answered null", null, nowNanos);
                continue;
            }
            if (heldCount == 0) return null;
            retire("dispatch", "answered idle while holding " + heldCount + " requests (lost them)", null, nowNanos);
        }
        return null;
    }

    /** {@code rq} completed; the elevator is told if it is the one that issued it. */
    void completed(Request rq, long nowNanos) {
        if (rq.issuedBy == null || rq.issuedBy != elevator) return;
        long start = System.nanoTime();
        try {
            elevator.completed(rq, nowNanos);
        } catch (Throwable t) {
            threw("completed", t, nowNanos);
            return;
        }
        stalled("completed", start, nowNanos);
    }

    /** Every request the elevator holds, in the order it would have issued them; a faulty one is retired. */
    List<Request> drainAll(long nowNanos) {
        Drained d = drain();
        if (d.fault() != null) retire("drainAll", d.fault(), d.cause(), d.requests().size(), nowNanos);
        return d.requests();
    }

    /** What {@code drainAll} gave back, checked; {@code fault} says how it broke the contract, else null. */
    private record Drained(List<Request> requests, String fault, Throwable cause) {}

    /**
     * Empties the elevator. Each request it hands back once that it holds is taken in its order; when it
     * throws, stalls, hands back one it does not hold, or keeps any, the rest come from the list (in the
     * order given) and the fault is reported for the caller to act on.
     */
    private Drained drain() {
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

    /**
     * The first half of {@code elevator_switch}: what the current elevator held, in the order it would have
     * issued them. A fault while it hands them over is recorded ({@code successor} takes over); the requests
     * then come from the list. The elevator stays installed, holding nothing, until {@link #finishSwitch}.
     */
    Handover beginSwitch(String successor) {
        Drained d = drain();
        if (d.fault() != null) recordFault(elevatorId, "drainAll", d.fault(), d.cause(), d.requests().size(), successor);
        return new Handover(elevator, elevatorId, d.requests(), d.fault() == null);
    }

    /**
     * What {@link #beginSwitch} took from {@code old}; {@code clean} when it handed them over without a fault
     * (then it is still checked while it closes).
     */
    record Handover(Elevator old, String oldId, List<Request> requests, boolean clean) {}

    /**
     * The second half: {@code fresh} (already built) is installed and given {@code moving}, in that order; the
     * old one is closed. When {@code fresh} throws or stalls taking them it is retired in turn and the default
     * takes them all.
     */
    void finishSwitch(Handover h, Elevator fresh, String freshId, boolean freshTakesMeta, List<Request> moving,
                      long nowNanos) {
        for (Request rq : moving) hold(rq);
        elevator = fresh;
        elevatorId = freshId;
        takesMeta = freshTakesMeta;
        wakeNanos = Long.MAX_VALUE;
        for (Request rq : moving) {
            long start = System.nanoTime();
            try {
                fresh.add(rq, nowNanos);
            } catch (Throwable t) {
                threw("add", t, nowNanos);    // every request is on the list: the default takes them all
                break;
            }
            if (stalled("add", start, nowNanos)) break;
        }
        close(h.old(), h.oldId(), h.clean());
    }

    /**
     * {@code queued()} and {@code stats()} of the elevator; one whose {@code stats} or {@code queued} throws or
     * stalls, or whose {@code queued} differs from the list, is retired first and its successor asked.
     */
    Map<String, Object> stats(long nowNanos) {
        for (int attempt = 0; attempt < 4; attempt++) {
            long start = System.nanoTime();
            int queued;
            try {
                queued = elevator.queued();
            } catch (Throwable t) {
                threw("queued", t, nowNanos);
                continue;
            }
            if (stalled("queued", start, nowNanos)) continue;
            if (queued != heldCount) {
                retire("queued", "reports " + queued + " requests while holding " + heldCount, null, nowNanos);
                continue;
            }
            start = System.nanoTime();
            Map<String, Object> stats;
            try {
                stats = elevator.stats();
            } catch (Throwable t) {
                threw("stats", t, nowNanos);
                continue;
            }
            if (stalled("stats", start, nowNanos)) continue;
            return stats;
        }
        return Map.of();
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

    private void threw(String callback, Throwable t, long nowNanos) {
        rethrowFatal(t);
        retire(callback, "threw " + describe(t), t, nowNanos);
    }

    /** Retires the elevator when the call that began at {@code startNanos} took too long; true if it did. */
    private boolean stalled(String callback, long startNanos, long nowNanos) {
        long took = System.nanoTime() - startNanos;
        if (!overLimit(elevatorId, callback, took)) return false;
        retire(callback, stallReason(took), null, nowNanos);
        return true;
    }

    private void recordFault(String id, String callback, String reason, Throwable cause, int recovered,
                             String successor) {
        supervisor.retired(id, callback + " " + reason);
        LOG.error("io scheduler {} failed in {}: {}; retired, {} takes over. The queue recovered the {} requests "
                + "it held from its own records", id, callback, reason, successor, recovered, cause);
    }

    private void retire(String callback, String reason, Throwable cause, long nowNanos) {
        retire(callback, reason, cause, heldCount, nowNanos);
    }

    /**
     * Replaces the active elevator after a fault in {@code callback}, {@code recovered} requests having been
     * taken from the list: records it, builds the default (noop when the default is the one failing or failed
     * before), gives it every request on the list in the order first given, and closes the faulty one. A
     * replacement that fails to start or to take the requests is retired as well, down to noop.
     */
    private void retire(String callback, String reason, Throwable cause, int recovered, long nowNanos) {
        Elevator bad = elevator;
        String badId = elevatorId;
        String defaultId = supervisor.defaultId();
        String lastResort = ElevatorRegistry.LAST_RESORT;
        boolean useDefault = !defaultId.equals(badId) && !supervisor.isFailed(defaultId);
        recordFault(badId, callback, reason, cause, recovered, useDefault ? defaultId : lastResort);
        String[] candidates = useDefault ? new String[] {defaultId, lastResort} : new String[] {lastResort};
        for (int i = 0; i < candidates.length; i++) {
            String id = candidates[i];
            boolean isLastResort = i == candidates.length - 1;
            if (isLastResort && !useDefault)
                LOG.error("io scheduler {} failed and it is the default ({}); running on {} as the last resort",
                        badId, defaultId, lastResort);
            Elevator next;
            try {
                next = isLastResort ? NoopElevator.FACTORY.create(limits, Map.of()) : supervisor.build(id);
                for (Request rq = heldHead; rq != null; rq = rq.heldNext) next.add(rq, nowNanos);
            } catch (RuntimeException e) {
                if (isLastResort) throw new IllegalStateException("the last-resort elevator refused the queue's requests", e);
                supervisor.retired(id, "add threw " + describe(e) + " while taking over from " + badId);
                LOG.error("io scheduler {} could not take over from {}: {}; running on {} as the last resort",
                        id, badId, describe(e), lastResort, e);
                continue;
            }
            elevator = next;
            elevatorId = id;
            takesMeta = takesMeta(next);   // META it was given stays with it; new META follows the rule
            wakeNanos = Long.MAX_VALUE;
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
}
