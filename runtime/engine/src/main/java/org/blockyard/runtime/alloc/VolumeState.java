package org.blockyard.runtime.alloc;

import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.Geometry;

/**
 * Counters that group actors publish and everyone may read without a message, like ext3's group
 * descriptors and per-CPU free counter: each group's free blocks and longest free run (written only by
 * that group's actor, and by the allocator actor before it spawns the group), open files per home group
 * (written only by the allocator actor), the fragmentation score's sums, and message counters. Readers
 * get a value at most one message old; every decision taken on it is checked again by the actor that
 * owns the group.
 *
 * <p>The fragmentation score is kept as Ceph's FastScore keeps it: each group's {@link FreeRunIndex}
 * reports every free run that appears or disappears, and the run's two integer contributions go to
 * volume-wide per-power-of-two sums ({@link FragmentationScore} has the formula). Once the actors are
 * idle, {@link #fragmentationScore()} equals the score of a full enumeration of free extents, with one
 * exception: a run that ends at a group's last block and one that starts at the next group's first
 * block count as two here, while an enumeration merges them. No geometry built by {@code Geometry.of}
 * has such runs (every group starts with its system zone); a hand-made geometry without a system zone
 * gets a score slightly too high.
 */
public final class VolumeState implements AllocationPolicy.Volume {
    private final Geometry geometry;
    private final AtomicLongArray freeBlocks;
    private final AtomicIntegerArray openFiles;
    /**
     * One atomic sum, not a {@link LongAdder}: an adder's sum is no snapshot, so a reader could count a
     * group's allocation without the free that came before it in another group, and see fewer blocks free
     * than there are (below zero on a full volume). Each group's share here is a count it once published.
     */
    private final AtomicLong totalFree = new AtomicLong();
    private final AtomicIntegerArray largestFreeRun;
    private final AtomicIntegerArray runBuckets;
    private final LongAdder[] scoreBuckets = new LongAdder[64];
    private final int blockLog2;
    private final FreeRunIndex.Listener scoreListener = this::freeRunsChanged;
    private volatile SpreadIndex spread; // made on the first spreadGroup(): only the extended reservation policy asks
    private final LongAdder onLoan = new LongAdder();
    private final LongAdder messages = new LongAdder();
    private final LongAdder searchSlices = new LongAdder();
    private final LongAdder stashed = new LongAdder();

