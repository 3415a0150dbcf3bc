package org.blockyard.runtime.volume;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

import org.blockyard.api.alloc.Geometry;

/**
 * The superblock: the first 1024 bytes of block 0 (and of each backup group's first block), little-endian,
 * CRC32C over bytes {@code [0, 1020)} stored at 1020 (ext4's s_checksum sits the same way). Fields and offsets
 * are in docs/volume-format.md.
 *
 * @param clean    true when the volume was closed cleanly (nothing to recover); false while it is open
 * @param mounts   times opened read-write
 * @param copyOf   the group this copy sits in (0 for the primary)
 * @param mmpIntervalMillis with multi-mount protection, how often its holder updates the MMP block; else 0
 */
public record Superblock(Layout layout, UUID uuid, int featuresCompat, int featuresIncompat, int featuresRoCompat,
                         boolean clean, int mounts, long createdSeconds, long writtenSeconds, int copyOf,
                         int mmpIntervalMillis) {
    public static final byte[] MAGIC = "BLKYARD1".getBytes(StandardCharsets.US_ASCII);
    /**
     * The format version this code writes and reads. Version 2: a free file-table slot is written with the
     * table magic and a checksum, so a slot that reads as zeros is damage. Version 1 wrote free slots as zeros,
     * which cannot be told from a zeroed block (a lost file), so a version-1 volume is refused, not read.
     */
    public static final int VERSION = 2;
    public static final int BYTES = 1024;
    /**
     * Incompatible features, which a reader must all know: the metadata journal, extent-mapped files, and
     * {@code INCOMPAT_UNINIT_BITMAPS}: a descriptor may say its group's bitmap was never written (ext4's
     * {@code BLOCK_UNINIT}): its system zone used, the rest free, its block never read. A reader that does not
     * know it would read that block's stale bytes, so it must refuse the volume.
     */
    public static final int INCOMPAT_JOURNAL = 1, INCOMPAT_EXTENTS = 2, INCOMPAT_UNINIT_BITMAPS = 4;
    /**
     * Multi-mount protection (ext4's {@code MMP}): a block whose holder bumps a sequence number at an interval, so
     * an opener on another host sees the volume in use. Incompatible: a reader that does not know it would open a
     * volume another host has open.
     */
    public static final int INCOMPAT_MMP = 8;
    public static final int KNOWN_INCOMPAT = INCOMPAT_JOURNAL | INCOMPAT_EXTENTS | INCOMPAT_UNINIT_BITMAPS | INCOMPAT_MMP;
    /** The interval an MMP holder updates at unless mkfs is told another (ext4's default, 5 s). */
    public static final int DEFAULT_MMP_INTERVAL_MILLIS = 5000;
    /** Compatible feature: backup superblocks in sparse groups. */
    public static final int COMPAT_SPARSE_SUPER = 1;

    /** Whether this volume's descriptors may say a bitmap was never written ({@code INCOMPAT_UNINIT_BITMAPS}). */
    public boolean uninitBitmaps() {
        return (featuresIncompat & INCOMPAT_UNINIT_BITMAPS) != 0;
    }

    public static Superblock fresh(Layout layout) {
        return fresh(layout, DEFAULT_MMP_INTERVAL_MILLIS);
    }

    /** A new volume's superblock; {@code mmpIntervalMillis} counts only when the layout has an MMP block. */
    public static Superblock fresh(Layout layout, int mmpIntervalMillis) {
        long now = System.currentTimeMillis() / 1000;
        int incompat = KNOWN_INCOMPAT & ~(layout.mmp() ? 0 : INCOMPAT_MMP);
        if (layout.mmp() && mmpIntervalMillis < 1)
            throw new IllegalArgumentException("the multi-mount protection interval must be at least 1 ms: "
                    + mmpIntervalMillis);
        return new Superblock(layout, UUID.randomUUID(), COMPAT_SPARSE_SUPER, incompat, 0, true, 0, now, now, 0,
                layout.mmp() ? mmpIntervalMillis : 0);
    }

    /** Whether this volume has multi-mount protection. */
    public boolean mmp() {
        return (featuresIncompat & INCOMPAT_MMP) != 0;
    }

    public Superblock withState(boolean clean, int mounts) {
        return new Superblock(layout, uuid, featuresCompat, featuresIncompat, featuresRoCompat, clean, mounts,
                createdSeconds, System.currentTimeMillis() / 1000, copyOf, mmpIntervalMillis);
    }

    public Superblock copyIn(int group) {
        return new Superblock(layout, uuid, featuresCompat, featuresIncompat, featuresRoCompat, clean, mounts,
                createdSeconds, writtenSeconds, group, mmpIntervalMillis);
    }

    public byte[] uuidBytes() {
        byte[] b = new byte[16];
        ByteBuffer.wrap(b).putLong(uuid.getMostSignificantBits()).putLong(uuid.getLeastSignificantBits());
        return b;
    }

    public byte[] encode() {
        byte[] b = new byte[BYTES];
        ByteBuffer o = Layout.le(b);
        Geometry g = layout.geometry();
        o.put(MAGIC);
        o.putInt(8, VERSION).putInt(12, featuresCompat).putInt(16, featuresIncompat).putInt(20, featuresRoCompat);
        o.putInt(24, g.blockSizeBytes()).putInt(28, g.blocksPerGroup()).putLong(32, g.totalBlocks());
        o.putInt(40, g.systemBlocksPerGroup()).putInt(44, g.journalBlocks());
        o.putLong(48, layout.gdtStart()).putInt(56, layout.gdtBlocks());
        o.putLong(64, layout.fileTableStart()).putInt(72, layout.fileTableBlocks());
        o.putLong(80, layout.journalStart()).putInt(88, layout.journalBlocks());
        o.putInt(92, g.strideBlocks()).putInt(96, g.stripeBlocks());
        System.arraycopy(uuidBytes(), 0, b, 100, 16);
        o.putInt(116, clean ? 1 : 0).putInt(120, mounts).putLong(124, createdSeconds).putLong(132, writtenSeconds);
        o.putInt(140, copyOf);
        if (layout.mmp()) o.putLong(144, layout.mmpBlock()).putInt(152, mmpIntervalMillis);
        o.putInt(1020, Layout.crc(b, 0, 1020));
        return b;
    }

    /**
     * Decodes and checks a superblock read at {@code block}.
     *
     * @throws VolumeException.NotAVolume  when the magic is wrong
     * @throws VolumeException.Corrupt     when the checksum fails or the geometry is impossible
     * @throws VolumeException.NewerFormat when the version is newer or an incompatible feature is unknown
     * @throws VolumeException.OlderFormat when the version is older than this one reads
     */
    public static Superblock decode(byte[] b, long block, String image) {
        for (int i = 0; i < MAGIC.length; i++)
            if (b[i] != MAGIC[i]) throw new VolumeException.NotAVolume(image + " is not a Blockyard volume (no superblock"
                    + " magic at block " + block + ")");
        ByteBuffer o = Layout.le(b);
        if (o.getInt(1020) != Layout.crc(b, 0, 1020))
            throw new VolumeException.Corrupt(VolumeException.Structure.SUPERBLOCK, block, "checksum mismatch");
        int version = o.getInt(8);
        if (version > VERSION)
            throw new VolumeException.NewerFormat(image + " has format version " + version + "; this Blockyard reads"
                    + " version " + VERSION + " only");
        if (version < VERSION)
            throw new VolumeException.OlderFormat(image + " has format version " + version + ", whose free file-table"
                    + " slots are zeros that cannot be told from a lost block; this Blockyard reads version " + VERSION
                    + ": copy the files off with the release that made the volume, then mkfs it anew");
        int incompat = o.getInt(16);
        if ((incompat & ~KNOWN_INCOMPAT) != 0)
            throw new VolumeException.NewerFormat(image + " needs features 0x" + Integer.toHexString(incompat & ~KNOWN_INCOMPAT)
                    + " that this Blockyard does not know");
        Layout layout;
        try {
            Geometry g = new Geometry(o.getInt(24), o.getLong(32), o.getInt(28), o.getInt(40), o.getInt(44),
                    o.getInt(92), o.getInt(96));
            boolean mmp = (incompat & INCOMPAT_MMP) != 0;
            layout = new Layout(g, o.getInt(56), o.getInt(72), o.getInt(88), mmp ? 1 : 0);
            if (layout.gdtStart() != o.getLong(48) || layout.fileTableStart() != o.getLong(64)
                    || layout.journalStart() != o.getLong(80)
                    || mmp && (layout.mmpBlock() != o.getLong(144) || o.getInt(152) < 1)
                    || !mmp && (o.getLong(144) != 0 || o.getInt(152) != 0)
                    || (long) layout.gdtBlocks() + layout.fileTableBlocks() + layout.journalBlocks()
                    + layout.mmpBlocks() != g.journalBlocks()
                    || (long) layout.gdtBlocks() * layout.descriptorsPerBlock() < g.groups()
                    || g.systemBlocksPerGroup() != Geometry.of(g.blockSizeBytes(), g.totalBlocks(), g.blocksPerGroup())
                    .systemBlocksPerGroup())
                throw new IllegalArgumentException("structure positions do not follow from the geometry");
        } catch (IllegalArgumentException e) {
            throw new VolumeException.Corrupt(VolumeException.Structure.SUPERBLOCK, block, "impossible geometry: "
                    + e.getMessage());
        }
        long msb = ByteBuffer.wrap(b, 100, 16).getLong(), lsb = ByteBuffer.wrap(b, 108, 8).getLong();
        return new Superblock(layout, new UUID(msb, lsb), o.getInt(12), incompat, o.getInt(20), o.getInt(116) == 1,
                o.getInt(120), o.getLong(124), o.getLong(132), o.getInt(140), o.getInt(152));
    }
}
