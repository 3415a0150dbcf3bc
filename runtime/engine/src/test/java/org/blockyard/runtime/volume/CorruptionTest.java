package org.blockyard.runtime.volume;

import static org.blockyard.runtime.volume.Volumes.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;

import org.blockyard.runtime.volume.VolumeException.Structure;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One flipped byte in each kind of metadata block: opening detects it, names the structure and the block,
 * refuses the volume (so the block is never used to hand anything out), and leaves the image as it was.
 * Bad input is refused the same way.
 */
class CorruptionTest {
    @TempDir
    Path dir;

    private Path volumeWithAFile() {
        Path image = Volumes.make(dir, 4);
        try (Volume v = Volumes.open(image)) {
            join(v.allocator().open("a"));
            join(v.allocator().getBlocks("a", 0, 40, true));
            join(v.allocator().allocate(8, 1, 0, -1));
        }
        return image;
    }

    private void assertRefused(Path image, Structure structure, long block) {
        String before = Tamper.digest(image);
        VolumeException.Corrupt e = assertThrows(VolumeException.Corrupt.class, () -> Volumes.open(image));
        assertEquals(structure, e.structure(), e.getMessage());
        assertEquals(block, e.block(), e.getMessage());
        assertTrue(e.getMessage().startsWith(structure.toString()), e.getMessage());
        assertEquals(before, Tamper.digest(image), "a refused open changed the image");
    }

    @Test
    void aFlippedSuperblockByteIsDetected() {
        Path image = volumeWithAFile();
        Tamper.flip(image, 33);
        assertRefused(image, Structure.SUPERBLOCK, 0);
    }

    @Test
    void aFlippedGroupDescriptorByteIsDetected() {
        Path image = volumeWithAFile();
        Layout l = Volumes.layout(4);
        Tamper.flip(image, l.gdtStart() * 4096 + Layout.DESCRIPTOR_BYTES + 9); // group 1's free count
        assertRefused(image, Structure.GROUP_DESCRIPTOR, l.gdtStart());
    }

    @Test
    void aFlippedBitmapByteIsDetected() {
        Path image = volumeWithAFile();
        Layout l = Volumes.layout(4);
        int group = Tamper.groupOf(image, "a"); // a group whose bitmap was written (the others are never read)
        Tamper.flip(image, l.bitmapBlock(group) * 4096 + 200);
        assertRefused(image, Structure.BITMAP, l.bitmapBlock(group));
    }

    @Test
    void aFlippedFileTableByteIsDetected() {
        Path image = volumeWithAFile();
        Layout l = Volumes.layout(4);
        long slot = -1;
        for (int s = 0; s < l.fileTableBlocks() && slot < 0; s++)
            if (ByteBuffer.wrap(Tamper.read(image, (l.fileTableStart() + s) * 4096, 4)).getInt() != 0) slot = s;
        Tamper.flip(image, (l.fileTableStart() + slot) * 4096 + Layout.TABLE_HEADER_BYTES + 9); // an extent's physical
        assertRefused(image, Structure.FILE_TABLE, l.fileTableStart() + slot);
    }

    @Test
    void aFlippedJournalSuperblockByteIsDetected() {
        Path image = volumeWithAFile();
        Layout l = Volumes.layout(4);
        Tamper.flip(image, l.journalStart() * 4096 + 9);
        assertRefused(image, Structure.JOURNAL, l.journalStart());
    }

    @Test
    void aCommittedTransactionLoggingABlockOutsideTheVolumeIsRefused() {
        Path image = volumeWithAFile();
        Layout l = Volumes.layout(4);
        Superblock sb = Superblock.decode(Tamper.read(image, 0, Superblock.BYTES), 0, "t");
        ByteBuffer js = Layout.le(Tamper.read(image, l.journalStart() * 4096, 4096));
        long seq = js.getLong(8), pos = js.getLong(16);
        // A well-formed transaction, checksum and all, whose one tag points past the end of the volume.
        byte[] desc = new byte[4096], data = new byte[4096], commit = new byte[4096];
        Layout.le(desc).putInt(0, Journal.DESC_MAGIC).putInt(4, Journal.TYPE_DESCRIPTOR).putLong(8, seq).putInt(16, 1)
                .putLong(Journal.DESC_HEADER_BYTES, l.geometry().totalBlocks() + 5);
        var crc = Journal.seeded(sb.uuidBytes(), seq);
        crc.update(desc);
        crc.update(data);
        Layout.le(commit).putInt(0, Journal.DESC_MAGIC).putInt(4, Journal.TYPE_COMMIT).putLong(8, seq).putInt(16, 1)
                .putInt(20, (int) crc.getValue());
        Tamper.write(image, Journal.layoutBlock(l, pos) * 4096, desc);
        Tamper.write(image, Journal.layoutBlock(l, pos + 1) * 4096, data);
        Tamper.write(image, Journal.layoutBlock(l, pos + 2) * 4096, commit);
        String before = Tamper.digest(image);
        VolumeException.JournalDamaged e = assertThrows(VolumeException.JournalDamaged.class, () -> Volumes.open(image));
        assertEquals(java.util.List.of(seq), e.skipped(), e.getMessage());
        assertTrue(e.getMessage().contains("logs block " + (l.geometry().totalBlocks() + 5)), e.getMessage());
        assertEquals(before, Tamper.digest(image), "a refused open changed the image");
    }

    @Test
    void badImagesAreRefusedWithoutAChange() throws Exception {
        Path junk = dir.resolve("junk.img");
        Files.write(junk, new byte[64 * 1024]);
        assertThrows(VolumeException.NotAVolume.class, () -> Volumes.open(junk));

        Path image = volumeWithAFile();
        byte[] sb = Tamper.read(image, 0, Superblock.BYTES);
        Layout.le(sb).putInt(8, Superblock.VERSION + 1);
        Layout.le(sb).putInt(1020, Layout.crc(sb, 0, 1020));
        Tamper.write(image, 0, sb);
        String before = Tamper.digest(image);
        VolumeException.NewerFormat newer = assertThrows(VolumeException.NewerFormat.class, () -> Volumes.open(image));
        assertTrue(newer.getMessage().contains("version " + (Superblock.VERSION + 1)), newer.getMessage());
        assertEquals(before, Tamper.digest(image));

        Path other = dir.resolve("short.img");
        Volume.mkfs(other, Volumes.layout(4));
        try (var ch = java.nio.channels.FileChannel.open(other, java.nio.file.StandardOpenOption.WRITE)) {
            ch.truncate(4096L * 4096 * 2);
        }
        assertThrows(VolumeException.Truncated.class, () -> Volumes.open(other));
    }
}