    public VolumeState(Geometry geometry) {
        this.geometry = geometry;
        this.freeBlocks = new AtomicLongArray(geometry.groups());
        this.openFiles = new AtomicIntegerArray(geometry.groups());
        this.largestFreeRun = new AtomicIntegerArray(geometry.groups());
        this.runBuckets = new AtomicIntegerArray(geometry.groups());
        for (int k = 0; k < scoreBuckets.length; k++) scoreBuckets[k] = new LongAdder();
        this.blockLog2 = Integer.numberOfTrailingZeros(geometry.blockSizeBytes());
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
     * middle of publishing, and always between 0 and the data blocks; O(1) to read at any volume size.
     */
    public long totalFreeBlocks() {
        return totalFree.get();
    }

    void publishFree(int group, long free) {
        publishFree(group, free, 0);
    }

    /**
     * As {@link #publishFree(int, long)}, for a change that also lends {@code lent} blocks of the group to a
     * session (negative: they came back). The group's own figure drops by what it lent, the volume's sum does
     * not: blocks on loan are free until a session hands them out. One atomic addition, so a reader never
     * sees the loan twice or not at all.
     */
    void publishFree(int group, long free, long lent) {
        long old = freeBlocks.getAndSet(group, free);
        if (old != free || lent != 0) {
            totalFree.addAndGet(free - old + lent);
            if (lent != 0) onLoan.add(lent);
            SpreadIndex s = spread;
            if (s != null && old != free) s.changed(group);
        }
    }

    /** A session handed out {@code blocks} of its loan (negative: they came back to it, freed). */
    void handedOut(long blocks) {
        totalFree.addAndGet(-blocks);
        onLoan.add(-blocks);
    }

    /** Blocks lent to sessions and not handed out, frees on their way back included. */
    public long blocksOnLoan() {
        return onLoan.sum();
    }

    /**
     * The group a new stream should start in, furthest from the others: the middle of the longest circular
     * run of idle groups (no open file calls them home, at least half their data blocks free), else the
     * least crowded group. O(log groups) per group changed since the last call, not a scan of the volume.
     */
    public int spreadGroup() {
        SpreadIndex s = spread;
        if (s == null) {
            synchronized (this) {
                s = spread;
                if (s == null) {
                    s = new SpreadIndex(geometry.groups(), (geometry.blocksPerGroup() - geometry.systemBlocksPerGroup()) / 2,
                            new SpreadIndex.Source() {
                                @Override
                                public int openFiles(int group) {
                                    return VolumeState.this.openFiles(group);
                                }

                                @Override
                                public long freeBlocks(int group) {
                                    return VolumeState.this.freeBlocks(group);
                                }
                            });
                    spread = s;
                }
            }
        }
        return s.spreadGroup();
    }

    /** The longest free run of {@code group} in blocks, as its actor last published it. */
    public int largestFreeRun(int group) {
        return largestFreeRun.get(group);
    }

    /**
     * Which power-of-two run lengths {@code group} has free, as its actor last published them: bit
     * {@code k} set iff it has a free run of {@code [2^k, 2^(k+1))} blocks.
     */
    public int freeRunBuckets(int group) {
        return runBuckets.get(group);
    }

    /** Publishes what a walk needs to know of a group's free runs: the longest, and the lengths present. */
    void publishRuns(int group, int largestBlocks, int bucketMask) {
        largestFreeRun.lazySet(group, largestBlocks);
        runBuckets.lazySet(group, bucketMask);
    }

    /** What a group's run index tells of its runs; the same object for every call. */
    FreeRunIndex.Listener scoreListener() {
        return scoreListener;
    }

    /**
     * A run of {@code removed} blocks became runs of {@code added1} and {@code added2} (0 = none): adds
     * the difference of their contributions, once per bucket that changes (a run that shrinks by a block
     * changes two buckets, not four).
     */
    private void freeRunsChanged(int removed, int added1, int added2) {
        int lo = 64, hi = -1;
        for (int i = 0; i < 3; i++) {
            int blocks = i == 0 ? removed : i == 1 ? added1 : added2;
            if (blocks == 0) continue;
            long bytes = (long) blocks << blockLog2;
            int s = 63 - Long.numberOfLeadingZeros(bytes);
            lo = Math.min(lo, s);
            hi = Math.max(hi, s + 1);
        }
        if (hi < 0) return;
        long[] delta = new long[hi - lo + 1];
        for (int i = 0; i < 3; i++) {
            int blocks = i == 0 ? removed : i == 1 ? added1 : added2;
            if (blocks == 0) continue;
            long sign = i == 0 ? -1 : 1;
            long bytes = (long) blocks << blockLog2;
            int s = 63 - Long.numberOfLeadingZeros(bytes);
            delta[s - lo] += sign * ((2L << s) - bytes);
            delta[s + 1 - lo] += sign * 2 * (bytes - (1L << s));
        }
        for (int k = lo; k <= hi; k++) if (delta[k - lo] != 0) scoreBuckets[k].add(delta[k - lo]);
    }

    /**
     * Ceph's v3 fragmentation score of the volume's free space (0 = one free extent, 1 = all single
     * blocks) from the sums the groups keep: 65 additions, no walk. Exact once the actors are idle (see
     * the class comment); while they work, a mix of states at most one message old each.
     */
    public double fragmentationScore() {
        long[] buckets = new long[scoreBuckets.length];
        long freeBytes = 0;
        for (int k = 0; k < buckets.length; k++) {
            buckets[k] = scoreBuckets[k].sum();
            freeBytes += buckets[k]; // a run of v bytes adds (2^(s+1) - v) + 2 (v - 2^s) = v in all
        }
        return FragmentationScore.score(buckets, freeBytes, geometry.blockSizeBytes());
    }

    void fileOpened(int homeGroup) {
        openFiles.incrementAndGet(homeGroup);
        SpreadIndex s = spread;
        if (s != null) s.changed(homeGroup); // the least crowded group may change with any count
    }

    void fileClosed(int homeGroup) {
        openFiles.decrementAndGet(homeGroup);
        SpreadIndex s = spread;
        if (s != null) s.changed(homeGroup); // the least crowded group may change with any count
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
