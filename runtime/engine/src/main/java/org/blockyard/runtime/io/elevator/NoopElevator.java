package org.blockyard.runtime.io.elevator;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
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
 * noop (Linux {@code block/noop-iosched.c}): one FIFO in arrival order. It takes every merge the queue finds
 * and reorders nothing; a coalesced request keeps the FIFO place of the one that survives.
 */
public final class NoopElevator implements Elevator {

    public static final ElevatorDescriptor DESCRIPTOR = new ElevatorDescriptor("noop", List.of("none"),
            "first come, first served; merging only", List.of());

    public static final ElevatorFactory FACTORY = new ElevatorFactory() {
        @Override public ElevatorDescriptor descriptor() { return DESCRIPTOR; }
        @Override public Elevator create(QueueLimits limits, Map<String, Long> tunables) { return new NoopElevator(); }
    };

    private final LinkedHashSet<BlockRequest> fifo = new LinkedHashSet<>();
    private long dispatched;

    @Override
    public Dispatch dispatch(long nowNanos) {
        Iterator<BlockRequest> it = fifo.iterator();
        if (!it.hasNext()) return Dispatch.IDLE;
        BlockRequest rq = it.next();
        it.remove();
        dispatched++;
        return Dispatch.issue(rq);
    }

    @Override
    public void add(BlockRequest request, long nowNanos) {
        if (!fifo.add(request)) throw new IllegalStateException(request + " added twice");
    }

    @Override
    public boolean allowMerge(BlockRequest request, IoRequest submission, MergeKind kind) {
        return true;
    }

    @Override
    public void merged(BlockRequest request, MergeKind kind, long previousSector) {}

    @Override
    public void mergedRequests(BlockRequest request, BlockRequest next, long previousSector) {
        fifo.remove(next);
    }

    @Override
    public void completed(BlockRequest request, long nowNanos) {}

    @Override
    public List<BlockRequest> drainAll() {
        List<BlockRequest> all = new ArrayList<>(fifo);
        fifo.clear();
        return all;
    }

    @Override
    public int queued() {
        return fifo.size();
    }

    @Override
    public Map<String, Object> stats() {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("queued", fifo.size());
        s.put("dispatched", dispatched);
        s.put("fifo_head_sector", fifo.isEmpty() ? -1L : fifo.iterator().next().sector());
        return s;
    }
}
