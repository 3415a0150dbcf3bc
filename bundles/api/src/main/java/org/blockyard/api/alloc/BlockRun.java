package org.blockyard.api.alloc;

/**
 * The answer to {@link BlockAllocator#getBlocks}: logical blocks
 * {@code [logicalStart, logicalStart + blocks)} of a file map to physical blocks
 * {@code [physicalStart, physicalStart + blocks)}.
 *
 * @param logicalStart  first logical block of the run (the one asked for)
 * @param physicalStart first physical block, or -1 when {@code blocks == 0} (a hole that was not created)
 * @param blocks        length of the run; 0 only for a hole looked up with {@code create == false}
 * @param fresh         true when the blocks were allocated by this call, false when they were already mapped
 * @param unwritten     true when the run is allocated but not yet written (ext4's unwritten extent): its
 *                      blocks hold whatever was there before, so a reader must see zeros, and the writer
 *                      converts it with {@link BlockAllocator#markWritten} once its data is on the device
 */
public record BlockRun(long logicalStart, long physicalStart, int blocks, boolean fresh, boolean unwritten) {
    public boolean isHole() {
        return blocks == 0;
    }

    public Extent extent() {
        return new Extent(physicalStart, blocks);
    }
}
