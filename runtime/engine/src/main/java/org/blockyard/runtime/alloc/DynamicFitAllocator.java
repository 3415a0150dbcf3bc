package org.blockyard.runtime.alloc;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Consumer;

import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;

/**
 * The size-indexed dynamic-fit baseline: Ceph's AvlAllocator (a port of ZFS's metaslab_df_alloc) over
 * the data blocks of a geometry, with ordered maps standing in for its two AVL trees.
 *
 * <p>Data: free extents by start ({@code start → end}, exclusive) and by size (key {@code length << 32 |
 * start}), a cursor per power-of-two alignment class ({@code lbas}), and the fragmentation score kept as
 * extents come and go. Invariant: free extents never touch or overlap (a release merges).
 *
 * <p>Choice of a piece of {@code size} blocks ({@code _allocate}): when the longest free extent is shorter
 * than the piece, the piece shrinks to it and best fit is used; when the longest free extent is below
 * {@code bf_threshold} (128 KiB) or less than {@code bf_free_pct} (4%) of the volume is free, best fit
 * by size; otherwise first fit forward from the cursor of the piece's alignment class ({@code size &
 * -size}), wrapping once, giving up after 100 extents or 16 MiB of address space (Ceph's
 * {@code ff_max_search_count} and {@code ff_max_search_bytes}), then best fit. Pieces start on a unit
 * boundary. The hint is ignored, as in Ceph.
 *
 * <p>Every call holds the allocator's monitor, as every call of AvlAllocator holds its mutex.
 */
public final class DynamicFitAllocator implements ExtentAllocator {
    private static final long BF_THRESHOLD_BYTES = 128 * 1024;
    private static final int BF_FREE_PCT = 4;
    private static final int FF_MAX_SEARCH_COUNT = 100;
    private static final long FF_MAX_SEARCH_BYTES = 16L << 20;

    private final long capacityBlocks;
    private final long bfThresholdBlocks;
    private final long ffMaxSearchBlocks;
    private final TreeMap<Long, Long> byStart = new TreeMap<>();
    private final TreeSet<Long> bySize = new TreeSet<>();
    private final long[] lbas = new long[64];
    private final FragmentationScore score;
    private long freeBlocks;

    /** Free space: the data blocks of every group of {@code geometry} (the same space Blockyard manages). */
    public DynamicFitAllocator(Geometry geometry) {
        if (geometry.totalBlocks() >= 1L << 31)
            throw new IllegalArgumentException("volume of " + geometry.totalBlocks() + " blocks: at most 2^31");
        this.score = new FragmentationScore(geometry.blockSizeBytes());
        this.bfThresholdBlocks = Math.max(1, BF_THRESHOLD_BYTES / geometry.blockSizeBytes());
        this.ffMaxSearchBlocks = Math.max(1, FF_MAX_SEARCH_BYTES / geometry.blockSizeBytes());
        long capacity = 0;
        for (int g = 0; g < geometry.groups(); g++) {
            long s = geometry.groupStart(g) + geometry.systemBlocks(g), e = geometry.groupStart(g) + geometry.groupBlocks(g);
            if (e > s) {
                insert(s, e);
                capacity += e - s;
            }
        }
        this.capacityBlocks = capacity;
    }

    @Override
    public synchronized List<Extent> allocate(long wantBlocks, int unitBlocks, long maxExtentBlocks, long hint) {
        List<Extent> out = new ArrayList<>();
        long got = 0;
        while (got < wantBlocks) {
            long size = wantBlocks - got;
            if (maxExtentBlocks > 0) size = Math.min(size, maxExtentBlocks);
            long[] piece = allocateOne(size, unitBlocks);
            if (piece == null) break;
            out.add(new Extent(piece[0], piece[1]));
            got += piece[1];
        }
        return out;
    }

