package org.blockyard.runtime.volume;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

import org.blockyard.api.alloc.Geometry;

/**
 * Where every metadata structure of a volume lives (docs/volume-format.md). Every group starts with a header
 * block (the superblock in group 0, a backup copy in groups 1 and the powers of 3, 5 and 7, as ext2's
 * sparse_super; unused elsewhere) and its block bitmap. Group 0 then holds the group descriptor table, the
 * file table, the journal and, on a volume with multi-mount protection ({@code mmpBlocks} 1), the MMP block
 * right after the journal; together they are {@link Geometry#journalBlocks()}, the extra system zone of
 * group 0. All of it is system zone: never handed out.
 */
public record Layout(Geometry geometry, int gdtBlocks, int fileTableBlocks, int journalBlocks, int mmpBlocks) {
    public static final int DESCRIPTOR_BYTES = 32;
    /** Bytes of a file-table block before its extents: magic, checksum, ids, counts and the name. */
    public static final int TABLE_HEADER_BYTES = 256;
    public static final int TABLE_EXTENT_BYTES = 24;
    /** Longest name, in UTF-8 bytes, that fits a file-table block's header. */
    public static final int MAX_NAME_BYTES = TABLE_HEADER_BYTES - 40;

    public Layout {
        if (fileTableBlocks < 1) throw new IllegalArgumentException("the file table needs at least one block");
        if (journalBlocks < 8) throw new IllegalArgumentException("a journal of " + journalBlocks
                + " blocks is too small: at least 8 (a superblock and one transaction of a few blocks)");
        if (geometry.blockSizeBytes() < 1024)
            throw new IllegalArgumentException("a volume needs blocks of at least 1024 bytes (the superblock is 1 KiB)");
        if (mmpBlocks != 0 && mmpBlocks != 1)
            throw new IllegalArgumentException("a volume has one multi-mount protection block or none, not " + mmpBlocks);
    }

    /** A layout without multi-mount protection. */
    public Layout(Geometry geometry, int gdtBlocks, int fileTableBlocks, int journalBlocks) {
        this(geometry, gdtBlocks, fileTableBlocks, journalBlocks, 0);
    }

    /** The layout mkfs makes for a volume of {@code totalBlocks}. */
    public static Layout make(int blockSize, long totalBlocks, int blocksPerGroup, int fileTableBlocks,
                              int journalBlocks, int strideBlocks, int stripeBlocks) {
        return make(blockSize, totalBlocks, blocksPerGroup, fileTableBlocks, journalBlocks, strideBlocks, stripeBlocks,
                false);
    }

    /** As {@link #make(int, long, int, int, int, int, int)}; with {@code mmp}, a multi-mount protection block too. */
    public static Layout make(int blockSize, long totalBlocks, int blocksPerGroup, int fileTableBlocks,
                              int journalBlocks, int strideBlocks, int stripeBlocks, boolean mmp) {
        Geometry plain = Geometry.of(blockSize, totalBlocks, blocksPerGroup);
        if ((long) blocksPerGroup / 8 > (long) (plain.systemBlocksPerGroup() - 1) * blockSize)
            throw new IllegalArgumentException("a group of " + blocksPerGroup + " blocks needs a bitmap of "
                    + blocksPerGroup / 8 + " bytes, more than whole " + blockSize + "-byte blocks hold: use a multiple of "
                    + blockSize * 8L + " blocks per group, or at most " + blockSize * 8L);
        int gdt = (int) (((long) plain.groups() * DESCRIPTOR_BYTES + blockSize - 1) / blockSize);
        int mmpBlocks = mmp ? 1 : 0;
        long extra = (long) gdt + fileTableBlocks + journalBlocks + mmpBlocks;
        if (plain.systemBlocksPerGroup() + extra >= blocksPerGroup)
            throw new IllegalArgumentException("group 0 of " + blocksPerGroup + " blocks cannot hold its bitmap, "
                    + gdt + " descriptor blocks, a file table of " + fileTableBlocks + " blocks and a journal of "
                    + journalBlocks + " blocks" + (mmp ? " and a multi-mount protection block" : "")
                    + ": use bigger groups or a smaller journal");
        Geometry g = plain.withJournal((int) extra).withStripe(strideBlocks, stripeBlocks);
        return new Layout(g, gdt, fileTableBlocks, journalBlocks, mmpBlocks);
    }

