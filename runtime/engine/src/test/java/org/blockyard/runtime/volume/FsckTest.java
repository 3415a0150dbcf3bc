package org.blockyard.runtime.volume;

import static org.blockyard.runtime.volume.Volumes.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Path;

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
        Tamper.flip(image, l.bitmapBlock(1) * 4096 + 300);
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
