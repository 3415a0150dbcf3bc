package org.blockyard.api.alloc;

/**
 * The shape of a volume, ext2/3 style: {@code groups} block groups of {@code blocksPerGroup} blocks each
 * (the last one may be shorter), the first {@code systemBlocksPerGroup} blocks of every group being its
 * system zone (bitmap, descriptors; never handed out), plus {@code journalBlocks} more in group 0.
 *
 * @param blockSizeBytes       bytes per block (default 4096)
 * @param totalBlocks          blocks on the volume
 * @param blocksPerGroup       blocks per group (default 32768: one 4 KiB bitmap block covers a group)
 * @param systemBlocksPerGroup system-zone blocks at the start of every group
 * @param journalBlocks        extra system-zone blocks at the start of group 0 (after its own zone)
 * @param strideBlocks         RAID chunk in blocks, 0 when not set (never 1: see {@link #fromDeviceHints})
 * @param stripeBlocks         full stripe width in blocks, 0 when not set (never 1)
 */
public record Geometry(int blockSizeBytes, long totalBlocks, int blocksPerGroup, int systemBlocksPerGroup,
                       int journalBlocks, int strideBlocks, int stripeBlocks) {
    public static final int DEFAULT_BLOCK_SIZE = 4096;
    public static final int DEFAULT_BLOCKS_PER_GROUP = 32768;
    /**
     * Most groups a volume may have: each is an actor with a bitmap, so 2^24 groups (64 PiB of 4 KiB blocks
     * in 32768-block groups) is far past what one JVM holds; a bigger volume takes bigger groups.
     */
    public static final int MAX_GROUPS = 1 << 24;

    public Geometry {
        if (blockSizeBytes < 512 || Integer.bitCount(blockSizeBytes) != 1)
            throw new IllegalArgumentException("block size must be a power of two of at least 512: " + blockSizeBytes);
        if (blocksPerGroup < 64 || blocksPerGroup % 64 != 0)
            throw new IllegalArgumentException("blocks per group must be a positive multiple of 64: " + blocksPerGroup);
        if (totalBlocks < blocksPerGroup)
            throw new IllegalArgumentException("a volume needs at least one whole group: " + totalBlocks + " blocks");
        if (totalBlocks > Long.MAX_VALUE / blockSizeBytes)
            throw new IllegalArgumentException("a volume of " + totalBlocks + " blocks of " + blockSizeBytes
                    + " bytes exceeds 2^63 bytes");
        if ((totalBlocks - 1) / blocksPerGroup + 1 > MAX_GROUPS)
            throw new IllegalArgumentException("a volume of " + totalBlocks + " blocks in groups of " + blocksPerGroup
                    + " would have " + ((totalBlocks - 1) / blocksPerGroup + 1) + " groups; at most " + MAX_GROUPS
                    + " are supported: use bigger groups");
        if (systemBlocksPerGroup < 0 || systemBlocksPerGroup >= blocksPerGroup)
            throw new IllegalArgumentException("system zone of " + systemBlocksPerGroup + " blocks per group");
        if (journalBlocks < 0 || systemBlocksPerGroup + journalBlocks >= blocksPerGroup)
            throw new IllegalArgumentException("journal of " + journalBlocks + " blocks does not fit group 0");
        long lastGroupBlocks = totalBlocks - (totalBlocks - 1) / blocksPerGroup * blocksPerGroup;
        if (lastGroupBlocks <= systemBlocksPerGroup + (totalBlocks <= blocksPerGroup ? journalBlocks : 0))
            throw new IllegalArgumentException("the last group would hold " + lastGroupBlocks + " blocks, no more than"
                    + " its system zone; round the volume down to " + (totalBlocks - lastGroupBlocks) + " blocks");
        if (strideBlocks < 0 || strideBlocks == 1 || stripeBlocks < 0 || stripeBlocks == 1)
            throw new IllegalArgumentException("stride and stripe are 0 (off) or more than one block");
        if (stripeBlocks > blocksPerGroup)
            throw new IllegalArgumentException("stripe of " + stripeBlocks + " blocks exceeds a group");
    }

    /** A volume of {@code totalBlocks} with the default geometry: 4 KiB blocks, 32768 per group. */
    public static Geometry standard(long totalBlocks) {
        return of(DEFAULT_BLOCK_SIZE, totalBlocks, DEFAULT_BLOCKS_PER_GROUP);
    }

    /** A volume without stripes; the system zone is one bitmap block per group and one descriptor block. */
    public static Geometry of(int blockSizeBytes, long totalBlocks, int blocksPerGroup) {
        int bitmapBlocks = Math.max(1, blocksPerGroup / 8 / blockSizeBytes);
        return new Geometry(blockSizeBytes, totalBlocks, blocksPerGroup, bitmapBlocks + 1, 0, 0, 0);
    }

    /**
     * The mkfs rule of seed 001: take stride and stripe from the device's hints (minimum and optimal I/O
     * size, in bytes) only when they exceed one block; a hint of one block or less means "no stripe".
     */
    public Geometry fromDeviceHints(long minimumIoBytes, long optimalIoBytes) {
        long stride = minimumIoBytes / blockSizeBytes;
        long stripe = optimalIoBytes / blockSizeBytes;
        int s = stride > 1 && minimumIoBytes % blockSizeBytes == 0 ? (int) stride : 0;
        int w = stripe > 1 && optimalIoBytes % blockSizeBytes == 0 ? (int) Math.min(stripe, blocksPerGroup) : 0;
        return new Geometry(blockSizeBytes, totalBlocks, blocksPerGroup, systemBlocksPerGroup, journalBlocks, s, w);
    }

    public Geometry withStripe(int strideBlocks, int stripeBlocks) {
        return new Geometry(blockSizeBytes, totalBlocks, blocksPerGroup, systemBlocksPerGroup, journalBlocks,
                strideBlocks, stripeBlocks);
    }

    public Geometry withJournal(int journalBlocks) {
        return new Geometry(blockSizeBytes, totalBlocks, blocksPerGroup, systemBlocksPerGroup, journalBlocks,
                strideBlocks, stripeBlocks);
    }

    public int groups() {
        return (int) ((totalBlocks + blocksPerGroup - 1) / blocksPerGroup);
    }

    /** The group holding {@code block}; the block must lie on the volume. */
    public int groupOf(long block) {
        if (block < 0 || block >= totalBlocks)
            throw new IllegalArgumentException("block " + block + " is outside the volume [0, " + totalBlocks + ")");
        return (int) (block / blocksPerGroup);
    }

    public long groupStart(int group) {
        return (long) group * blocksPerGroup;
    }

    /** Blocks in {@code group}: {@code blocksPerGroup}, except for a shorter last group. */
    public int groupBlocks(int group) {
        return (int) Math.min(blocksPerGroup, totalBlocks - groupStart(group));
    }

    /** System-zone blocks at the start of {@code group}. */
    public int systemBlocks(int group) {
        return group == 0 ? systemBlocksPerGroup + journalBlocks : systemBlocksPerGroup;
    }

    public boolean isSystemZone(long block) {
        int g = groupOf(block);
        return block - groupStart(g) < systemBlocks(g);
    }

    /** Blocks that can ever be handed out. */
    public long dataBlocks() {
        return totalBlocks - (long) groups() * systemBlocksPerGroup - journalBlocks;
    }

    public long bytes() {
        return totalBlocks * blockSizeBytes;
    }
}
