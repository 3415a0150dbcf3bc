package org.blockyard.runtime.alloc;

/**
 * Ceph BlueStore's free-space fragmentation score (Allocator::get_fragmentation_score, v2/v3 weights):
 * 0 when all free space is one extent, 1 when every free extent is a single block.
 * <p>
 * An extent of {@code v} bytes is worth, with {@code s = floor(log2 v)} and {@code x = (v - 2^s) / 2^s},
 * <pre>
 *   score(v) = 2^s * W[s] * (1 - x) + 2^(s+1) * W[s+1] * x
 * </pre>
 * where {@code W[0] = 1}, {@code W[k] = W[k-1] * m_k}, {@code m_k = 1.2} for {@code k <= 20} (up to
 * 1 MiB doubling a chunk is worth 20% more), {@code 1.0} for {@code k >= 27} (past 128 MiB size brings
 * nothing more) and linear in between. With {@code F} free bytes,
 * <pre>
 *   frag = (score(F) - sum score(e)) / (score(F) - (F / blockBytes) * score(blockBytes))
 * </pre>
 * <p>
 * Accumulation follows Ceph's FastScore: {@code 2^s (1 - x) = 2^(s+1) - v} and {@code 2^(s+1) x =
 * 2 (v - 2^s)} are integers, so each extent adds exact integers to two per-power-of-two buckets and the
 * raw score is {@code sum W[k] * bucket[k]} over 64 buckets. Nothing is rounded until {@link #score()},
 * extents can be removed again exactly, and the two end points come out exactly: one extent gives 0.0,
 * all single blocks give 1.0.
 * <p>
 * Limits: the block size is a power of two (as ext2/3 and BlueStore allocation units are) and the total
 * free space at most 2^61 bytes, so every bucket fits a {@code long}. Not thread-safe.
 */
public final class FragmentationScore {

    /** Weight multiplier for chunks up to 2^20 bytes (1 MiB). */
    private static final double SMALL_CHUNK_WORTH = 1.2;
    /** Weight multiplier for chunks of 2^27 bytes (128 MiB) and more. */
    private static final double HUGE_CHUNK_WORTH = 1.0;
    private static final int SMALL_CHUNK_LOG2 = 20;
    private static final int HUGE_CHUNK_LOG2 = 27;
    /** Largest total of free bytes: keeps 2 * F, the bound of any bucket, below 2^63. */
    public static final long MAX_FREE_BYTES = 1L << 61;

    /** W[k]: per-byte worth of a chunk of 2^k bytes. */
    private static final double[] WEIGHTS = new double[64];

    static {
        WEIGHTS[0] = 1.0;
        for (int k = 1; k < WEIGHTS.length; k++) {
            WEIGHTS[k] = WEIGHTS[k - 1] * multiplier(k);
        }
    }

    private final int blockBytes;
    private final int blockLog2;
    private final long[] buckets = new long[64];
    private long freeBytes;
    private long extents;

    /** @param blockBytes allocation unit in bytes, a power of two */
    public FragmentationScore(int blockBytes) {
        if (blockBytes <= 0 || Integer.bitCount(blockBytes) != 1) {
            throw new IllegalArgumentException("block size must be a positive power of two, got " + blockBytes);
        }
        this.blockBytes = blockBytes;
        this.blockLog2 = Integer.numberOfTrailingZeros(blockBytes);
    }

    /** Score of the given free extents, lengths in blocks. */
    public static double of(int blockBytes, long... extentBlocks) {
        FragmentationScore f = new FragmentationScore(blockBytes);
        for (long e : extentBlocks) {
            f.addFreeExtent(e);
        }
        return f.score();
    }

    /** m_k: how much more a byte in a 2^k-byte chunk is worth than in a 2^(k-1)-byte chunk. */
    static double multiplier(int k) {
        if (k <= SMALL_CHUNK_LOG2) {
            return SMALL_CHUNK_WORTH;
        }
        if (k >= HUGE_CHUNK_LOG2) {
            return HUGE_CHUNK_WORTH;
        }
        return (HUGE_CHUNK_WORTH * (k - SMALL_CHUNK_LOG2) + SMALL_CHUNK_WORTH * (HUGE_CHUNK_LOG2 - k))
                / (HUGE_CHUNK_LOG2 - SMALL_CHUNK_LOG2);
    }

