package org.blockyard.runtime.volume;

import static org.blockyard.runtime.volume.Volumes.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.MapRequest;
import org.blockyard.runtime.volume.VolumeException.Structure;

/**
 * Free file-table slots carry the table magic and a checksum (format version 2): a table block that reads as
 * zeros, or as garbage, is damage, not a free slot. Open refuses it and writes nothing; fsck reports it and
 * its repair frees none of the lost file's blocks. A version-1 volume is refused with what to do.
 */
class FileTableSlotTest {
    @TempDir
    Path dir;

    private record TwoFiles(Path image, long blockOfB, List<Extent> extentsOfB) {}

    /** Files "a" and "b", closed; where b's table block is and its extents. */
    private TwoFiles twoFiles() {
        Path image = Volumes.make(dir, 4);
        try (Volume v = Volumes.open(image)) {
            VolumeAllocator a = v.allocator();
            join(a.open("a"));
            join(a.getBlocks("a", 0, 40, true));
            join(a.close("a"));
            join(a.open("b"));
            join(a.getBlocks("b", 0, 24, true));
            join(a.close("b"));
        }
        Metadata m = Volume.inspect(image);
        Metadata.Entry b = m.entry("b");
        List<Extent> extents = new ArrayList<>();
        for (ExtentMap.Run r : b.map.runs()) extents.add(new Extent(r.physical(), r.blocks()));
        assertEquals(1, b.slots().size());
        return new TwoFiles(image, m.layout.fileTableStart() + b.slots().get(0), extents);
    }

    @Test
    void aZeroedTableBlockIsRefusedOnOpenAndItsFilesBlocksAreNeverFreed() {
        TwoFiles t = twoFiles();
        Tamper.write(t.image(), t.blockOfB() * 4096, new byte[4096]);
        VolumeException.Corrupt e = assertRefused(t.image(), t.blockOfB());
        assertTrue(e.getMessage().contains("zeros"), e.getMessage());
        assertFsckKeepsTheLostFilesBlocks(t);
    }

    @Test
    void aGarbageTableBlockIsRefusedOnOpenAndItsFilesBlocksAreNeverFreed() {
        TwoFiles t = twoFiles();
        byte[] junk = new byte[4096];
        new Random(7).nextBytes(junk);
        Tamper.write(t.image(), t.blockOfB() * 4096, junk);
        assertRefused(t.image(), t.blockOfB());
        assertFsckKeepsTheLostFilesBlocks(t);
    }

    /** A free slot zeroed is damage too: the open cannot know it held nothing. */
    @Test
    void aZeroedFreeSlotIsRefusedToo() {
        TwoFiles t = twoFiles();
        Layout l = Volumes.layout(4);
        long last = l.fileTableStart() + l.fileTableBlocks() - 1;
        Tamper.write(t.image(), last * 4096, new byte[4096]);
        assertRefused(t.image(), last);
    }

    private static VolumeException.Corrupt assertRefused(Path image, long block) {
        String before = Tamper.digest(image);
        VolumeException.Corrupt e = assertThrows(VolumeException.Corrupt.class, () -> Volumes.open(image));
        assertEquals(Structure.FILE_TABLE, e.structure(), e.getMessage());
        assertEquals(block, e.block(), e.getMessage());
        assertEquals(before, Tamper.digest(image), "a refused open changed the image");
        return e;
    }

