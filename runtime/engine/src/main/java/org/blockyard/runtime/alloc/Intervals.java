package org.blockyard.runtime.alloc;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;

/**
 * Disjoint block ranges {@code [start, end)} that never span a group: adjacent ranges of one group merge,
 * ranges of two groups never do. No locking
 * of its own: its holder guards it. Every operation is O(log n) in the ranges held, plus the ranges it
 * touches.
 */
final class Intervals {
    private final Geometry geometry;
    private final TreeMap<Long, Long> byStart = new TreeMap<>();
    private long blocks;

    Intervals(Geometry geometry) {
        this.geometry = geometry;
    }

    long blocks() {
        return blocks;
    }

    /** Whether every block of {@code [from, to)} is held. */
    boolean covers(long from, long to) {
        Map.Entry<Long, Long> e = byStart.floorEntry(from);
        return e != null && e.getValue() >= to;
    }

    /** Whether any block of {@code [from, to)} is held. */
    boolean intersects(long from, long to) {
        Map.Entry<Long, Long> e = byStart.floorEntry(from);
        if (e != null && e.getValue() > from) return true;
        Long next = byStart.higherKey(from);
        return next != null && next < to;
    }

    /** Adds {@code [from, to)}, which must lie in one group and hold no block held already. */
    void add(long from, long to) {
        if (from >= to) return;
        int g = geometry.groupOf(from);
        long s = from, t = to;
        Map.Entry<Long, Long> left = byStart.floorEntry(from);
        if (left != null && left.getValue() > from)
            throw new IllegalStateException("[" + from + ", " + to + ") overlaps [" + left.getKey() + ", "
                    + left.getValue() + ")");
        if (left != null && left.getValue() == from && geometry.groupOf(left.getKey()) == g) {
            s = left.getKey();
            drop(left.getKey(), left.getValue());
        }
        Long rightStart = byStart.ceilingKey(from);
        if (rightStart != null && rightStart < to)
            throw new IllegalStateException("[" + from + ", " + to + ") overlaps the range at " + rightStart);
        if (rightStart != null && rightStart == to && geometry.groupOf(rightStart) == g) {
            t = byStart.get(rightStart);
            drop(rightStart, t);
        }
        put(s, t);
        blocks += to - from;
    }

    /** Removes whatever of {@code [from, to)} is held; answers how many blocks that was. */
    long remove(long from, long to) {
        long removed = 0;
        Map.Entry<Long, Long> e = byStart.floorEntry(from);
        if (e == null || e.getValue() <= from) e = byStart.higherEntry(from);
        while (e != null && e.getKey() < to) {
            long s = e.getKey(), t = e.getValue();
            drop(s, t);
            if (s < from) put(s, from);
            if (t > to) put(to, t);
            removed += Math.min(t, to) - Math.max(s, from);
            e = byStart.higherEntry(s);
        }
        blocks -= removed;
        return removed;
    }

    /** Every range, ascending; the set is left empty. */
    List<Extent> drain() {
        List<Extent> out = toList();
        byStart.clear();
        blocks = 0;
        return out;
    }

    List<Extent> toList() {
        List<Extent> out = new ArrayList<>(byStart.size());
        for (Map.Entry<Long, Long> e : byStart.entrySet()) out.add(new Extent(e.getKey(), e.getValue() - e.getKey()));
        return out;
    }

    private void put(long s, long t) {
        byStart.put(s, t);
    }

    private void drop(long s, long t) {
        byStart.remove(s);
    }
}
