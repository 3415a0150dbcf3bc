package org.blockyard.runtime.alloc;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;

/**
 * Disjoint block ranges {@code [start, end)} that never span a group: adjacent ranges of one group merge,
 * ranges of two groups never do. With {@code bySize}, also ordered by length for best-fit takes. No locking
 * of its own: its holder guards it. Every operation is O(log n) in the ranges held, plus the ranges it
 * touches.
 */
final class Intervals {
    private final Geometry geometry;
    private final TreeMap<Long, Long> byStart = new TreeMap<>();
    /** {length, start}, shortest first; null when no best-fit takes are asked for. */
    private final TreeSet<long[]> bySize;
    private final boolean merge;
    private long blocks;

    Intervals(Geometry geometry, boolean bySize) {
        this(geometry, bySize, true);
    }

    /** With {@code merge} false, adjacent ranges stay apart: each keeps the length it was added with. */
    Intervals(Geometry geometry, boolean bySize, boolean merge) {
        this.geometry = geometry;
        this.merge = merge;
        this.bySize = bySize ? new TreeSet<>((a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1]))
                : null;
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
        if (merge && left != null && left.getValue() == from && geometry.groupOf(left.getKey()) == g) {
            s = left.getKey();
            drop(left.getKey(), left.getValue());
        }
        Long rightStart = byStart.ceilingKey(from);
        if (rightStart != null && rightStart < to)
            throw new IllegalStateException("[" + from + ", " + to + ") overlaps the range at " + rightStart);
        if (merge && rightStart != null && rightStart == to && geometry.groupOf(rightStart) == g) {
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

    /**
     * Takes the best fit for {@code want} blocks starting on a multiple of {@code align}, from ranges at most
     * {@code longest} blocks long: from the shortest range that holds them, the lowest aligned start in it. Null
     * when no such range holds them.
     */
    Extent takeBestFit(long want, int align, long longest) {
        for (long[] r : bySize.subSet(new long[] {want, Long.MIN_VALUE}, true, new long[] {longest, Long.MAX_VALUE}, true)) {
            long at = alignUp(r[1], align);
            long end = r[1] + r[0];
            if (at + want > end) continue;
            remove(at, at + want);
            return new Extent(at, want);
        }
        return null;
    }

    /**
     * Takes {@code want} blocks at {@code at} when {@code at} starts on a multiple of {@code align} and one range
     * holds all of {@code [at, at + want)}; null (nothing taken) otherwise.
     */
    Extent takeAt(long at, long want, int align) {
        if (Math.floorMod(at, (long) align) != 0) return null;
        Map.Entry<Long, Long> e = byStart.floorEntry(at);
        if (e == null || e.getValue() < at + want) return null;
        remove(at, at + want);
        return new Extent(at, want);
    }

    /** How many ranges of exactly {@code length} blocks start on a multiple of {@code align}, counted up to {@code enough}. */
    int rangesOf(long length, int align, int enough) {
        int n = 0;
        for (long[] r : bySize.subSet(new long[] {length, Long.MIN_VALUE}, true, new long[] {length, Long.MAX_VALUE}, true)) {
            if (n >= enough) break;
            if (Math.floorMod(r[1], (long) align) == 0) n++;
        }
        return n;
    }

    /** Every range, ascending; the set is left empty. */
    List<Extent> drain() {
        List<Extent> out = toList();
        byStart.clear();
        if (bySize != null) bySize.clear();
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
        if (bySize != null) {
            bySize.add(new long[] {t - s, s});
        }
    }

    private void drop(long s, long t) {
        byStart.remove(s);
        if (bySize != null) {
            bySize.remove(new long[] {t - s, s});
        }
    }

    private static long alignUp(long block, int align) {
        long rem = Math.floorMod(block, (long) align);
        return rem == 0 ? block : block + (align - rem);
    }
}