    /** W[k] of the class comment. */
    static double weight(int k) {
        return WEIGHTS[k];
    }

    /** score(v) of the class comment for one extent of {@code bytes} bytes (1 to 2^61). */
    public static double extentScore(long bytes) {
        if (bytes < 1 || bytes > MAX_FREE_BYTES) {
            throw new IllegalArgumentException("extent of " + bytes + " bytes outside [1, 2^61]");
        }
        int s = 63 - Long.numberOfLeadingZeros(bytes);
        long low = (2L << s) - bytes;         // 2^s * (1 - x)
        long high = 2 * (bytes - (1L << s));  // 2^(s+1) * x
        return WEIGHTS[s] * low + WEIGHTS[s + 1] * high;
    }

    /** Adds one free extent of {@code blocks} blocks (at least 1). */
    public void addFreeExtent(long blocks) {
        long bytes = extentBytes(blocks);
        if (bytes > MAX_FREE_BYTES - freeBytes) {
            throw new IllegalArgumentException("total free space would exceed 2^61 bytes");
        }
        apply(bytes, 1);
        freeBytes += bytes;
        extents++;
    }

    /**
     * Removes one free extent of {@code blocks} blocks added earlier (for keeping the score up to date as
     * extents are allocated, split and merged).
     *
     * @throws IllegalStateException if no extent of that length could have been added
     */
    public void removeFreeExtent(long blocks) {
        long bytes = extentBytes(blocks);
        int s = 63 - Long.numberOfLeadingZeros(bytes);
        if (extents == 0 || bytes > freeBytes
                || buckets[s] < (2L << s) - bytes || buckets[s + 1] < 2 * (bytes - (1L << s))) {
            throw new IllegalStateException("no free extent of " + blocks + " blocks to remove");
        }
        apply(bytes, -1);
        freeBytes -= bytes;
        extents--;
    }

    private long extentBytes(long blocks) {
        if (blocks < 1) {
            throw new IllegalArgumentException("free extent of " + blocks + " blocks; need at least 1");
        }
        if (blocks > (MAX_FREE_BYTES >> blockLog2)) {
            throw new IllegalArgumentException("free extent of " + blocks + " blocks of " + blockBytes
                    + " bytes exceeds 2^61 bytes");
        }
        return blocks << blockLog2;
    }

    private void apply(long bytes, int sign) {
        int s = 63 - Long.numberOfLeadingZeros(bytes);
        buckets[s] += sign * ((2L << s) - bytes);
        buckets[s + 1] += sign * 2 * (bytes - (1L << s));
    }

    public long freeBlocks() {
        return freeBytes >> blockLog2;
    }

    public long freeExtents() {
        return extents;
    }

    public int blockBytes() {
        return blockBytes;
    }

    /**
     * The fragmentation score in [0, 1]. 0 with no free space, with a single free block, or when the
     * block size is so large (2^27 bytes or more) that splitting costs nothing.
     */
    public double score() {
        return score(buckets, freeBytes, blockBytes);
    }

    /**
     * The score of the class comment from FastScore's sums: {@code buckets[k]} the integer contributions
     * to the power {@code 2^k} of every free extent, {@code freeBytes} their total, {@code blockBytes}
     * the allocation unit (a power of two).
     */
    static double score(long[] buckets, long freeBytes, int blockBytes) {
        if (freeBytes <= blockBytes) {
            return 0.0;
        }
        double raw = 0.0;
        for (int k = 0; k < buckets.length; k++) {
            if (buckets[k] != 0) {
                raw += WEIGHTS[k] * buckets[k];
            }
        }
        double ideal = extentScore(freeBytes);
        double terrible = (double) (freeBytes / blockBytes) * extentScore(blockBytes);
        double range = ideal - terrible;
        if (range <= 0) {
            return 0.0;
        }
        double frag = (ideal - raw) / range;
        // Rounding in the 64-term sum can leave a few ulps outside the range the formula guarantees.
        return Math.max(0.0, Math.min(1.0, frag));
    }

    @Override
    public String toString() {
        return "FragmentationScore[blockBytes=" + blockBytes + ", freeBlocks=" + freeBlocks()
                + ", extents=" + extents + ", score=" + score() + "]";
    }
}
