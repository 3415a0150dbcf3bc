package org.blockyard.runtime.alloc;

import java.util.List;
import java.util.function.Consumer;

import org.blockyard.api.alloc.Extent;

/**
 * What the extent benchmarks drive: BlueStore's {@code Allocator} reduced to the calls an aging run
 * makes, synchronous, so an allocator without actors or futures plugs in as easily as one with them
 * ({@link DynamicFitAllocator}, the size-indexed baseline beside the lock peers; the benches adapt any
 * {@link org.blockyard.api.alloc.BlockAllocator}).
 */
public interface ExtentAllocator extends AutoCloseable {

    /**
     * Up to {@code wantBlocks} blocks in extents that are multiples of {@code unitBlocks}, start on a unit
     * boundary and hold at most {@code maxExtentBlocks} each (0 = no limit), near {@code hint} (-1 = none).
     *
     * @return the extents, fewer blocks than wanted when that is all there is; empty when there is no space
     */
    List<Extent> allocate(long wantBlocks, int unitBlocks, long maxExtentBlocks, long hint);

    void release(List<Extent> extents);

    /** Ceph's v3 score of the free space ({@link FragmentationScore}). */
    double fragmentationScore();

    long freeBlocks();

    /** Hands every free extent to {@code each}, ascending; between calls of the others, not during one. */
    void forEachFree(Consumer<Extent> each);

    @Override
    void close();
}
