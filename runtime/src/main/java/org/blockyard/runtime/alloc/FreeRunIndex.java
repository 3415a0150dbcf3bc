package org.blockyard.runtime.alloc;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The free runs of one group's {@link Bitmap}, by start and by size, so an extent allocation can ask
 * for the smallest run that holds a request instead of taking the first one after its hint (ext4
 * mballoc's buddy orders and {@code bb_counters}, Ceph's AVL allocator's size tree).
 *
 * <h2>Data</h2>
 * <ul>
 *   <li>{@code byStart}: run start → run length, group-relative; a run is a maximal stretch of clear
 *       bits.</li>
 *   <li>{@code buckets[k]}: the runs of length {@code [2^k, 2^(k+1))}, ordered by length then start,
 *       each as the key {@code length << 32 | start}; a bucket's set is created when it first gets a run,
 *       and {@code nonEmpty} has bit {@code k} set iff bucket {@code k} holds a run.</li>
 * </ul>
 * Memory is proportional to the number of free runs (two tree entries each) plus at most one set per
 * power of two up to the group size: a group of 256 blocks has 9 buckets, and about 450 bytes with one
 * run (a bitmap's worth of memory: the group's bitmap and summaries take about 370).
 *
 * <h2>Invariants</h2>
 * The runs are exactly the maximal free runs of the bitmap: none empty, none touching another. Every run
 * is in {@code byStart} and in the one bucket its length selects. The bitmap stays the truth: the index
 * is derived from it, and {@link BlockGroup} reports every bitmap change ({@link #claimed}, {@link #freed})
 * right after making it. {@link #check(Bitmap)} compares the two.
 *
 * <h2>Operations</h2>
 * <pre>
 *   rebuild(bitmap)        one bitmap walk (forEachFreeRun)
 *   claimed / freed        O(log runs): one run out, at most two in (or two out, one in)
 *   runAt                  O(log runs)
 *   largest, bucketMask    O(1) after the highest non-empty bucket (one bit scan)
 *   bySizeFrom(min)        ascending by length then start, from the first run of at least min blocks
 *   bySizeDescending       longest first
 * </pre>
 * Every change of the set of runs is reported to the {@link Listener}, if one is set, once per operation,
 * so volume-wide sums (the fragmentation score's buckets) can follow without a walk.
 *
 * <h2>Concurrency</h2>
 * None, like the bitmap: owned by the group's {@link BlockGroup}, so by one group actor (or the global
 * lock).
 */
final class FreeRunIndex {

    /**
     * Told of every change to the runs: a run of {@code removed} blocks left and runs of {@code added1}
     * and {@code added2} blocks came (0 = no such run).
     */
    @FunctionalInterface
    interface Listener {
        void runsChanged(int removed, int added1, int added2);
    }

    /** A free run {@code [start, start + length)}, group-relative. */
    record Run(int start, int length) {
        int end() {
            return start + length;
        }
    }

    private final TreeMap<Integer, Integer> byStart = new TreeMap<>();
    private final TreeSet<Long>[] buckets;
    private int nonEmpty;
    private Listener listener;

    /** An empty index for a bitmap of {@code sizeBits} bits (one bucket per power of two up to it). */
    @SuppressWarnings("unchecked")
    FreeRunIndex(int sizeBits) {
        this.buckets = new TreeSet[32 - Integer.numberOfLeadingZeros(sizeBits)];
    }

    /** Drops everything and indexes the free runs of {@code bitmap} (told to the listener as changes). */
    void rebuild(Bitmap bitmap) {
        for (Run r : runs()) {
            remove(r.start(), r.length());
            tell(r.length(), 0, 0);
        }
        bitmap.forEachFreeRun(0, bitmap.size(), (s, len) -> {
            add(s, len);
            tell(0, len, 0);
            return true;
        });
    }

    /**
     * Sets the listener: the old one is told every run leaves, the new one that every run enters, so a
     * listener's sums always hold exactly the runs indexed while it was set.
     */
    void listener(Listener l) {
        if (l == listener) return;
        if (listener != null) for (Map.Entry<Integer, Integer> e : byStart.entrySet()) listener.runsChanged(e.getValue(), 0, 0);
        listener = l;
        if (listener != null) for (Map.Entry<Integer, Integer> e : byStart.entrySet()) listener.runsChanged(0, e.getValue(), 0);
    }

    /** Bits {@code [from, from + count)}, all free until now, have been set: they lie inside one run. */
    void claimed(int from, int count) {
        if (count <= 0) return;
        Map.Entry<Integer, Integer> e = byStart.floorEntry(from);
        if (e == null || e.getKey() + e.getValue() < from + count)
            throw new IllegalStateException("claim [" + from + ", " + (from + count) + ") is not inside a free run"
                    + (e == null ? "" : "; the run before it is [" + e.getKey() + ", " + (e.getKey() + e.getValue()) + ")"));
        int s = e.getKey(), end = s + e.getValue();
        remove(s, end - s);
        if (from > s) add(s, from - s);
        if (end > from + count) add(from + count, end - from - count);
        tell(end - s, from - s, end - from - count);
    }

    /** Bits {@code [from, from + count)}, all used until now, have been cleared: merged with the neighbours. */
    void freed(int from, int count) {
        if (count <= 0) return;
        int s = from, end = from + count;
        Map.Entry<Integer, Integer> left = byStart.floorEntry(from - 1);
        if (left != null && left.getKey() + left.getValue() > from)
            throw new IllegalStateException("freed [" + from + ", " + end + ") overlaps free run ["
                    + left.getKey() + ", " + (left.getKey() + left.getValue()) + ")");
        int leftBlocks = 0, rightBlocks = 0;
        if (left != null && left.getKey() + left.getValue() == from) {
            s = left.getKey();
            leftBlocks = left.getValue();
            remove(s, leftBlocks);
        }
        Integer right = byStart.get(end);
        if (right != null) {
            rightBlocks = right;
            remove(end, rightBlocks);
            end += rightBlocks;
        }
        add(s, end - s);
        // Told as the merged run coming and the neighbours going: the same sums, in one call.
        if (listener != null) {
            if (leftBlocks > 0 && rightBlocks > 0) listener.runsChanged(rightBlocks, 0, 0);
            if (leftBlocks > 0 || rightBlocks > 0) listener.runsChanged(leftBlocks > 0 ? leftBlocks : rightBlocks, end - s, 0);
            else listener.runsChanged(0, end - s, 0);
        }
    }

    /** The run holding bit {@code bit}, or null when it is used. */
    Run runAt(int bit) {
        Map.Entry<Integer, Integer> e = byStart.floorEntry(bit);
        if (e == null || e.getKey() + e.getValue() <= bit) return null;
        return new Run(e.getKey(), e.getValue());
    }

    /** Length of the longest run, 0 when none. */
    int largest() {
        if (nonEmpty == 0) return 0;
        return (int) (buckets[31 - Integer.numberOfLeadingZeros(nonEmpty)].last() >>> 32);
    }

    /** Bit {@code k} set iff some run is {@code [2^k, 2^(k+1))} blocks long (ext4's {@code bb_counters}, as bits). */
    int bucketMask() {
        return nonEmpty;
    }

    int runCount() {
        return byStart.size();
    }

    /** Runs of at least {@code minBlocks}, shortest first, ties by lowest start. */
    Iterable<Run> bySizeFrom(int minBlocks) {
        int min = Math.max(1, minBlocks);
        return () -> new Iterator<>() {
            int k = 31 - Integer.numberOfLeadingZeros(min);
            Iterator<Long> it = k < buckets.length ? tail(k, (long) min << 32) : null;

            private Iterator<Long> tail(int bucket, long fromKey) {
                TreeSet<Long> b = buckets[bucket];
                return b == null ? null : b.tailSet(fromKey, true).iterator();
            }

            @Override
            public boolean hasNext() {
                while (it == null || !it.hasNext()) {
                    int higher = k + 1 >= 32 ? 0 : nonEmpty & (-1 << (k + 1));
                    if (higher == 0) return false;
                    k = Integer.numberOfTrailingZeros(higher);
                    it = buckets[k].iterator();
                }
                return true;
            }

            @Override
            public Run next() {
                if (!hasNext()) throw new java.util.NoSuchElementException();
                long key = it.next();
                return new Run((int) key, (int) (key >>> 32));
            }
        };
    }

    /** All runs, longest first, ties by highest start. */
    Iterable<Run> bySizeDescending() {
        return () -> new Iterator<>() {
            int k = 32;
            Iterator<Long> it;

            @Override
            public boolean hasNext() {
                while (it == null || !it.hasNext()) {
                    int lower = k == 0 ? 0 : nonEmpty & ((int) ((1L << k) - 1));
                    if (lower == 0) return false;
                    k = 31 - Integer.numberOfLeadingZeros(lower);
                    it = buckets[k].descendingIterator();
                }
                return true;
            }

            @Override
            public Run next() {
                if (!hasNext()) throw new java.util.NoSuchElementException();
                long key = it.next();
                return new Run((int) key, (int) (key >>> 32));
            }
        };
    }

    /** Every run by start. */
    List<Run> runs() {
        List<Run> out = new ArrayList<>(byStart.size());
        for (Map.Entry<Integer, Integer> e : byStart.entrySet()) out.add(new Run(e.getKey(), e.getValue()));
        return out;
    }

    /**
     * Throws {@link IllegalStateException} naming the first difference between the index and the free
     * runs of {@code bitmap}, or between the two views of the index.
     */
    void check(Bitmap bitmap) {
        List<Run> expected = new ArrayList<>();
        bitmap.forEachFreeRun(0, bitmap.size(), (s, len) -> expected.add(new Run(s, len)));
        List<Run> actual = runs();
        if (!expected.equals(actual)) {
            for (int i = 0; i < Math.max(expected.size(), actual.size()); i++) {
                Run x = i < expected.size() ? expected.get(i) : null, y = i < actual.size() ? actual.get(i) : null;
                if (x == null || !x.equals(y))
                    throw new IllegalStateException("free run " + i + ": bitmap has " + x + ", index has " + y);
            }
        }
        int inBuckets = 0;
        for (int k = 0; k < buckets.length; k++) {
            TreeSet<Long> b = buckets[k];
            boolean has = b != null && !b.isEmpty();
            if (has != ((nonEmpty >>> k & 1) != 0)) throw new IllegalStateException("bucket " + k + " mask bit wrong");
            if (!has) continue;
            for (long key : b) {
                int len = (int) (key >>> 32), s = (int) key;
                if (31 - Integer.numberOfLeadingZeros(len) != k || !Integer.valueOf(len).equals(byStart.get(s)))
                    throw new IllegalStateException("bucket " + k + " holds [" + s + ", +" + len + ") wrongly");
                inBuckets++;
            }
        }
        if (inBuckets != byStart.size())
            throw new IllegalStateException(inBuckets + " runs in buckets, " + byStart.size() + " by start");
    }

    private void add(int start, int length) {
        byStart.put(start, length);
        int k = 31 - Integer.numberOfLeadingZeros(length);
        NavigableSet<Long> b = buckets[k];
        if (b == null) b = buckets[k] = new TreeSet<>();
        b.add(key(start, length));
        nonEmpty |= 1 << k;
    }

    private void remove(int start, int length) {
        byStart.remove(start);
        int k = 31 - Integer.numberOfLeadingZeros(length);
        TreeSet<Long> b = buckets[k];
        b.remove(key(start, length));
        if (b.isEmpty()) nonEmpty &= ~(1 << k);
    }

    private void tell(int removed, int added1, int added2) {
        if (listener != null) listener.runsChanged(removed, added1, added2);
    }

    private static long key(int start, int length) {
        return (long) length << 32 | start;
    }
}