    /**
     * The journal {@code mkfs} makes when none is asked for: mke2fs's default for the volume's size (4 MiB below
     * 128 MiB, 16 MiB below 1 GiB, 32 MiB below 2 GiB, 64 MiB below 16 GiB, 128 MiB below 32 GiB, 256 MiB below
     * 64 GiB, 512 MiB below 128 GiB, else 1 GiB; e2fsprogs' {@code ext2fs_default_journal_size} in 4 KiB
     * blocks), as many blocks of {@code blockSize} as that takes. ext4 may put its journal in any group; this
     * layout keeps it in group 0, so it takes at most half of what group 0 has beside its header, bitmap,
     * descriptors and file table, and group 0 keeps the other half for data. Never less than {@code minimum}
     * (which {@link #make} refuses when group 0 cannot hold it).
     */
    public static int defaultJournalBlocks(int blockSize, long totalBlocks, int blocksPerGroup, int fileTableBlocks,
                                           int minimum) {
        long bytes = totalBlocks * blockSize;
        long mib = 1L << 20, gib = 1L << 30;
        long journalBytes = bytes < 128 * mib ? 4 * mib : bytes < gib ? 16 * mib : bytes < 2 * gib ? 32 * mib
                : bytes < 16 * gib ? 64 * mib : bytes < 32 * gib ? 128 * mib : bytes < 64 * gib ? 256 * mib
                : bytes < 128 * gib ? 512 * mib : gib;
        Geometry plain = Geometry.of(blockSize, Math.max(totalBlocks, blocksPerGroup), blocksPerGroup);
        long gdt = ((long) plain.groups() * DESCRIPTOR_BYTES + blockSize - 1) / blockSize;
        long room = blocksPerGroup - plain.systemBlocksPerGroup() - gdt - fileTableBlocks;
        long blocks = Math.min(journalBytes / blockSize, room / 2);
        return (int) Math.max(minimum, blocks);
    }

    public int blockSize() {
        return geometry.blockSizeBytes();
    }

    public int bitmapBlocks() {
        return geometry.systemBlocksPerGroup() - 1;
    }

    /** Bytes of one group's bitmap: one bit per block of a full group. */
    public int bitmapBytes() {
        return geometry.blocksPerGroup() / 8;
    }

    public long headerBlock(int group) {
        return geometry.groupStart(group);
    }

    public long bitmapBlock(int group) {
        return geometry.groupStart(group) + 1;
    }

    public long gdtStart() {
        return geometry.systemBlocksPerGroup();
    }

    public long fileTableStart() {
        return gdtStart() + gdtBlocks;
    }

    public long journalStart() {
        return fileTableStart() + fileTableBlocks;
    }

    /** Whether the volume has multi-mount protection (an MMP block, {@link #mmpBlock()}). */
    public boolean mmp() {
        return mmpBlocks == 1;
    }

    /** The multi-mount protection block: right after the journal, the last of group 0's extra system zone. */
    public long mmpBlock() {
        if (!mmp()) throw new IllegalStateException("this volume has no multi-mount protection block");
        return journalStart() + journalBlocks;
    }

    /** Descriptors per block of the table. */
    public int descriptorsPerBlock() {
        return blockSize() / DESCRIPTOR_BYTES;
    }

    public long descriptorBlock(int group) {
        return gdtStart() + group / descriptorsPerBlock();
    }

