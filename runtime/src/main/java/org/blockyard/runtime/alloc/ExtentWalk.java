package org.blockyard.runtime.alloc;

import java.util.List;

import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;

/**
 * The order in which one extent allocation visits groups, and what it asks each one: from the hint's
 * group onwards, once leaving other files' reservation windows alone, then once more taking window space
 * too, until the request is met. A plain iterator: the caller asks {@link #next()} for a group, sends it
 * {@link #claimFor}, and reports the answer with {@link #took}; the actor facade and the global-lock
 * baseline drive the same walk, so neither recursion nor a chain of futures grows with the number of
 * groups. Groups whose published free count is below one unit are skipped without a message.
 */
final class ExtentWalk {
    private final VolumeState volume;
    private final int groups;
    private final int firstGroup;
    private final long hint;
    private final int unitBlocks;
    private final long maxExtentBlocks;
    private final int alignBlocks;
    private final long wantBlocks;
    private long remaining;
    private boolean honourWindows = true;
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
                if (!honourWindows) return -1;
                honourWindows = false; // the last pass takes space inside other files' windows too
                attempt = 0;
            }
            int g = (int) ((firstGroup + (long) attempt) % groups);
            if (volume.freeBlocks(g) >= unitBlocks) return g;
        }
        return -1;
    }

    /** What to ask group {@code g}, the one {@link #next()} just answered. */
    BlockGroup.ExtentClaim claimFor(int g) {
        long h = attempt == 0 ? hint : -1;
        return new BlockGroup.ExtentClaim(remaining, unitBlocks, maxExtentBlocks, alignBlocks, h, honourWindows);
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
