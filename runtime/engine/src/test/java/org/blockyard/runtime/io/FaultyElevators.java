package org.blockyard.runtime.io;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

import org.blockyard.api.io.BlockRequest;
import org.blockyard.api.io.Dispatch;
import org.blockyard.api.io.Elevator;
import org.blockyard.api.io.ElevatorDescriptor;
import org.blockyard.api.io.ElevatorFactory;
import org.blockyard.api.io.IoFlag;
import org.blockyard.api.io.IoOp;
import org.blockyard.api.io.IoRequest;
import org.blockyard.api.io.MergeKind;
import org.blockyard.api.io.QueueLimits;

/**
 * Deliberately broken elevators for the fault-isolation tests: each is a FIFO (as noop) with one bug that
 * shows after a number of calls, so the queue holds requests when it strikes.
 */
final class FaultyElevators {
    private FaultyElevators() {}

    /** A factory registering {@code id} whose elevators come from {@code make}. */
    static ElevatorFactory factory(String id, Supplier<Elevator> make) {
        ElevatorDescriptor d = new ElevatorDescriptor(id, List.of(), "broken on purpose, for tests", List.of());
        return new ElevatorFactory() {
            @Override public ElevatorDescriptor descriptor() { return d; }
            @Override public Elevator create(QueueLimits limits, Map<String, Long> tunables) { return make.get(); }
        };
    }

    /** A correct FIFO; subclasses break one call. */
    static class Fifo implements Elevator {
        final LinkedHashSet<BlockRequest> fifo = new LinkedHashSet<>();
        int adds, dispatches;

        @Override
        public void add(BlockRequest request, long nowNanos) {
            adds++;
            fifo.add(request);
        }

        @Override public boolean allowMerge(BlockRequest request, IoRequest submission, MergeKind kind) { return true; }
        @Override public void merged(BlockRequest request, MergeKind kind, long previousSector) {}

        @Override
        public void mergedRequests(BlockRequest request, BlockRequest next, long previousSector) {
            fifo.remove(next);
        }

        @Override
        public Dispatch dispatch(long nowNanos) {
            Iterator<BlockRequest> it = fifo.iterator();
            if (!it.hasNext()) return Dispatch.IDLE;
            BlockRequest rq = it.next();
            it.remove();
            dispatches++;
            return Dispatch.issue(rq);
        }

        @Override public void completed(BlockRequest request, long nowNanos) {}

        @Override
        public List<BlockRequest> drainAll() {
            List<BlockRequest> all = new ArrayList<>(fifo);
            fifo.clear();
            return all;
        }

        @Override public int queued() { return fifo.size(); }
        @Override public Map<String, Object> stats() { return Map.of("queued", fifo.size()); }
    }

    /** Throws from dispatch once it has handed out {@code after} requests. */
    static Elevator throwsInDispatch(int after) {
        return new Fifo() {
            @Override
            public Dispatch dispatch(long nowNanos) {
                if (dispatches >= after) throw new IllegalStateException("dispatch bug after " + after);
                return super.dispatch(nowNanos);
            }
        };
    }

    /** Throws from add, without keeping the request, once it has taken {@code after}. */
    static Elevator throwsInAdd(int after) {
        return new Fifo() {
            @Override
            public void add(BlockRequest request, long nowNanos) {
                if (adds >= after) throw new IllegalArgumentException("add bug after " + after);
                super.add(request, nowNanos);
            }
        };
    }

    /** Throws from drainAll (a FLUSH or a switch), keeping everything. */
    static Elevator throwsInDrainAll() {
        return new Fifo() {
            @Override
            public List<BlockRequest> drainAll() {
                throw new UnsupportedOperationException("drainAll bug");
            }
        };
    }

    /** After {@code after} requests, hands out one it was never given. */
    static Elevator dispatchesForeignRequest(int after) {
        return new Fifo() {
            @Override
            public Dispatch dispatch(long nowNanos) {
                if (dispatches >= after && !fifo.isEmpty()) return Dispatch.issue(forged());
                return super.dispatch(nowNanos);
            }
        };
    }

    /** After {@code after} requests, hands out again the one it handed out last. */
    static Elevator dispatchesTwice(int after) {
        return new Fifo() {
            BlockRequest last;

            @Override
            public Dispatch dispatch(long nowNanos) {
                if (dispatches >= after && last != null) return Dispatch.issue(last);
                Dispatch d = super.dispatch(nowNanos);
                if (d instanceof Dispatch.Issue i) last = i.request();
                return d;
            }
        };
    }

    /** Silently drops every {@code every}-th request it is given. */
    static Elevator losesRequests(int every) {
        return new Fifo() {
            @Override
            public void add(BlockRequest request, long nowNanos) {
                if (++adds % every == 0) return;
                fifo.add(request);
            }
        };
    }

    /** Once it has handed out {@code after} requests, one dispatch sleeps {@code sleepMillis}. */
    static Elevator stallsInDispatch(int after, long sleepMillis) {
        return new Fifo() {
            boolean slept;

            @Override
            public Dispatch dispatch(long nowNanos) {
                if (dispatches >= after && !slept) {
                    slept = true;
                    try {
                        Thread.sleep(sleepMillis);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                return super.dispatch(nowNanos);
            }
        };
    }

    private static BlockRequest forged() {
        return new BlockRequest() {
            @Override public long seq() { return -1; }
            @Override public long sector() { return 0; }
            @Override public int sectors() { return 8; }
            @Override public IoOp op() { return IoOp.WRITE; }
            @Override public Set<IoFlag> flags() { return EnumSet.noneOf(IoFlag.class); }
            @Override public long owner() { return 0; }
            @Override public long arrivalNanos() { return 0; }
            @Override public int submissions() { return 1; }
        };
    }
}
