package org.blockyard.api.alloc;

/**
 * A run of contiguous physical blocks, {@code [start, start + blocks)}.
 *
 * @param start  first block number (inclusive)
 * @param blocks number of blocks, at least 1
 */
public record Extent(long start, long blocks) implements Comparable<Extent> {
    public Extent {
        if (start < 0) throw new IllegalArgumentException("extent start below 0: " + start);
        if (blocks < 1) throw new IllegalArgumentException("extent of " + blocks + " blocks");
        if (blocks > Long.MAX_VALUE - start)
            throw new IllegalArgumentException("extent of " + blocks + " blocks at " + start + " ends past 2^63");
    }

    /** First block past the extent (exclusive end). */
    public long end() {
        return start + blocks;
    }

    public boolean contains(long block) {
        return block >= start && block < end();
    }

    public boolean overlaps(Extent other) {
        return start < other.end() && other.start < end();
    }

    @Override
    public int compareTo(Extent o) {
        return Long.compare(start, o.start);
    }

    @Override
    public String toString() {
        return "[" + start + "+" + blocks + ")";
    }
}
