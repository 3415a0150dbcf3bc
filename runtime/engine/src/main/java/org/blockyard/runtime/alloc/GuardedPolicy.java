package org.blockyard.runtime.alloc;

import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;

import org.blockyard.api.alloc.AllocationPolicy;

/**
 * A plugin's policy as the actors call it: every call that throws, or answers what cannot be (a goal off
 * the volume, a group that does not exist, a window search starting outside its group, a negative window),
 * is answered by the built-in {@code fallback} instead, so the request in hand is served; a call that took
 * longer than {@code stallLimitNanos} keeps its answer but counts as a fault too. The first fault is
 * reported once to {@code onFault} (policy id, reason), which retires the plugin for the default.
 * Stateless apart from the reported flag, and thread-safe like the policies it wraps. The elevators' guard,
 * {@code GuardedElevator}, follows the same rules; it differs in what a fault costs: an elevator holds
 * requests, which the guard recovers from its own list for the default, where a policy's answer is replaced
 * call by call.
 */
final class GuardedPolicy implements AllocationPolicy {
    private final AllocationPolicy plugin;
    private final AllocationPolicy fallback;
    private final BiConsumer<String, String> onFault;
    private final long stallLimitNanos;
    private final AtomicBoolean reported = new AtomicBoolean();

    GuardedPolicy(AllocationPolicy plugin, AllocationPolicy fallback, long stallLimitNanos,
                  BiConsumer<String, String> onFault) {
        this.plugin = plugin;
        this.fallback = fallback;
        this.stallLimitNanos = stallLimitNanos;
        this.onFault = onFault;
    }

    /** Reports a call that began at {@code startNanos} and took longer than the limit. */
    private void timed(String call, long startNanos) {
        long took = System.nanoTime() - startNanos;
        if (took > stallLimitNanos)
            fault(call, "took " + took / 1_000_000 + " ms, over the limit of " + stallLimitNanos / 1_000_000 + " ms");
    }

    private void fault(String call, String reason) {
        if (reported.compareAndSet(false, true)) onFault.accept(plugin.id(), call + " " + reason);
    }

    private RuntimeException threw(String call, RuntimeException e) {
        fault(call, "threw " + e);
        return e;
    }

    @Override
    public String id() {
        return plugin.id();
    }

    @Override
    public int initialWindowBlocks() {
        try {
            int n = plugin.initialWindowBlocks();
            if (n >= 0) return n;
            fault("initialWindowBlocks", "answered " + n);
        } catch (RuntimeException e) {
            threw("initialWindowBlocks", e);
        }
        return fallback.initialWindowBlocks();
    }

    @Override
    public int nextWindowBlocks(int previousBlocks, long usedBlocks, long windowBlocks, int requestBlocks,
                                int groupDataBlocks) {
        try {
            long t0 = System.nanoTime();
            int n = plugin.nextWindowBlocks(previousBlocks, usedBlocks, windowBlocks, requestBlocks, groupDataBlocks);
            timed("nextWindowBlocks", t0);
            if (n >= 0) return n;
            fault("nextWindowBlocks", "answered " + n);
        } catch (RuntimeException e) {
            threw("nextWindowBlocks", e);
        }
        return fallback.nextWindowBlocks(previousBlocks, usedBlocks, windowBlocks, requestBlocks, groupDataBlocks);
    }

    @Override
    public int homeGroup(String file, Volume volume) {
        try {
            long t0 = System.nanoTime();
            int g = plugin.homeGroup(file, volume);
            timed("homeGroup", t0);
            if (g >= 0 && g < volume.geometry().groups()) return g;
            fault("homeGroup", "answered group " + g + " of " + volume.geometry().groups());
        } catch (RuntimeException e) {
            threw("homeGroup", e);
        }
        return fallback.homeGroup(file, volume);
    }

    @Override
    public long goal(long logicalBlock, long lastLogical, long lastPhysical, long precedingPhysical, int homeGroup,
                     Volume volume) {
        try {
            long t0 = System.nanoTime();
            long b = plugin.goal(logicalBlock, lastLogical, lastPhysical, precedingPhysical, homeGroup, volume);
            timed("goal", t0);
            if (b >= 0 && b < volume.geometry().totalBlocks()) return b;
            fault("goal", "answered block " + b + ", off the volume of " + volume.geometry().totalBlocks());
        } catch (RuntimeException e) {
            threw("goal", e);
        }
        return fallback.goal(logicalBlock, lastLogical, lastPhysical, precedingPhysical, homeGroup, volume);
    }

    @Override
    public int groupAfter(int goalGroup, int attempt, int groups) {
        try {
            long t0 = System.nanoTime();
            int g = plugin.groupAfter(goalGroup, attempt, groups);
            timed("groupAfter", t0);
            if (g >= 0 && g < groups) return g;
            fault("groupAfter", "answered group " + g + " of " + groups);
        } catch (RuntimeException e) {
            threw("groupAfter", e);
        }
        return fallback.groupAfter(goalGroup, attempt, groups);
    }

    @Override
    public boolean mayReserveIn(long freeBlocks, int windowBlocks, boolean goalGroup) {
        try {
            return plugin.mayReserveIn(freeBlocks, windowBlocks, goalGroup);
        } catch (RuntimeException e) {
            threw("mayReserveIn", e);
        }
        return fallback.mayReserveIn(freeBlocks, windowBlocks, goalGroup);
    }

    @Override
    public long windowSearchStart(long goal, int windowBlocks, GroupView group) {
        try {
            long t0 = System.nanoTime();
            long b = plugin.windowSearchStart(goal, windowBlocks, group);
            timed("windowSearchStart", t0);
            if (b >= group.firstDataBlock() && b < group.end()) return b;
            fault("windowSearchStart", "answered block " + b + ", outside group " + group.group());
        } catch (RuntimeException e) {
            threw("windowSearchStart", e);
        }
        return fallback.windowSearchStart(goal, windowBlocks, group);
    }

    @Override
    public Map<String, Object> stats() {
        try {
            return plugin.stats();
        } catch (RuntimeException e) {
            threw("stats", e);
        }
        return Map.of();
    }
}
