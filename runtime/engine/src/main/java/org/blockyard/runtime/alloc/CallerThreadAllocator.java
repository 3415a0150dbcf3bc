package org.blockyard.runtime.alloc;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.BlockAllocator;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;

/**
 * What the lock peers share: the groups, the published figures, the policy, and calls answered on the
 * caller's thread as completed stages. {@link GlobalLockAllocator} guards it all with one lock,
 * {@link GroupLockAllocator} with one per group and one per file; everything here takes no lock.
 */
public abstract sealed class CallerThreadAllocator implements BlockAllocator
        permits GlobalLockAllocator, GroupLockAllocator {
    final AllocationPolicy policy;
    final VolumeState volume;
    final Geometry geometry;
    final BlockGroup[] groups;
    final int preallocMin;

    CallerThreadAllocator(Geometry geometry, AllocationPolicy policy, int preallocMinWindowBlocks) {
        this.policy = policy;
        this.preallocMin = preallocMinWindowBlocks;
        this.geometry = geometry;
        this.volume = new VolumeState(geometry);
        this.groups = new BlockGroup[geometry.groups()];
        for (int g = 0; g < groups.length; g++) {
            groups[g] = new BlockGroup(geometry, g, policy);
            groups[g].attach(volume);
            republish(g);
        }
    }

    @Override
    public Geometry geometry() {
        return geometry;
    }

    @Override
    public String policy() {
        return policy.id();
    }

    /** Direct access for setting up benchmark volumes and for checks; callers must not run concurrently with it. */
    public BlockGroup group(int g) {
        return groups[g];
    }

    /**
     * Publishes group {@code g}'s free count and free runs, as a group actor does after each change; its
     * holder guards the group (the lock that guards it is held, or nothing runs yet).
     */
    public void republish(int g) {
        volume.publishFree(g, groups[g].freeBlocks());
        volume.publishRuns(g, groups[g].largestFreeRun(), groups[g].freeRunBuckets());
    }

    /** Every file's extents, for checks. */
    public abstract Map<String, List<Extent>> fileExtents();

    /** The published sum: exact once no call is in flight. */
    @Override
    public CompletionStage<Long> freeBlocks() {
        return CompletableFuture.completedFuture(volume.totalFreeBlocks());
    }

    @Override
    public CompletionStage<Double> fragmentationScore() {
        return CompletableFuture.completedFuture(volume.fragmentationScore());
    }

    /** Runs {@code call} and answers its value, or its refusal, as a completed stage. */
    static <T> CompletionStage<T> done(Supplier<T> call) {
        try {
            return CompletableFuture.completedFuture(call.get());
        } catch (AllocationException e) {
            return CompletableFuture.failedFuture(e);
        }
    }
}
