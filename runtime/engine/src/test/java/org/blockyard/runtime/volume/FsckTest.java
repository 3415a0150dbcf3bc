package org.blockyard.runtime.volume;

import static org.blockyard.runtime.volume.Volumes.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.blockyard.api.alloc.Geometry;
import org.blockyard.runtime.alloc.FileState;
import org.blockyard.runtime.volume.Fsck.Kind;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Each problem class fsck names, made on purpose; --repair fixes the safe ones and leaves the others. */
class FsckTest {
    @TempDir
    Path dir;
    Path image;
    long aStart; // first physical block of file a

    @BeforeEach
    void volumeWithTwoFiles() {
        image = Volumes.make(dir, 4);
        try (Volume v = Volumes.open(image)) {
            join(v.allocator().open("a"));
            aStart = join(v.allocator().getBlocks("a", 0, 30, true)).physicalStart();
            join(v.allocator().open("b"));
            join(v.allocator().getBlocks("b", 0, 10, true));
        }
        assertTrue(Fsck.check(image, false).clean(), () -> Fsck.check(image, false).report());
    }

    private Fsck.Result checkFinds(Kind kind) {
        Fsck.Result r = Fsck.check(image, false);
        assertTrue(r.count(kind) > 0, r.report());
        assertEquals(4, r.exitCode(), r.report());
        return r;
    }

    private void repairFixesIt() {
        Fsck.Result fixed = Fsck.check(image, true);
        assertEquals(1, fixed.exitCode(), fixed.report());
        Fsck.Result after = Fsck.check(image, false);
        assertTrue(after.clean(), after.report());
        try (Volume v = Volumes.open(image)) {
            assertTrue(v.recovery().wasClean());
        }
    }

    @Test
    void aLeakIsFoundAndFreed() {
        Tamper.rewrite(image, m -> m.bitmapChanged(2, 2 * 4096 + 100, 7, true));
        Fsck.Result r = checkFinds(Kind.LEAK);
        assertTrue(r.report().contains("blocks 8292..8298 are marked used in group 2"), r.report());
        repairFixesIt();
    }

    @Test
    void anOwnedBlockMarkedFreeIsFoundAndMarkedUsed() {
        Tamper.rewrite(image, m -> m.bitmapChanged(m.geometry.groupOf(aStart), aStart + 3, 2, false));
        Fsck.Result r = checkFinds(Kind.OWNED_BUT_FREE);
        assertTrue(r.report().contains("owned by file 'a' (logical 3)"), r.report());
        repairFixesIt();
    }

    @Test
    void aBlockOwnedTwiceIsReportedForTheUserToDecide() {
        Tamper.rewrite(image, m -> m.fileChanged(m.entry("b").id, FileState.Change.MAPPED, 500, aStart + 5, 4));
        Fsck.Result r = checkFinds(Kind.OWNED_TWICE);
        assertTrue(r.report().contains("owned by file 'a' (logical 5) and by file 'b' (logical 500)"), r.report());
        Fsck.Result repair = Fsck.check(image, true);
        assertEquals(4, repair.exitCode(), "double ownership is not the tool's to decide: " + repair.report());
        assertTrue(Fsck.check(image, false).count(Kind.OWNED_TWICE) > 0);
    }

    @Test
    void aFileOwningASystemZoneBlockIsReported() {
        Layout l = Volumes.layout(4);
        Tamper.rewrite(image, m -> m.fileChanged(m.entry("b").id, FileState.Change.MAPPED, 900, l.gdtStart(), 1));
        Fsck.Result r = checkFinds(Kind.SYSTEM_ZONE_OWNED);
        assertTrue(r.report().contains("file 'b' logical 900: physical block " + l.gdtStart()
                + " is in the system zone (group descriptors)"), r.report());
        assertEquals(4, Fsck.check(image, true).exitCode());
    }

    @Test
    void aRunCrossingIntoTheNextGroupsSystemZoneIsReportedAtItsFirstSystemBlock() {
        Layout l = Volumes.layout(4);
        long zone = l.geometry().groupStart(2); // group 2's bitmap
        Tamper.rewrite(image, m -> m.fileChanged(m.entry("b").id, FileState.Change.MAPPED, 900, zone - 3, 6));
        Fsck.Result r = checkFinds(Kind.SYSTEM_ZONE_OWNED);
        assertTrue(r.report().contains("file 'b' logical 903: physical block " + zone + " is in the system zone"),
                r.report());
    }

