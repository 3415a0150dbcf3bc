package org.blockyard.runtime.alloc;

import java.util.List;

import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;

/**
 * The order in which one extent allocation visits groups, and what it asks each one: from the hint's
 * group onwards, first only groups whose published longest free run holds a whole piece of the request
 * ({@code min(remaining, maxExtentBlocks)} blocks), asked for whole pieces only, so a request that fits
 * a free run anywhere is not split; then, as before, once leaving other files' reservation windows alone
 * and once more taking window space too, until the request is met, each group giving its longest runs.
 * A plain iterator: the caller asks {@link #next()} for a group, sends it {@link #claimFor}, and reports
 * the answer with {@link #took}; the actor facade and the global-lock baseline drive the same walk, so
 * neither recursion nor a chain of futures grows with the number of groups. A group is skipped without a
 * message when its published figures say it cannot help (longest run below the piece in the first pass,
 * free blocks below one unit after): at most three reads per group and pass, 3 × groups in all.
 */
final class ExtentWalk {
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

    /** The next group to ask, or -1 when the request is met or every pass is over. */
    int next() {
        while (remaining > 0) {
            attempt++;
            if (attempt >= groups) {
                if (pass == SPLIT_IGNORING_WINDOWS) return -1;
                pass++;
                attempt = 0;
            }
            int g = (int) ((firstGroup + (long) attempt) % groups);
            if (pass == FIT ? volume.largestFreeRun(g) >= piece() : volume.freeBlocks(g) >= unitBlocks) return g;
        }
        return -1;
    }

    /** The blocks one extent should hold: what is left, up to the longest extent allowed. */
    private long piece() {
        return maxExtentBlocks > 0 ? Math.min(remaining, maxExtentBlocks) : remaining;
    }

    /** What to ask group {@code g}, the one {@link #next()} just answered. */
    BlockGroup.ExtentClaim claimFor(int g) {
        long h = attempt == 0 ? hint : -1;
        return new BlockGroup.ExtentClaim(remaining, unitBlocks, maxExtentBlocks, alignBlocks, h,
                pass != SPLIT_IGNORING_WINDOWS, pass == FIT);
    }

    /** Records what the group claimed. */
    void took(List<Extent> extents) {
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
