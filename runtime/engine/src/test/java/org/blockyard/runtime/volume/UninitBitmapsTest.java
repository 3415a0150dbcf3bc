package org.blockyard.runtime.volume;

import static org.blockyard.runtime.volume.Volumes.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.blockyard.runtime.volume.VolumeException.Structure;

/**
 * Bitmaps left unwritten by mkfs (ext4's BLOCK_UNINIT): a descriptor flag says the group's bitmap is its
 * system zone and nothing else; its block is never read, so stale bytes there are never trusted; the first
 * change to the group writes the bitmap and clears the flag in the same transaction.
 */
class UninitBitmapsTest {
    @TempDir
    Path dir;

    private static int flags(Path image, Layout l, int group) {
        byte[] gdt = Tamper.read(image, (l.gdtStart() + group / l.descriptorsPerBlock()) * 4096L, 4096);
        return Layout.le(gdt).getInt((group % l.descriptorsPerBlock()) * Layout.DESCRIPTOR_BYTES + 12);
    }

    @Test
    void mkfsWritesNoBitmapAndEveryGroupSaysSo() {
        Layout l = Volumes.layout(4);
        Superblock sb = Superblock.fresh(l);
        assertTrue(sb.uninitBitmaps());
        List<Long> written = Metadata.fresh(sb).allBlocks();
        for (int g = 0; g < 4; g++) assertFalse(written.contains(l.bitmapBlock(g)), "bitmap of group " + g);
        Path image = Volumes.make(dir, 4);
        for (int g = 0; g < 4; g++) assertEquals(Metadata.FLAG_UNINIT, flags(image, l, g), "group " + g);
        assertTrue(Fsck.check(image, false).clean(), () -> Fsck.check(image, false).report());
    }

    @Test
    void staleBytesInAnUnwrittenBitmapAreNeverTrusted() {
        Path image = Volumes.make(dir, 4);
        Layout l = Volumes.layout(4);
        byte[] stale = new byte[4096];
        Arrays.fill(stale, (byte) 0xff); // an earlier volume's bitmap: everything used
        Tamper.write(image, l.bitmapBlock(3) * 4096, stale);
        try (Volume v = Volumes.open(image)) {
            assertEquals(l.geometry().dataBlocks(), (long) join(v.allocator().freeBlocks()),
                    "group 3 is free whatever its bitmap block holds");
        }
        assertTrue(Fsck.check(image, false).clean(), () -> Fsck.check(image, false).report());
    }

    @Test
    void theFirstChangeWritesTheBitmapAndClearsTheFlagTogether() {
        Path image = Volumes.make(dir, 4);
        Layout l = Volumes.layout(4);
        long start;
        try (Volume v = Volumes.open(image)) {
            join(v.allocator().open("a"));
            start = join(v.allocator().getBlocks("a", 0, 50, true)).physicalStart();
        }
        int group = l.geometry().groupOf(start);
        assertEquals(0, flags(image, l, group), "group " + group + " was used");
        int other = (group + 1) % 4;
        if (other == 0) other = 1;
        assertEquals(Metadata.FLAG_UNINIT, flags(image, l, other), "group " + other + " never was");
        try (Volume v = Volumes.open(image)) {
            join(v.allocator().open("a"));
            assertEquals(50, join(v.allocator().getBlocks("a", 0, 50, false)).blocks(), "the file reads back");
        }
        // fsck --repair rewrites every written bitmap and leaves the others unwritten.
        assertEquals(0, Fsck.check(image, true).exitCode());
        assertEquals(0, flags(image, l, group));
        assertEquals(Metadata.FLAG_UNINIT, flags(image, l, other), "group " + other + " after fsck --repair");
        assertTrue(Fsck.check(image, false).clean());
        // Now the written bitmap is checked like any other.
        Tamper.flip(image, l.bitmapBlock(group) * 4096 + 100);
        VolumeException.Corrupt e = assertThrows(VolumeException.Corrupt.class, () -> Volumes.open(image));
        assertEquals(Structure.BITMAP, e.structure(), e.getMessage());
    }

    @Test
    void aFlagTheFeaturesDoNotAllowIsCorrupt() {
        Path image = Volumes.make(dir, 4);
        Layout l = Volumes.layout(4);
        Superblock sb = Superblock.decode(Tamper.read(image, 0, Superblock.BYTES), 0, "t");
        byte[] gdt = Tamper.read(image, l.gdtStart() * 4096, 4096);
        ByteBuffer o = Layout.le(gdt);
        int off = 2 * Layout.DESCRIPTOR_BYTES;
        o.putInt(off + 12, 6); // a flag no version defines, with a valid checksum
        o.putInt(off + 28, Layout.crc(sb.uuidBytes(), 2, gdt, off, 28));
        Tamper.write(image, l.gdtStart() * 4096, gdt);
        VolumeException.Corrupt e = assertThrows(VolumeException.Corrupt.class, () -> Volumes.open(image));
        assertEquals(Structure.GROUP_DESCRIPTOR, e.structure(), e.getMessage());
        assertTrue(e.getMessage().contains("flags 0x6"), e.getMessage());
    }
}
