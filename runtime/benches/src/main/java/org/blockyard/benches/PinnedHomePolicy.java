package org.blockyard.benches;

import java.util.Map;

import org.blockyard.api.alloc.AllocationPolicy;

/**
 * A policy that places each file's home group by its name and leaves every other decision to
 * {@code base}: a file named {@code /g<N>/...} lives in group {@code N} (modulo the group count), so a
 * benchmark can put each client in a group of its own and the victim in another, whatever the base
 * policy's spreading rule would have chosen. Names without that prefix go where {@code base} says.
 */
final class PinnedHomePolicy implements AllocationPolicy {
    private final AllocationPolicy base;

    PinnedHomePolicy(AllocationPolicy base) {
        this.base = base;
    }

    /** The name of a file whose home is {@code group}. */
    static String fileIn(int group, String name) {
        return "/g" + group + "/" + name;
    }

    @Override
    public int homeGroup(String file, Volume volume) {
        if (file.startsWith("/g")) {
            int slash = file.indexOf('/', 2);
            if (slash > 2) {
                try {
                    return Math.floorMod(Integer.parseInt(file.substring(2, slash)), volume.geometry().groups());
                } catch (NumberFormatException notPinned) {
                    // falls through to the base policy
                }
            }
        }
        return base.homeGroup(file, volume);
    }

    @Override
    public String id() {
        return base.id();
    }

    @Override
    public int initialWindowBlocks() {
        return base.initialWindowBlocks();
    }

    @Override
    public int nextWindowBlocks(int previousBlocks, long usedBlocks, long windowBlocks, int requestBlocks,
                                int groupDataBlocks) {
        return base.nextWindowBlocks(previousBlocks, usedBlocks, windowBlocks, requestBlocks, groupDataBlocks);
    }

    @Override
    public long goal(long logicalBlock, long lastLogical, long lastPhysical, long precedingPhysical, int homeGroup,
                     Volume volume) {
        return base.goal(logicalBlock, lastLogical, lastPhysical, precedingPhysical, homeGroup, volume);
    }

    @Override
    public int groupAfter(int goalGroup, int attempt, int groups) {
        return base.groupAfter(goalGroup, attempt, groups);
    }

    @Override
    public boolean mayReserveIn(long freeBlocks, int windowBlocks, boolean goalGroup) {
        return base.mayReserveIn(freeBlocks, windowBlocks, goalGroup);
    }

    @Override
    public long windowSearchStart(long goal, int windowBlocks, GroupView group) {
        return base.windowSearchStart(goal, windowBlocks, group);
    }

    @Override
    public Map<String, Object> stats() {
        return base.stats();
    }

    @Override
    public String toString() {
        return base + ", homes pinned by name";
    }
}
