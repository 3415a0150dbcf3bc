package org.blockyard.plugin.noreservation;

import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.Geometry;

/**
 * ext3's {@code noreservation} mount option: no reservation windows, ext3's goals and group walk, first fit
 * from the goal. Concurrent appenders interleave block by block (seed 002); it is the baseline that
 * reservation windows are measured against. Stateless, so one instance serves every actor.
 */
final class NoReservationPolicy implements AllocationPolicy {

    static final String ID = "no-reservation";

    @Override
    public String id() {
        return ID;
    }

    /** 0: no windows at all. */
    @Override
    public int initialWindowBlocks() {
        return 0;
    }

    @Override
    public int nextWindowBlocks(int previousBlocks, long usedBlocks, long windowBlocks, int requestBlocks,
                                int groupDataBlocks) {
        return 0;
    }

    /** ext3 puts a regular file in its directory's group: files of one directory share it. */
    @Override
    public int homeGroup(String file, Volume volume) {
        int groups = volume.geometry().groups();
        int slash = file.lastIndexOf('/');
        String dir = slash <= 0 ? "/" : file.substring(0, slash);
        return Math.floorMod(dir.hashCode() * 0x9E3779B1, groups);
    }

    /** ext3 {@code find_goal}: after the last block when appending, else after the preceding one, else home. */
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
        return ID;
    }
}
