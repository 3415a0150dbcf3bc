package org.blockyard.runtime.alloc;

import java.util.List;

import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;

/**
 * The order in which one extent allocation visits groups, and what it asks each one. First, whole pieces
 * only ({@code min(remaining, maxExtentBlocks)} blocks from one free run), tightest fit first: for each
 * power of two {@code 2^b} from the piece's own upwards, the groups that publish a free run of
 * {@code [2^b, 2^(b+1))} blocks, from the hint's group onwards, asked to use only runs below
 * {@code 2^(b+1)}; so a request that fits a free run anywhere is not split, and it goes to about the
 * smallest such run on the volume rather than chipping a large one. Then, as before, once leaving other
 * files' reservation windows alone and once more taking window space too, until the request is met,
 * each group giving its longest runs first.
 *
 * <p>A plain iterator: the caller asks {@link #next()} for a group, sends it {@link #claimFor}, and
 * reports the answer with {@link #took}; the actor facade and the global-lock baseline drive the same
 * walk, so neither recursion nor a chain of futures grows with the number of groups. A group is skipped
 * without a message when its published figures say it cannot help. The whole-piece pass reads each
 * group's published run lengths once per power of two actually present on the volume (a scan also notes
 * the next one present, so absent ones cost nothing): at most 32 × groups reads, a few milliseconds for
 * 100,000 groups, and usually one or two scans; the splitting passes read each free count once.
 */
final class ExtentWalk {
    /** Groups in the whole-piece pass that answered nothing, after which only sure fits are asked. */
    static final int MAX_GUESSES = 4;

    /** Whole pieces only, windows left alone. */
    private static final int FIT = 0;
    /** Pieces split as needed, windows left alone. */
    private static final int SPLIT = 1;
    /** Pieces split as needed, window space taken too (ext3's last pass before "no space"). */
    private static final int SPLIT_IGNORING_WINDOWS = 2;

    private final VolumeState volume;
    private final int groups;
    private final int firstGroup;
    private final long hint;
    private final int unitBlocks;
    private final long maxExtentBlocks;
    private final int alignBlocks;
    private final long wantBlocks;
    private long remaining;
    private int pass = FIT;
    private int attempt = -1;
    /** In the whole-piece pass: the power of two of the runs asked for now, and the next one seen. */
    private int bucket = -1;
    private int nextBucket = 32;
    /** Groups asked in the whole-piece pass that had nothing to give (their figures were a guess). */
    private int misses;
    /** Whether the walk ends with the whole-piece pass (a loan's refill: pieces of one length, never shorter). */
    private boolean wholePiecesOnly;

    /**
     * @param hint preferred first block, or -1 for none; the caller has checked it lies on the volume
     * @param start where a walk without a hint begins (the allocator's cursor)
     */
    ExtentWalk(VolumeState volume, long wantBlocks, int unitBlocks, long maxExtentBlocks, long hint, long start) {
        this.volume = volume;
        Geometry geometry = volume.geometry();
        this.groups = geometry.groups();
        this.unitBlocks = unitBlocks;
        this.maxExtentBlocks = maxExtentBlocks;
        this.alignBlocks = alignment(geometry, unitBlocks);
        long from = hint >= 0 ? hint : Math.max(0, Math.min(start, geometry.totalBlocks() - 1));
        this.firstGroup = geometry.groupOf(from);
        this.hint = from;
        this.wantBlocks = wantBlocks;
        this.remaining = wantBlocks;
    }

    /** Extents start on the unit, and on the stripe when one is configured. */
    static int alignment(Geometry geometry, int unit) {
        int stripe = geometry.stripeBlocks();
        if (stripe <= 1) return unit;
        long a = (long) unit / gcd(unit, stripe) * stripe;
        return (int) Math.min(a, geometry.blocksPerGroup());
    }

    private static int gcd(int a, int b) {
        while (b != 0) {
            int t = a % b;
            a = b;
            b = t;
        }
        return a;
    }

    /** Ends the walk with its whole-piece pass: no group is asked for split pieces. Answers this walk. */
    ExtentWalk wholePiecesOnly() {
        wholePiecesOnly = true;
        return this;
    }

    /** The next group to ask, or -1 when the request is met or every pass is over. */
    int next() {
        while (remaining > 0) {
            attempt++;
            if (pass == FIT && bucket < 0) bucket = log2(piece());
            if (attempt >= groups) {
                attempt = 0;
                if (pass == FIT && nextBucket < 32) {
                    bucket = nextBucket;
                    nextBucket = 32;
                } else if (pass == SPLIT_IGNORING_WINDOWS || wholePiecesOnly) {
                    return -1;
                } else {
                    pass++;
                }
            }
            int g = (int) ((firstGroup + (long) attempt) % groups);
            if (pass == FIT) {
                int mask = volume.freeRunBuckets(g);
                int higher = bucket >= 31 ? 0 : mask & (-1 << (bucket + 1));
                if (higher != 0) nextBucket = Math.min(nextBucket, Integer.numberOfTrailingZeros(higher));
                if (bucket < 32 && (mask >>> bucket & 1) != 0 && surelyFits(volume.largestFreeRun(g))) return g;
            } else if (volume.freeBlocks(g) >= unitBlocks) {
                return g;
            }
        }
        return -1;
    }

    /**
     * Whether to ask a group with a run of the current power of two. Any run of a higher power holds the
     * piece (alignment and windows aside); in the piece's own power, a run surely does when the piece is
     * that power, or the group's longest run is in it and holds the piece. Other groups of that power may
     * have only runs too short: they are asked until {@value #MAX_GUESSES} of them had nothing, which keeps
     * most tight fits and bounds the messages wasted (each is a round trip, tens of microseconds). A group
     * not asked here is asked in a later round, and its best fit then still takes a run of the piece's
     * power that holds it, if it has one.
     */
    private boolean surelyFits(int largest) {
        long piece = piece();
        if (largest < piece) return false;
        int own = log2(piece);
        return bucket > own || piece == 1L << own || log2(largest) == own || misses < MAX_GUESSES;
    }

    private static int log2(long blocks) {
        return 63 - Long.numberOfLeadingZeros(blocks);
    }

    /** The blocks one extent should hold: what is left, up to the longest extent allowed. */
    private long piece() {
        return maxExtentBlocks > 0 ? Math.min(remaining, maxExtentBlocks) : remaining;
    }

    /** What to ask group {@code g}, the one {@link #next()} just answered. */
    BlockGroup.ExtentClaim claimFor(int g) {
        long h = attempt == 0 ? hint : -1;
        long runsBelow = pass == FIT && bucket < 62 ? 2L << bucket : 0;
        return new BlockGroup.ExtentClaim(remaining, unitBlocks, maxExtentBlocks, alignBlocks, h,
                pass != SPLIT_IGNORING_WINDOWS, pass == FIT, runsBelow);
    }

    /** Records what the group claimed. */
    void took(List<Extent> extents) {
        if (pass == FIT && extents.isEmpty()) misses++;
        for (Extent e : extents) remaining -= e.blocks();
    }

    long wantBlocks() {
        return wantBlocks;
    }

    int unitBlocks() {
        return unitBlocks;
    }

    long remaining() {
        return remaining;
    }
}
