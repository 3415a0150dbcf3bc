package org.blockyard.runtime.alloc;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;

/**
 * The checks of the extent interface, shared by the actor facade and the global-lock baseline so that
 * both refuse the same calls with the same errors. Each throws the {@link AllocationException} that
 * refuses the call; none changes anything. Every bound is checked without overflow. Also the split of a
 * call's extents by group that every release and every give-back of blocks starts from.
 */
final class ExtentChecks {
    private ExtentChecks() {}

    static void allocate(Geometry geometry, long wantBlocks, int unitBlocks, long maxExtentBlocks, long hint) {
        if (unitBlocks < 1 || unitBlocks > geometry.blocksPerGroup())
            throw new AllocationException.InvalidRequest("allocation unit of " + unitBlocks
                    + " blocks: it must be between 1 and a group (" + geometry.blocksPerGroup() + " blocks)");
        if (wantBlocks < 1 || wantBlocks % unitBlocks != 0)
            throw new AllocationException.InvalidRequest("want " + wantBlocks
                    + " blocks: it must be at least 1 and a multiple of the unit (" + unitBlocks + ")");
        if (maxExtentBlocks < 0 || maxExtentBlocks > 0 && (maxExtentBlocks < unitBlocks || maxExtentBlocks % unitBlocks != 0))
            throw new AllocationException.InvalidRequest("maximum extent of " + maxExtentBlocks
                    + " blocks: 0 (no limit) or a multiple of the unit (" + unitBlocks + ")");
        if (hint < -1 || hint >= geometry.totalBlocks())
            throw new AllocationException.OutOfRange("hint " + hint + " is outside the volume [0, "
                    + geometry.totalBlocks() + ")");
    }

    /** Checks a release; answers its extents sorted by start. */
    static List<Extent> release(Geometry geometry, List<Extent> extents) {
        List<Extent> sorted = new ArrayList<>(extents);
        for (Extent e : sorted) {
            if (e == null) throw new AllocationException.InvalidRequest("a null extent in a release");
            if (e.start() >= geometry.totalBlocks() || e.blocks() > geometry.totalBlocks() - e.start())
                throw new AllocationException.OutOfRange("extent " + e + " does not lie inside the volume [0, "
                        + geometry.totalBlocks() + ")");
        }
        sorted.sort(null);
        for (int i = 1; i < sorted.size(); i++) {
            if (sorted.get(i - 1).end() > sorted.get(i).start())
                throw new AllocationException.DoubleFree("extents " + sorted.get(i - 1) + " and " + sorted.get(i)
                        + " overlap: the release would free blocks twice");
        }
        return sorted;
    }

    static void freeExtents(Geometry geometry, long fromBlock, long toBlock, int maxCount) {
        if (fromBlock < 0 || toBlock > geometry.totalBlocks() || fromBlock > toBlock)
            throw new AllocationException.OutOfRange("range [" + fromBlock + ", " + toBlock
                    + ") is not inside the volume [0, " + geometry.totalBlocks() + ")");
        if (maxCount < 1)
            throw new AllocationException.InvalidRequest("at most " + maxCount + " extents: ask for at least 1");
    }

    /** Splits extents at group boundaries and sorts the pieces by group. */
    static Map<Integer, List<Extent>> splitByGroup(Geometry geometry, List<Extent> extents) {
        Map<Integer, List<Extent>> out = new TreeMap<>();
        for (Extent e : extents) {
            long s = e.start();
            while (s < e.end()) {
                int g = geometry.groupOf(s);
                long stop = Math.min(e.end(), geometry.groupStart(g) + geometry.groupBlocks(g));
                out.computeIfAbsent(g, k -> new ArrayList<>()).add(new Extent(s, stop - s));
                s = stop;
            }
        }
        return out;
    }
}