    /**
     * File-table blocks kept for the growth of the entries there: a new file or extent owner is admitted only
     * while the entries' need stays below the table less these.
     */
    public int fileTableGrowthReserve() {
        return Math.max(1, fileTableBlocks / 16);
    }

    public int extentsPerTableBlock() {
        return (blockSize() - TABLE_HEADER_BYTES) / TABLE_EXTENT_BYTES;
    }

    /**
     * The most blocks the journal's running transaction holds before it is closed, at its largest whatever
     * {@code max-transaction-blocks} says: half the log less two, and no more than one descriptor block lists
     * (the journal's own cap, {@code Journal.maxTransactionBlocks}, is at most this).
     */
    public int maxTransactionBlocks() {
        return Math.max(1, Math.min(Journal.descriptorCapacity(blockSize()), (journalBlocks - 1) / 2 - 2));
    }

    /**
     * The most file-table blocks one entry (a file or an extent owner) may take: any single change to an entry
     * of this many blocks fits one transaction and the table. A change before an entry's first extent, or one
     * that makes its chain longer or shorter, rewrites every block of the chain; the journal takes records into
     * the running transaction while it counts fewer than {@link #maxTransactionBlocks()} less (bitmap blocks +
     * 2), so the record that comes last may find that many blocks there before it; and the transaction, with
     * its descriptor and commit blocks, has to fit the log ({@code journal-blocks - 1}). At most the table.
     */
    public int maxEntryTableBlocks() {
        int log = journalBlocks - 1;
        int before = Math.max(0, maxTransactionBlocks() - (bitmapBlocks() + 2) - 1);
        int s = log - before;
        while (s > 1 && Journal.transactionBlocks(before + s, blockSize()) > log) s--;
        return Math.max(1, Math.min(fileTableBlocks, s));
    }

    /**
     * The most extents (runs of an extent map) one entry may hold: {@link #maxEntryTableBlocks()} blocks of
     * {@link #extentsPerTableBlock()}. An allocation, a release or a map change that would take an entry past
     * it is refused with {@code NoSpace}.
     */
    public int maxEntryExtents() {
        return (int) Math.min(Integer.MAX_VALUE, (long) maxEntryTableBlocks() * extentsPerTableBlock());
    }

    /** Groups that carry a backup superblock: 1 and the powers of 3, 5 and 7 (ext2's sparse_super). */
    public static boolean hasBackup(int group) {
        if (group == 0) return false;
        if (group == 1) return true;
        for (int base : new int[] {3, 5, 7}) {
            long p = base;
            while (p < group) p *= base;
            if (p == group) return true;
        }
        return false;
    }

    /** Which structure a system-zone block belongs to, for reports and the map. */
    public String structureOf(long block) {
        int g = geometry.groupOf(block);
        long rel = block - geometry.groupStart(g);
        if (rel == 0) return g == 0 ? "superblock" : hasBackup(g) ? "backup superblock" : "group header";
        if (rel <= bitmapBlocks()) return "block bitmap";
        if (g != 0) return "system zone";
        if (block < fileTableStart()) return "group descriptors";
        if (block < journalStart()) return "file table";
        if (block < journalStart() + journalBlocks) return "journal";
        if (mmp() && block == mmpBlock()) return "multi-mount protection";
        return "system zone";
    }

    // ---- codecs ---------------------------------------------------------------------------------------

    static ByteBuffer le(byte[] b) {
        return ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
    }

    static int crc(byte[] b, int off, int len) {
        CRC32C c = new CRC32C();
        c.update(b, off, len);
        return (int) c.getValue();
    }

    /** CRC32C of {@code b[off, off+len)} seeded with a structure's identity (uuid bytes and a number). */
    static int crc(byte[] seed, long number, byte[] b, int off, int len) {
        CRC32C c = new CRC32C();
        c.update(seed);
        byte[] n = new byte[8];
        le(n).putLong(number);
        c.update(n);
        c.update(b, off, len);
        return (int) c.getValue();
    }
}
