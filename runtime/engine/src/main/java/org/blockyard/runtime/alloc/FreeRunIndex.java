package org.blockyard.runtime.alloc;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.TreeMap;

/**
 * The free runs of one group's {@link Bitmap}, by address and by size, so an extent allocation can ask
 * for the smallest run that holds a request instead of taking the first one after its hint (ext4
 * mballoc's per-order free lists and {@code bb_counters}, Ceph's AVL allocator's size tree).
 *
 * <h2>Data</h2>
 * <ul>
 *   <li>{@code byEnd}: run end (exclusive, group-relative) → the run; a run is a maximal stretch of
 *       clear bits. Keyed by end so that the most common change, a claim at the front of a run (a file
 *       appending, an extent taken from a run's start), changes no key.</li>
 *   <li>{@code buckets[k]}, {@code counts[k]}: the runs of length {@code [2^k, 2^(k+1))}, unordered
 *       (each run knows its slot, so it leaves in O(1)); an array is created when its bucket first gets a
 *       run. {@code nonEmpty} has bit {@code k} set iff bucket {@code k} holds a run.</li>
 *   <li>{@code largest}: the longest run's length, recomputed from the highest bucket only when a run of
 *       that length shrank or left.</li>
 * </ul>
 * Memory is proportional to the number of free runs (a run object and a tree entry each, about 80 bytes)
 * plus one array per power of two in use up to the group size: a 256-block group has at most 9 buckets,
 * and its index takes about 330 bytes with one free run (33 MB for 100,000 such groups; the bitmap and
 * the rest of the group take about 370).
 *
 * <h2>Invariants</h2>
 * The runs are exactly the maximal free runs of the bitmap: none empty, none touching another. Every run
 * is in {@code byEnd} under its end and in slot {@code slot} of the one bucket its length selects. The
 * bitmap stays the truth: the index is derived from it, and {@link BlockGroup} reports every bitmap
 * change ({@link #claimed}, {@link #freed}) right after making it. {@link #check(Bitmap)} compares the
 * two.
 *
 * <h2>Operations</h2>
 * <pre>
 *   rebuild(bitmap)        one bitmap walk (forEachFreeRun)
 *   claimed / freed        O(log runs) tree lookups; a front claim changes no key and, unless the run
 *                          drops below a power of two, no bucket
 *   runAt                  O(log runs)
 *   largest, bucketMask    O(1), or one scan of the highest bucket after the longest run shrank
 *   bySizeFrom(min)        ascending by length then start: per bucket, one scan for the first, a sort of
 *                          the bucket only if the caller asks for a second
 *   bySizeDescending       longest first, the same way
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

    /** A free run {@code [start, start + length)}, group-relative, as the index hands it out. */
    record Run(int start, int length) {
        int end() {
            return start + length;
        }
    }

    /** A run as the index holds it: mutable, so a front claim updates it in place. */
    private static final class Node {
        int start;
        int length;
        int slot;

        Node(int start, int length) {
            this.start = start;
            this.length = length;
        }

        int end() {
            return start + length;
        }

        long key() {
            return (long) length << 32 | start;
        }
    }

    private final TreeMap<Integer, Node> byEnd = new TreeMap<>();
    private final Node[][] buckets;
    private final int[] counts;
    private int nonEmpty;
    private int largest;
    private boolean largestKnown = true;
    private Listener listener;

    /** An empty index for a bitmap of {@code sizeBits} bits (one bucket per power of two up to it). */
    FreeRunIndex(int sizeBits) {
        int n = 32 - Integer.numberOfLeadingZeros(sizeBits);
        this.buckets = new Node[n][];
        this.counts = new int[n];
    }

    /** Drops everything and indexes the free runs of {@code bitmap} (told to the listener as changes). */
    void rebuild(Bitmap bitmap) {
        for (Node r : new ArrayList<>(byEnd.values())) {
            detach(r);
            byEnd.remove(r.end());
            tell(r.length, 0, 0);
        }
        bitmap.forEachFreeRun(0, bitmap.size(), (s, len) -> {
            insert(new Node(s, len));
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
        if (listener != null) for (Node r : byEnd.values()) listener.runsChanged(r.length, 0, 0);
        listener = l;
        if (listener != null) for (Node r : byEnd.values()) listener.runsChanged(0, r.length, 0);
    }

    /** Bits {@code [from, from + count)}, all free until now, have been set: they lie inside one run. */
    void claimed(int from, int count) {
        if (count <= 0) return;
        Map.Entry<Integer, Node> e = byEnd.higherEntry(from);
        Node r = e == null ? null : e.getValue();
        if (r == null || r.start > from || r.end() < from + count)
            throw new IllegalStateException("claim [" + from + ", " + (from + count) + ") is not inside a free run"
                    + (r == null ? "" : "; the next run is [" + r.start + ", " + r.end() + ")"));
        int s = r.start, end = r.end(), old = r.length;
        if (from + count < end) {
            // The run keeps its end: it becomes the part after the claim, in place.
            resize(r, from + count, end - from - count);
            if (from > s) insert(new Node(s, from - s));
        } else {
            detach(r);
            byEnd.remove(end);
            if (from > s) {
                r.length = from - s;
                insert(r);
            }
        }
        tell(old, from - s, end - from - count);
    }

    /** Bits {@code [from, from + count)}, all used until now, have been cleared: merged with the neighbours. */
    void freed(int from, int count) {
        if (count <= 0) return;
        int end = from + count;
        Node left = byEnd.get(from);
        Map.Entry<Integer, Node> after = byEnd.higherEntry(from);
        Node right = after == null ? null : after.getValue();
        if (right != null && right.start < end)
            throw new IllegalStateException("freed [" + from + ", " + end + ") overlaps free run ["
                    + right.start + ", " + right.end() + ")");
        if (right != null && right.start != end) right = null;
        int leftBlocks = left == null ? 0 : left.length, rightBlocks = right == null ? 0 : right.length;
        int merged;
        if (right != null) {
            // The run after keeps its end and grows backwards over the freed blocks and the run before.
            int s = left != null ? left.start : from;
            if (left != null) {
                detach(left);
                byEnd.remove(from);
            }
            resize(right, s, right.end() - s);
            merged = right.length;
        } else if (left != null) {
            detach(left);
            byEnd.remove(from);
            left.length += count;
            insert(left);
            merged = left.length;
        } else {
            insert(new Node(from, count));
            merged = count;
        }
        // Told as the merged run coming and the neighbours going: the same sums.
        if (leftBlocks > 0 && rightBlocks > 0) tell(rightBlocks, 0, 0);
        tell(leftBlocks > 0 ? leftBlocks : rightBlocks, merged, 0);
    }

    /** The run holding bit {@code bit}, or null when it is used. */
    Run runAt(int bit) {
        Map.Entry<Integer, Node> e = byEnd.higherEntry(bit);
        if (e == null || e.getValue().start > bit) return null;
        return new Run(e.getValue().start, e.getValue().length);
    }

    /** Length of the longest run, 0 when none. */
    int largest() {
        if (!largestKnown) {
            int max = 0;
            if (nonEmpty != 0) {
                int k = 31 - Integer.numberOfLeadingZeros(nonEmpty);
                Node[] b = buckets[k];
                for (int i = 0; i < counts[k]; i++) max = Math.max(max, b[i].length);
            }
            largest = max;
            largestKnown = true;
        }
        return largest;
    }

    /** Bit {@code k} set iff some run is {@code [2^k, 2^(k+1))} blocks long (ext4's {@code bb_counters}, as bits). */
    int bucketMask() {
        return nonEmpty;
    }

    int runCount() {
        return byEnd.size();
    }

    /** Runs of at least {@code minBlocks}, shortest first, ties by lowest start. */
    Iterable<Run> bySizeFrom(int minBlocks) {
        int min = Math.max(1, minBlocks);
        int first = 31 - Integer.numberOfLeadingZeros(min);
        int mask = first >= 31 ? 0 : nonEmpty & (-1 << first);
        return () -> new BucketWalk(mask, min, true);
    }

    /** All runs, longest first, ties by highest start. */
    Iterable<Run> bySizeDescending() {
        return () -> new BucketWalk(nonEmpty, 1, false);
    }

    /**
     * Visits the buckets of {@code mask} in order; within a bucket, the first run comes from one scan,
     * and the bucket's keys are sorted only when a second is asked for.
     */
    private final class BucketWalk implements Iterator<Run> {
        private int mask;
        private final int min;
        private final boolean ascending;
        private long[] keys;
        private int n;
        private int next;
        private boolean sorted;

        BucketWalk(int mask, int min, boolean ascending) {
            this.mask = mask;
            this.min = min;
            this.ascending = ascending;
        }

        @Override
        public boolean hasNext() {
            while (keys == null || next >= n) {
                if (mask == 0) return false;
                int k = ascending ? Integer.numberOfTrailingZeros(mask) : 31 - Integer.numberOfLeadingZeros(mask);
                mask &= ~(1 << k);
                load(k);
            }
            return true;
        }

        private void load(int k) {
            Node[] b = buckets[k];
            int c = counts[k];
            keys = new long[c];
            n = 0;
            int best = -1;
            for (int i = 0; i < c; i++) {
                if (b[i].length < min) continue;
                long key = b[i].key();
                keys[n] = key;
                if (best < 0 || (ascending ? key < keys[best] : key > keys[best])) best = n;
                n++;
            }
            if (best > 0) {
                long t = keys[0];
                keys[0] = keys[best];
                keys[best] = t;
            }
            next = 0;
            sorted = n <= 1;
        }

        @Override
        public Run next() {
            if (!hasNext()) throw new NoSuchElementException();
            if (next == 1 && !sorted) {
                Arrays.sort(keys, 1, n);
                if (!ascending) reverse(keys, 1, n);
                sorted = true;
            }
            long key = keys[next++];
            return new Run((int) key, (int) (key >>> 32));
        }
    }

    private static void reverse(long[] a, int from, int to) {
        for (int i = from, j = to - 1; i < j; i++, j--) {
            long t = a[i];
            a[i] = a[j];
            a[j] = t;
        }
    }

    /** Every run by start. */
    List<Run> runs() {
        List<Run> out = new ArrayList<>(byEnd.size());
        for (Node r : byEnd.values()) out.add(new Run(r.start, r.length));
        return out;
    }

    /**
     * Throws {@link IllegalStateException} naming the first difference between the index and the free
     * runs of {@code bitmap}, or between the views of the index.
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
        for (Map.Entry<Integer, Node> e : byEnd.entrySet())
            if (e.getKey() != e.getValue().end()) throw new IllegalStateException("run filed under end " + e.getKey());
        int inBuckets = 0, max = 0;
        for (int k = 0; k < buckets.length; k++) {
            if ((counts[k] > 0) != ((nonEmpty >>> k & 1) != 0)) throw new IllegalStateException("bucket " + k + " mask bit wrong");
            for (int i = 0; i < counts[k]; i++) {
                Node r = buckets[k][i];
                if (r.slot != i || bucketOf(r.length) != k || byEnd.get(r.end()) != r)
                    throw new IllegalStateException("bucket " + k + " slot " + i + " holds [" + r.start + ", +" + r.length + ") wrongly");
                max = Math.max(max, r.length);
                inBuckets++;
            }
        }
        if (inBuckets != byEnd.size())
            throw new IllegalStateException(inBuckets + " runs in buckets, " + byEnd.size() + " by end");
        if (largest() != max) throw new IllegalStateException("largest " + largest() + ", runs say " + max);
    }

    private static int bucketOf(int length) {
        return 31 - Integer.numberOfLeadingZeros(length);
    }

    private void insert(Node r) {
        byEnd.put(r.end(), r);
        add(r);
    }

    /** Gives a run in the index a new start and length with the same end: no key changes. */
    private void resize(Node r, int start, int length) {
        int before = bucketOf(r.length);
        if (largestKnown && r.length == largest && length < largest) largestKnown = false;
        r.start = start;
        r.length = length;
        if (bucketOf(length) != before) {
            remove(before, r);
            add(r);
        } else if (largestKnown && length > largest) {
            largest = length;
        }
    }

    /** Takes a run out of its bucket; the caller takes it out of {@code byEnd}. */
    private void detach(Node r) {
        if (largestKnown && r.length == largest) largestKnown = false;
        remove(bucketOf(r.length), r);
    }

    private void add(Node r) {
        int k = bucketOf(r.length);
        Node[] b = buckets[k];
        if (b == null) b = buckets[k] = new Node[2];
        else if (counts[k] == b.length) b = buckets[k] = Arrays.copyOf(b, b.length * 2);
        r.slot = counts[k];
        b[counts[k]++] = r;
        nonEmpty |= 1 << k;
        if (largestKnown && r.length > largest) largest = r.length;
    }

    private void remove(int k, Node r) {
        Node[] b = buckets[k];
        int last = --counts[k];
        Node moved = b[last];
        b[r.slot] = moved;
        moved.slot = r.slot;
        b[last] = null;
        if (last == 0) nonEmpty &= ~(1 << k);
    }

    private void tell(int removed, int added1, int added2) {
        if (listener != null) listener.runsChanged(removed, added1, added2);
    }
}
