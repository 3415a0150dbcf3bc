package org.blockyard.api.alloc;

/**
 * A snapshot of allocator counters.
 *
 * @param freeBlocks        free data blocks (system zone excluded)
 * @param dataBlocks        blocks that can ever be handed out
 * @param windows           reservation windows currently booked
 * @param provisionalSearches window searches currently running in slices
 * @param messages          messages handled by the group actors since start
 * @param searchSlices      bitmap search slices run since start
 * @param stashed           requests that waited behind a provisional window since start
 * @param loanedBlocks      free blocks lent to {@link AllocationSession}s and not handed out (counted in
 *                          {@code freeBlocks}), frees on their way back included
 * @param sessions          sessions open
 */
public record AllocatorStats(long freeBlocks, long dataBlocks, int windows, int provisionalSearches,
                             long messages, long searchSlices, long stashed, long loanedBlocks, int sessions) {

    /** The counters of an allocator that lends nothing. */
    public AllocatorStats(long freeBlocks, long dataBlocks, int windows, int provisionalSearches, long messages,
                          long searchSlices, long stashed) {
        this(freeBlocks, dataBlocks, windows, provisionalSearches, messages, searchSlices, stashed, 0, 0);
    }
}
