package org.blockyard.plugin.fifo;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.blockyard.api.io.BlockRequest;
import org.blockyard.api.io.Dispatch;
import org.blockyard.api.io.Elevator;
import org.blockyard.api.io.IoRequest;
import org.blockyard.api.io.MergeKind;

/**
 * fifo: requests go to the device strictly in the order they arrived. Unlike noop it refuses front merges
 * unless {@code front_merges} is 1: a front merge moves a queued request's start backwards, so the device
 * would see a sector before the one that arrived first. A coalesced request keeps the place of the earlier
 * of the two.
 *
 * <p>Invariant: {@code fifo} holds every request this elevator owns, each once, oldest first.
 */
final class FifoElevator implements Elevator {

    // Tunables (resolved by the queue against FifoElevatorFactory.DESCRIPTOR).
    private final boolean frontMerges;

    // State.
    private final ArrayDeque<BlockRequest> fifo = new ArrayDeque<>();
    private long dispatched;
    private long frontMergesRefused;

    FifoElevator(Map<String, Long> tunables) {
        this.frontMerges = tunables.getOrDefault(FifoElevatorFactory.FRONT_MERGES, 0L) != 0;
    }

    // Dispatch.

    @Override
    public Dispatch dispatch(long nowNanos) {
        BlockRequest rq = fifo.pollFirst();
        if (rq == null) return Dispatch.IDLE;
        dispatched++;
        return Dispatch.issue(rq);
    }

    // Callbacks.

    @Override
    public void add(BlockRequest request, long nowNanos) {
        fifo.addLast(request);
    }

    @Override
    public boolean allowMerge(BlockRequest request, IoRequest submission, MergeKind kind) {
        if (kind == MergeKind.FRONT && !frontMerges) {
            frontMergesRefused++;
            return false;
        }
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

    // Introspection.

    @Override
    public int queued() {
        return fifo.size();
    }

    @Override
    public Map<String, Object> stats() {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("queued", fifo.size());
        s.put("dispatched", dispatched);
        s.put("front_merges_refused", frontMergesRefused);
        s.put("fifo_head_sector", fifo.isEmpty() ? -1L : fifo.peekFirst().sector());
        return s;
    }
}
