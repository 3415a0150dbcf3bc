package org.blockyard.runtime.alloc;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Where a new stream should start, in O(log groups) instead of a scan: a segment tree over the groups
 * that keeps, per range, the runs of <em>idle</em> groups (no open file calls them home, at least half
 * their data blocks free) and the least crowded group (fewest open files, then most free blocks, then the
 * lowest number). {@link #spreadGroup} answers what {@link ReservationPolicy}'s scan answered: the middle of
 * the longest circular run of idle groups (the first one on a tie; a run that wraps past the last group
 * only when strictly longer), else the least crowded group, and group 0 when every group is idle.
 *
 * <p>Updates cost the hot paths one bit: a group whose free count or open files changed is marked dirty
 * ({@link #changed}, lock-free, a no-op when the bit is set already); the next query re-reads the dirty
 * groups and fixes their paths under the index's lock. A query therefore costs O(groups changed since the
 * last one × log groups) plus a scan of one summary word per 4,096 groups. Memory: five ints per node,
 * 5 MiB at 100,000 groups; the volume makes the index on the first query only.
 */
final class SpreadIndex {
    /** What the index reads a group's state from. */
    interface Source {
        int openFiles(int group);

        long freeBlocks(int group);
    }

    private final int groups;
    private final int size; // leaves, a power of two
    private final long halfData;
    private final Source source;
    private final AtomicLongArray dirty; // one bit per group
    private final AtomicLongArray summary; // one bit per word of dirty
    // Per node: prefix and suffix idle run, best run length and start, least crowded group.
    private final int[] pre, suf, best, bestStart, crowd;

    SpreadIndex(int groups, long halfDataBlocks, Source source) {
        this.groups = groups;
        this.halfData = halfDataBlocks;
        this.source = source;
        int s = 1;
        while (s < groups) s <<= 1;
        this.size = s;
        this.dirty = new AtomicLongArray((groups + 63) >>> 6);
        this.summary = new AtomicLongArray((dirty.length() + 63) >>> 6);
        pre = new int[2 * s];
        suf = new int[2 * s];
        best = new int[2 * s];
        bestStart = new int[2 * s];
        crowd = new int[2 * s];
        for (int i = 0; i < s; i++) {
            crowd[s + i] = i < groups ? i : -1;
            bestStart[s + i] = i;
        }
        for (int n = s - 1; n >= 1; n--) pull(n);
        for (int g = 0; g < groups; g++) changed(g);
    }

    /** Group {@code g}'s free count or open files changed. */
    void changed(int g) {
        int w = g >>> 6;
        long bit = 1L << (g & 63);
        if ((dirty.get(w) & bit) != 0) return;
        dirty.getAndAccumulate(w, bit, (a, b) -> a | b);
        int sw = w >>> 6;
        long sbit = 1L << (w & 63);
        if ((summary.get(sw) & sbit) == 0) summary.getAndAccumulate(sw, sbit, (a, b) -> a | b);
    }

    /** The group a new stream should start in; see the class comment. */
    synchronized int spreadGroup() {
        refresh();
        int allIdle = pre[1];
        if (allIdle == groups) return 0; // no group is taken: an empty volume starts at group 0
        int bestLen = best[1], start = bestStart[1];
        int wrap = suf[1] + pre[1]; // the run past the last group joined with the one before group 0
        if (wrap > bestLen) {
            bestLen = wrap;
            start = suf[1] > 0 ? groups - suf[1] : 0;
        }
        if (bestLen == 0) return crowd[1];
        return (start + bestLen / 2) % groups;
    }

    private void refresh() {
        for (int sw = 0; sw < summary.length(); sw++) {
            if (summary.get(sw) == 0) continue;
            long words = summary.getAndSet(sw, 0);
            while (words != 0) {
                int w = (sw << 6) + Long.numberOfTrailingZeros(words);
                words &= words - 1;
                long bits = dirty.getAndSet(w, 0);
                while (bits != 0) {
                    int g = (w << 6) + Long.numberOfTrailingZeros(bits);
                    bits &= bits - 1;
                    update(g);
                }
            }
        }
    }

    private void update(int g) {
        int n = size + g;
        boolean idle = source.openFiles(g) == 0 && source.freeBlocks(g) >= halfData;
        pre[n] = suf[n] = best[n] = idle ? 1 : 0;
        bestStart[n] = g;
        for (n >>>= 1; n >= 1; n >>>= 1) pull(n);
    }

    /** The first group under node {@code n}. */
    private int first(int n) {
        int depth = 31 - Integer.numberOfLeadingZeros(n);
        return (n - (1 << depth)) * (size >> depth);
    }

    /** Groups under node {@code n} (the leaves past the last group count none). */
    private int len(int n) {
        int depth = 31 - Integer.numberOfLeadingZeros(n);
        int span = size >> depth;
        return Math.max(0, Math.min(span, groups - (n - (1 << depth)) * span));
    }

    private void pull(int n) {
        int l = 2 * n, r = l + 1;
        int ll = len(l), lr = len(r);
        pre[n] = pre[l] == ll ? ll + pre[r] : pre[l];
        suf[n] = suf[r] == lr ? lr + suf[l] : suf[r];
        // The longest run, the first one on a tie: left's best, then the one across the middle, then right's.
        int b = best[l], bs = bestStart[l];
        int across = suf[l] + pre[r];
        if (across > b) {
            b = across;
            bs = first(r) - suf[l];
        }
        if (best[r] > b) {
            b = best[r];
            bs = bestStart[r];
        }
        best[n] = b;
        bestStart[n] = b == 0 ? first(n) : bs;
        crowd[n] = lessCrowded(crowd[l], crowd[r]);
    }

    private int lessCrowded(int a, int b) {
        if (a < 0) return b;
        if (b < 0) return a;
        int oa = source.openFiles(a), ob = source.openFiles(b);
        if (oa != ob) return oa < ob ? a : b;
        long fa = source.freeBlocks(a), fb = source.freeBlocks(b);
        if (fa != fb) return fa > fb ? a : b;
        return Math.min(a, b);
    }
}
