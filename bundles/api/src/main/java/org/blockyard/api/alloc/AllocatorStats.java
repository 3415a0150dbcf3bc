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
 */
public record AllocatorStats(long freeBlocks, long dataBlocks, int windows, int provisionalSearches,
                             long messages, long searchSlices, long stashed) {}