    /** fsck reports the block; its repair leaves it, and frees none of b's blocks (they look like leaks). */
    private static void assertFsckKeepsTheLostFilesBlocks(TwoFiles t) {
        Fsck.Result check = Fsck.check(t.image(), false);
        assertEquals(1, check.count(Fsck.Kind.FILE_TABLE_CHECKSUM), check::report);
        assertTrue(check.report().contains("block " + t.blockOfB()), check::report);
        assertEquals(4, check.exitCode());
        Fsck.Result repair = Fsck.check(t.image(), true);
        assertEquals(1, repair.count(Fsck.Kind.FILE_TABLE_CHECKSUM), repair::report);
        assertTrue(repair.problems().stream().filter(p -> p.kind() == Fsck.Kind.LEAK).noneMatch(Fsck.Problem::repaired),
                repair::report);
        assertEquals(4, repair.exitCode(), repair::report);
        Superblock sb = Superblock.decode(Tamper.read(t.image(), 0, Superblock.BYTES), 0, "t");
        Metadata m = Metadata.load(sb, b -> Tamper.read(t.image(), b * 4096, 4096), (s, b, w) -> {});
        for (Extent x : t.extentsOfB())
            for (long b = x.start(); b < x.end(); b++) assertTrue(m.isUsed(b), "b's block " + b + " after the repair");
        assertEquals(1, Fsck.check(t.image(), false).count(Fsck.Kind.FILE_TABLE_CHECKSUM), "still reported");
    }

    @Test
    void aVolumeOfFormatVersionOneIsRefusedWithWhatToDo() {
        Path image = Volumes.make(dir, 4);
        byte[] sb = Tamper.read(image, 0, Superblock.BYTES);
        Layout.le(sb).putInt(8, 1);
        Layout.le(sb).putInt(1020, Layout.crc(sb, 0, 1020));
        Tamper.write(image, 0, sb);
        String before = Tamper.digest(image);
        VolumeException.OlderFormat e = assertThrows(VolumeException.OlderFormat.class, () -> Volumes.open(image));
        assertTrue(e.getMessage().contains("format version 1") && e.getMessage().contains("mkfs"), e.getMessage());
        assertFalse(e.getMessage().contains("\n"), "one line: " + e.getMessage());
        assertEquals(before, Tamper.digest(image));
        assertThrows(VolumeException.OlderFormat.class, () -> Fsck.check(image, false));
    }

    /** mkfs, a delete, a chain that shrinks and fsck's repair all leave every free slot checksummed. */
    @Test
    void everyFreeSlotCarriesTheMagicAndAChecksum() {
        Path image = Volumes.make(dir, 4);
        assertEverySlotChecks(image, "after mkfs");
        int per = Volumes.layout(4).extentsPerTableBlock();
        try (Volume v = Volumes.open(image)) {
            VolumeAllocator a = v.allocator();
            join(a.open("long"));
            List<MapRequest> holes = new ArrayList<>();
            for (int i = 0; i < 3 * per; i++) holes.add(MapRequest.allocate(2L * i, 1)); // a run each: 3 blocks
            join(a.getBlocks("long", holes));
            join(a.open("gone"));
            join(a.getBlocks("gone", 0, 4, true));
            join(a.close("gone"));
            join(a.delete("gone"));
            join(a.truncate("long", 2L * per / 2)); // the chain shrinks to one block
            join(a.close("long"));
        }
        assertEverySlotChecks(image, "after a delete and a shrink");
        assertEquals(1, Volume.inspect(image).entry("long").slots().size());
        Tamper.rewrite(image, m -> m.bitmapChanged(1, m.geometry.groupStart(1) + 3000, 1, true)); // a leak
        Fsck.Result r = Fsck.check(image, true);
        assertEquals(1, r.exitCode(), r::report);
        assertEverySlotChecks(image, "after fsck --repair");
        assertTrue(Fsck.check(image, false).clean());
    }

    private static void assertEverySlotChecks(Path image, String when) {
        Superblock sb = Superblock.decode(Tamper.read(image, 0, Superblock.BYTES), 0, "t");
        Layout l = sb.layout();
        int free = 0;
        for (int s = 0; s < l.fileTableBlocks(); s++) {
            long block = l.fileTableStart() + s;
            byte[] b = Tamper.read(image, block * 4096, 4096);
            ByteBuffer o = Layout.le(b);
            assertEquals(Metadata.TABLE_MAGIC, o.getInt(0), when + ": slot " + s);
            assertEquals(Layout.crc(sb.uuidBytes(), block, b, 8, 4096 - 8), o.getInt(4), when + ": slot " + s);
            if (o.getLong(8) == 0) free++;
        }
        assertTrue(free > 0, when + ": free slots");
    }
}
