package ${package};

#if ($kind == "policy")
import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.Geometry;

/**
 * ${pluginId}: every file's reservation window is {@code window_blocks} (at most half a group, at least the
 * request), and never grows; the goal is the block after the file's last one when it appends, else after
 * the nearest mapped block before it, else its home group, the group of its directory. The allocator's
 * actors call it concurrently: it keeps no state but its settings, and it never blocks.
 */
final class ${className} implements AllocationPolicy {

    private final int windowBlocks;

    ${className}(long windowBlocks, Geometry geometry) {
        this.windowBlocks = (int) Math.min(windowBlocks, geometry.blocksPerGroup() / 2);
    }

    @Override
    public String id() {
        return ${className}Factory.ID;
    }

    @Override
    public int initialWindowBlocks() {
        return windowBlocks;
    }

    @Override
    public int nextWindowBlocks(int previousBlocks, long usedBlocks, long windowBlocks, int requestBlocks,
                                int groupDataBlocks) {
        if (previousBlocks <= 0) return 0; // windows off
        return Math.min(Math.max(this.windowBlocks, requestBlocks), groupDataBlocks);
    }

    /** Files of one directory share a group. */
    @Override
    public int homeGroup(String file, Volume volume) {
        int slash = file.lastIndexOf('/');
        String dir = slash <= 0 ? "/" : file.substring(0, slash);
        return Math.floorMod(dir.hashCode() * 0x9E3779B1, volume.geometry().groups());
    }

    @Override
    public long goal(long logicalBlock, long lastLogical, long lastPhysical, long precedingPhysical, int homeGroup,
                     Volume volume) {
        Geometry g = volume.geometry();
        if (lastLogical >= 0 && lastPhysical >= 0 && logicalBlock == lastLogical + 1 && lastPhysical + 1 < g.totalBlocks())
            return lastPhysical + 1;
        if (precedingPhysical >= 0) return Math.min(precedingPhysical + 1, g.totalBlocks() - 1);
        return g.groupStart(homeGroup) + g.systemBlocks(homeGroup);
    }

    @Override
    public long windowSearchStart(long goal, int windowBlocks, GroupView group) {
        return goal >= 0 ? goal : group.firstDataBlock();
    }

    @Override
    public String toString() {
        return id();
    }
}
#else
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
 * ${pluginId}: requests go to the device in the order they arrived. A front merge (a submission joining a
 * queued request at its start) is refused unless {@code front_merges} is 1. The queue calls it from one
 * thread, its own: it needs no locks, and must never block.
 *
 * <p>Invariant: {@code queue} holds every request this elevator owns, each once, oldest first.
 */
final class ${className} implements Elevator {

    private final boolean frontMerges;
    private final ArrayDeque<BlockRequest> queue = new ArrayDeque<>();
    private long dispatched;

    ${className}(boolean frontMerges) {
        this.frontMerges = frontMerges;
    }

    @Override
    public void add(BlockRequest request, long nowNanos) {
        queue.addLast(request);
    }

    @Override
    public boolean allowMerge(BlockRequest request, IoRequest submission, MergeKind kind) {
        return kind != MergeKind.FRONT || frontMerges;
    }

    @Override
    public void merged(BlockRequest request, MergeKind kind, long previousSector) {}

    /** {@code next} was coalesced into {@code request}: it is no longer this elevator's. */
    @Override
    public void mergedRequests(BlockRequest request, BlockRequest next, long previousSector) {
        queue.remove(next);
    }

    @Override
    public Dispatch dispatch(long nowNanos) {
        BlockRequest next = queue.pollFirst();
        if (next == null) return Dispatch.IDLE;
        dispatched++;
        return Dispatch.issue(next);
    }

    @Override
    public void completed(BlockRequest request, long nowNanos) {}

    /** Everything still queued, for the elevator that takes over (a switch, an update of this bundle). */
    @Override
    public List<BlockRequest> drainAll() {
        List<BlockRequest> all = new ArrayList<>(queue);
        queue.clear();
        return all;
    }

    @Override
    public int queued() {
        return queue.size();
    }

    @Override
    public Map<String, Object> stats() {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("queued", queue.size());
        s.put("dispatched", dispatched);
        return s;
    }
}
#end
