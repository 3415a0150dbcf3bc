package org.blockyard.runtime.alloc;

import org.blockyard.api.alloc.AllocationPolicy;

/**
 * The order in which one allocation visits groups (ext3_new_blocks): the goal group, then the others in
 * policy order, skipping groups too full to be worth asking; then, if reservation was on, the same walk
 * once more without windows before the answer is "no space". The goal group is never skipped for being
 * nearly full: it is then asked without a window.
 */
final class GroupWalk {
    private final AllocationPolicy policy;
    private final AllocationPolicy.Volume volume;
    private final int groups;
    private final int goalGroup;
    private final int windowBlocks;
    private boolean reserve;
    private int attempt = -1;

    GroupWalk(AllocationPolicy policy, AllocationPolicy.Volume volume, int goalGroup, int windowBlocks,
              boolean hasWindow) {
        this.policy = policy;
        this.volume = volume;
        this.groups = volume.geometry().groups();
        this.goalGroup = goalGroup;
        this.windowBlocks = windowBlocks;
        // ext3: for a file without a window yet, a goal group with fewer free blocks than a window turns
        // reservation off for this call.
        this.reserve = windowBlocks > 0
                && (hasWindow || policy.mayReserveIn(volume.freeBlocks(goalGroup), windowBlocks, true));
    }

    /** Whether the group returned by the last {@link #next()} is to be asked with a window. */
    boolean reserve() {
        return reserve;
    }

    boolean isGoalGroup(int group) {
        return attempt == 0 && group == goalGroup;
    }

    /** The next group to ask, or -1 when every pass is over. */
    int next() {
        while (true) {
            attempt++;
            if (attempt >= groups) {
                if (!reserve) return -1;
                reserve = false; // the last pass, ignoring reservations
                attempt = 0;
            }
            int g = attempt == 0 ? goalGroup : policy.groupAfter(goalGroup, attempt, groups);
            long free = volume.freeBlocks(g);
            if (free == 0) continue;
            if (attempt > 0 && reserve && !policy.mayReserveIn(free, windowBlocks, false)) continue;
            return g;
        }
    }
}
