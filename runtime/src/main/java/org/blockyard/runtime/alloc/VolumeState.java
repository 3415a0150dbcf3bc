package org.blockyard.runtime.alloc;

import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.Geometry;

/**
 * Counters that group actors publish and everyone may read without a message, like ext3's group
 * descriptors and per-CPU free counter: each group's free blocks (written only by that group's actor),
 * open files per home group (written only by the allocator actor), and message counters. Readers get a
 * value at most one message old; every decision taken on it is checked again by the actor that owns
 * the group.
 */
public final class VolumeState implements AllocationPolicy.Volume {
    private final Geometry geometry;
    private final AtomicLongArray freeBlocks;
    private final AtomicIntegerArray openFiles;
    private final LongAdder totalFree = new LongAdder();
    private final LongAdder messages = new LongAdder();
    private final LongAdder searchSlices = new LongAdder();
    private final LongAdder stashed = new LongAdder();

    public VolumeState(Geometry geometry) {
        this.geometry = geometry;
        this.freeBlocks = new AtomicLongArray(geometry.groups());
        this.openFiles = new AtomicIntegerArray(geometry.groups());
    }

    @Override
    public Geometry geometry() {
        return geometry;
    }

    @Override
    public long freeBlocks(int group) {
        return freeBlocks.get(group);
    }

    @Override
    public int openFiles(int group) {
        return openFiles.get(group);
    }

    /**
     * Free blocks on the whole volume, from the counts the groups published: exact when no group is in the
     * middle of publishing, O(cores) to read at any volume size.
     */
    public long totalFreeBlocks() {
        return totalFree.sum();
    }

    void publishFree(int group, long free) {
        long old = freeBlocks.getAndSet(group, free);
        if (old != free) totalFree.add(free - old);
    }

    void fileOpened(int homeGroup) {
        openFiles.incrementAndGet(homeGroup);
    }

    void fileClosed(int homeGroup) {
        openFiles.decrementAndGet(homeGroup);
    }

    void countMessage() {
        messages.increment();
    }

    void countSlice() {
        searchSlices.increment();
    }

    void countStashed() {
        stashed.increment();
    }

    public long messages() {
        return messages.sum();
    }

    public long searchSlices() {
        return searchSlices.sum();
    }

    public long stashed() {
        return stashed.sum();
    }
}