    /**
     * Bitmaps that disagree with the owners in hundreds of runs of every length, some crossing words, some
     * where ownership changes inside a run of differing bits: fsck's word-at-a-time compare names exactly the
     * runs a bit-by-bit walk finds, each as a leak or as owned blocks marked free, and --repair leaves it clean.
     */
    @Test
    void everyDisagreeingRunIsNamedAsABitByBitWalkFindsIt() {
        try (Volume v = Volumes.open(image)) {
            for (String f : List.of("c", "d")) {
                join(v.allocator().open(f));
                for (long l = 0; l < 3_000; l += 37) join(v.allocator().getBlocks(f, l, 20 + (int) (l % 17), true));
                for (long l = 0; l < 3_000; l += 40) join(v.allocator().discardUnwritten(f, l, 10));
            }
        }
        Random rnd = new Random(5);
        Tamper.rewrite(image, m -> {
            Geometry g = m.geometry;
            for (int k = 0; k < 300; k++) {
                int group = rnd.nextInt(g.groups());
                int from = g.systemBlocks(group) + rnd.nextInt(g.groupBlocks(group) - g.systemBlocks(group));
                int blocks = 1 + rnd.nextInt(Math.min(150, g.groupBlocks(group) - from));
                m.bitmapChanged(group, g.groupStart(group) + from, blocks, rnd.nextBoolean());
            }
        });
        Metadata m = Volume.inspect(image);
        Geometry g = m.geometry;
        boolean[] owned = new boolean[(int) g.totalBlocks()];
        for (Metadata.Entry e : m.entries())
            for (ExtentMap.Run r : e.map.runs())
                for (long b = r.physical(); b < r.physicalEnd(); b++) owned[(int) b] = true;
        List<String> expected = new ArrayList<>();
        for (int group = 0; group < g.groups(); group++) {
            long[] want = m.bitmapWords(group);
            long base = g.groupStart(group);
            for (int i = g.systemBlocks(group), to = g.groupBlocks(group); i < to; ) {
                boolean o = owned[(int) (base + i)], u = (want[i >>> 6] & (1L << (i & 63))) != 0;
                if (o == u) {
                    i++;
                    continue;
                }
                int s = i;
                while (i < to && owned[(int) (base + i)] == o && ((want[i >>> 6] & (1L << (i & 63))) != 0) == u) i++;
                expected.add((o ? Kind.OWNED_BUT_FREE : Kind.LEAK) + " " + (base + s) + ".." + (base + i - 1));
            }
        }
        Pattern blocks = Pattern.compile("^blocks (\\d+\\.\\.\\d+) ");
        List<String> found = new ArrayList<>();
        Fsck.Result r = Fsck.check(image, false);
        for (Fsck.Problem p : r.problems()) {
            Matcher x = blocks.matcher(p.what());
            if (x.find()) found.add(p.kind() + " " + x.group(1));
        }
        assertTrue(expected.size() > 100, "the tampering made " + expected.size() + " runs");
        assertEquals(expected, found);
        // Besides: each group's free count, right for the bitmap as it was, wrong for the bitmap as corrected.
        assertEquals(expected.size() + g.groups(), r.problems().size(), "problems besides the runs");
        assertEquals(g.groups(), r.count(Kind.WRONG_FREE_COUNT));
        repairFixesIt();
    }

    @Test
    void aWrongFreeCountIsFoundAndRebuilt() {
        Layout l = Volumes.layout(4);
        Superblock sb = Superblock.decode(Tamper.read(image, 0, Superblock.BYTES), 0, "t");
        byte[] gdt = Tamper.read(image, l.gdtStart() * 4096, 4096);
        int off = 3 * Layout.DESCRIPTOR_BYTES; // group 3
        ByteBuffer o = Layout.le(gdt);
        o.putInt(off + 8, o.getInt(off + 8) - 17);
        o.putInt(off + 28, Layout.crc(sb.uuidBytes(), 3, gdt, off, 28)); // a valid checksum over a wrong count
        Tamper.write(image, l.gdtStart() * 4096, gdt);
        Fsck.Result r = checkFinds(Kind.WRONG_FREE_COUNT);
        assertTrue(r.report().contains("group 3: descriptor counts"), r.report());
        repairFixesIt();
    }

    @Test
    void checksumFailuresAreFoundAndRewritten() {
        Layout l = Volumes.layout(4);
        Tamper.flip(image, l.bitmapBlock(Tamper.groupOf(image, "a")) * 4096 + 300);
        checkFinds(Kind.BITMAP_CHECKSUM);
        repairFixesIt();
        Tamper.flip(image, l.gdtStart() * 4096 + 2 * Layout.DESCRIPTOR_BYTES + 1);
        checkFinds(Kind.DESCRIPTOR_CHECKSUM);
        repairFixesIt();
    }

    @Test
    void aCorruptSuperblockIsRestoredFromItsBackup() {
        Tamper.flip(image, 40);
        Fsck.Result r = checkFinds(Kind.SUPERBLOCK);
        assertTrue(r.report().contains("using the backup in group 1"), r.report());
        repairFixesIt();
        assertEquals(30, Volume.inspect(image).entry("a").map.mappedBlocks());
    }

    @Test
    void aCommittedJournalIsCheckedAsReplayed() {
        Volume v = Volume.open(image, Volumes.CONFIG, new Journal.Settings(0, 64, 1.0));
        join(v.allocator().open("a"));
        join(v.allocator().getBlocks("a", 30, 10, true));
        v.abandon();
        Fsck.Result r = Fsck.check(image, false);
        assertTrue(r.notes().stream().anyMatch(n -> n.contains("committed transactions")), r.report());
    }
}
