package org.blockyard.plugin.stallingelevator;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.blockyard.api.io.BlockRequest;
import org.blockyard.api.io.Dispatch;
import org.blockyard.api.io.Elevator;
import org.blockyard.api.io.ElevatorDescriptor;
import org.blockyard.api.io.ElevatorFactory;
import org.blockyard.api.io.IoRequest;
import org.blockyard.api.io.MergeKind;
import org.blockyard.api.io.QueueLimits;

/**
 * A deliberately stalling elevator for the host's in-framework tests: arrival order, and the
 * {@value #HEALTHY_DISPATCHES}th {@code dispatch} takes 300 ms, three times the queue's stall limit.
 */
public final class StallingElevatorFactory implements ElevatorFactory {
    /** Requests dispatched before it breaks: enough that it has work in hand when it does. */
    public static final int HEALTHY_DISPATCHES = 200;

    static final ElevatorDescriptor DESCRIPTOR = new ElevatorDescriptor("stalling", List.of(),
            "arrival order until one dispatch stalls", List.of());

    @Override
    public ElevatorDescriptor descriptor() {
        return DESCRIPTOR;
    }

    @Override
    public Elevator create(QueueLimits limits, Map<String, Long> tunables) {
        return new Elevator() {
            private final ArrayDeque<BlockRequest> fifo = new ArrayDeque<>();
            private int dispatched;

            @Override public void add(BlockRequest rq, long now) { fifo.add(rq); }
            @Override public boolean allowMerge(BlockRequest rq, IoRequest s, MergeKind k) { return true; }
            @Override public void merged(BlockRequest rq, MergeKind k, long previousSector) {}
            @Override public void mergedRequests(BlockRequest rq, BlockRequest next, long previousSector) { fifo.remove(next); }

            @Override
            public Dispatch dispatch(long now) {
                if (fifo.isEmpty()) return Dispatch.IDLE;
                if (dispatched == HEALTHY_DISPATCHES) {
                    try {
                        Thread.sleep(300);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                dispatched++;
                return Dispatch.issue(fifo.poll());
            }

            @Override public void completed(BlockRequest rq, long now) {}
            @Override public List<BlockRequest> drainAll() { List<BlockRequest> all = new ArrayList<>(fifo); fifo.clear(); return all; }
            @Override public int queued() { return fifo.size(); }
            @Override public Map<String, Object> stats() { return Map.of("queued", fifo.size(), "dispatched", dispatched); }
        };
    }
}
