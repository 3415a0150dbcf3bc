package org.blockyard.api.alloc;

/**
 * One {@link BlockAllocator#getBlocks(String, long, int, boolean)} call, as an element of a batch
 * ({@link BlockAllocator#getBlocks(String, java.util.List)}).
 *
 * @param logicalBlock first logical block to map
 * @param maxBlocks    most blocks to map or allocate, at least 1
 * @param create       allocate a hole's blocks (true) or only look the mapping up (false)
 */
public record MapRequest(long logicalBlock, int maxBlocks, boolean create) {
    /** An append of {@code blocks} new blocks at {@code logicalBlock}. */
    public static MapRequest allocate(long logicalBlock, int blocks) {
        return new MapRequest(logicalBlock, blocks, true);
    }
}