    private long[] allocateOne(long size, int unit) {
        long largest = bySize.isEmpty() ? 0 : bySize.last() >>> 32;
        boolean force = false;
        if (largest < size) {
            if (largest < unit) return null;
            size = largest - largest % unit;
            force = true;
        }
        long freePct = freeBlocks * 100 / capacityBlocks;
        long start = -1;
        if (!force && largest >= bfThresholdBlocks && freePct >= BF_FREE_PCT) {
            int cls = 63 - Long.numberOfLeadingZeros(size & -size);
            start = pickBlockAfter(cls, size, unit);
        }
        while (start < 0) {
            start = pickBlockFits(size, unit);
            if (start >= 0 || !force) break;
            // Misaligned extents can hide the longest aligned piece: try smaller ones (Ceph does the same).
            size = (size >> 1) - (size >> 1) % unit;
            if (size < unit) break;
        }
        if (start < 0) return null;
        take(start, size);
        return new long[] {start, size};
    }

    /** First fit forward from the class's cursor, wrapping once (AvlAllocator::_pick_block_after). */
    private long pickBlockAfter(int cls, long size, int unit) {
        long cursor = lbas[cls];
        int count = 0;
        Long first = byStart.floorKey(cursor);
        if (first == null || byStart.get(first) <= cursor) first = byStart.ceilingKey(cursor);
        if (first != null) {
            for (Map.Entry<Long, Long> e : byStart.tailMap(first, true).entrySet()) {
                long at = alignUp(e.getKey(), unit);
                lbas[cls] = at + size;
                if (at + size <= e.getValue()) return at;
                if (++count > FF_MAX_SEARCH_COUNT || e.getKey() - first > ffMaxSearchBlocks) return -1;
            }
        }
        if (cursor == 0) return -1;
        for (Map.Entry<Long, Long> e : byStart.headMap(first == null ? Long.MAX_VALUE : first, false).entrySet()) {
            long at = alignUp(e.getKey(), unit);
            lbas[cls] = at + size;
            if (at + size <= e.getValue()) return at;
            if (++count > FF_MAX_SEARCH_COUNT || e.getKey() > ffMaxSearchBlocks) return -1;
        }
        return -1;
    }

    /** Best fit: the smallest extent an aligned piece fits in, lowest start first (_pick_block_fits). */
    private long pickBlockFits(long size, int unit) {
        Iterator<Long> it = bySize.tailSet(size << 32, true).iterator();
        while (it.hasNext()) {
            long key = it.next();
            long s = key & 0xffffffffL, e = s + (key >>> 32);
            long at = alignUp(s, unit);
            if (at + size <= e) return at;
        }
        return -1;
    }

    private void take(long at, long size) {
        Map.Entry<Long, Long> e = byStart.floorEntry(at);
        long s = e.getKey(), end = e.getValue();
        remove(s, end);
        if (at > s) insert(s, at);
        if (at + size < end) insert(at + size, end);
    }

    @Override
    public synchronized void release(List<Extent> extents) {
        for (Extent x : extents) {
            long s = x.start(), end = x.end();
            Map.Entry<Long, Long> left = byStart.floorEntry(s);
            if (left != null && left.getValue() > s) throw new IllegalStateException("double free of " + x);
            Map.Entry<Long, Long> right = byStart.ceilingEntry(s);
            if (right != null && right.getKey() < end) throw new IllegalStateException("double free of " + x);
            if (left != null && left.getValue() == s) {
                s = left.getKey();
                remove(left.getKey(), left.getValue());
            }
            if (right != null && right.getKey() == end) {
                end = right.getValue();
                remove(right.getKey(), right.getValue());
            }
            insert(s, end);
        }
    }

    private void insert(long s, long e) {
        byStart.put(s, e);
        bySize.add((e - s) << 32 | s);
        score.addFreeExtent(e - s);
        freeBlocks += e - s;
    }

    private void remove(long s, long e) {
        byStart.remove(s);
        bySize.remove((e - s) << 32 | s);
        score.removeFreeExtent(e - s);
        freeBlocks -= e - s;
    }

    private static long alignUp(long block, int unit) {
        long rem = block % unit;
        return rem == 0 ? block : block + unit - rem;
    }

    @Override
    public synchronized double fragmentationScore() {
        return score.score();
    }

    @Override
    public synchronized long freeBlocks() {
        return freeBlocks;
    }

    @Override
    public synchronized void forEachFree(Consumer<Extent> each) {
        byStart.forEach((s, e) -> each.accept(new Extent(s, e - s)));
    }

    @Override
    public void close() {}
}
