package org.blockyard.plugin.faultygoal;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.AllocationPolicyFactory;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.api.alloc.PolicyDescriptor;

/**
 * A deliberately faulty allocation policy for the host's in-framework tests, packed into a bundle by the
 * test: no windows, goals after the last block, and {@code goal} throws from the
 * {@value #HEALTHY_GOALS}th call on (counted across every actor that uses it).
 */
public final class FaultyGoalPolicyFactory implements AllocationPolicyFactory {
    /** Goals answered before it breaks, so some allocations are served by it first. */
    public static final int HEALTHY_GOALS = 20;

    static final PolicyDescriptor DESCRIPTOR = new PolicyDescriptor("faulty-goal", List.of(),
            "no windows; goal throws after a few calls", List.of());

    @Override
    public PolicyDescriptor descriptor() {
        return DESCRIPTOR;
    }

    @Override
    public AllocationPolicy create(Geometry geometry, Map<String, Long> tunables) {
        AtomicInteger goals = new AtomicInteger();
        return new AllocationPolicy() {
            @Override public String id() { return DESCRIPTOR.id(); }
            @Override public int initialWindowBlocks() { return 0; }

            @Override
            public int nextWindowBlocks(int previousBlocks, long usedBlocks, long windowBlocks, int requestBlocks,
                                        int groupDataBlocks) {
                return 0;
            }

            @Override
            public int homeGroup(String file, Volume volume) {
                return Math.floorMod(file.hashCode(), volume.geometry().groups());
            }

            @Override
            public long goal(long logicalBlock, long lastLogical, long lastPhysical, long precedingPhysical,
                             int homeGroup, Volume volume) {
                if (goals.incrementAndGet() > HEALTHY_GOALS)
                    throw new IllegalStateException("faulty goal broke after " + HEALTHY_GOALS + " calls");
                Geometry g = volume.geometry();
                if (lastPhysical >= 0 && lastPhysical + 1 < g.totalBlocks()) return lastPhysical + 1;
                return g.groupStart(homeGroup) + g.systemBlocks(homeGroup);
            }

            @Override
            public long windowSearchStart(long goal, int windowBlocks, GroupView group) {
                return goal >= 0 ? goal : group.firstDataBlock();
            }
        };
    }
}
