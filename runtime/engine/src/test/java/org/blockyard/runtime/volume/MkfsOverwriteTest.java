package org.blockyard.runtime.volume;

import static org.blockyard.runtime.volume.Volumes.join;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Extent;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** mkfs does not overwrite a volume, or a file with data in it, unless forced; never one that is open. */
class MkfsOverwriteTest {
    @TempDir
    Path dir;

    /** A volume with one file of 40 blocks on it; answers the file's extents. */
    private List<Extent> volumeWithAFile(Path image) {
        Volume.mkfs(image, Volumes.layout(4));
        try (Volume v = Volumes.open(image)) {
            join(v.allocator().open("keep"));
            BlockRun r = join(v.allocator().getBlocks("keep", 0, 40, true));
            assertEquals(40, r.blocks());
            return join(v.allocator().fileExtents("keep"));
        }
    }

    @Test
    void aVolumeIsNotOverwrittenAndItsFilesStay() throws IOException {
        Path image = dir.resolve("vol.img");
        List<Extent> extents = volumeWithAFile(image);
        byte[] before = Files.readAllBytes(image);
        VolumeException.WouldOverwrite e = assertThrows(VolumeException.WouldOverwrite.class,
                () -> Volume.mkfs(image, Volumes.layout(8)));
        assertTrue(e.getMessage().contains("already holds a Blockyard volume") && e.getMessage().contains("--force"),
                e.getMessage());
        assertArrayEquals(before, Files.readAllBytes(image), "nothing written");
        try (Volume v = Volumes.open(image)) {
            join(v.allocator().open("keep"));
            assertEquals(extents, join(v.allocator().fileExtents("keep")));
        }
    }

    @Test
    void forceMakesANewEmptyVolumeOverIt() {
        Path image = dir.resolve("vol.img");
        volumeWithAFile(image);
        String oldUuid = Volume.inspect(image).superblock.uuid().toString();
        Superblock made = Volume.mkfs(image, Volumes.layout(4), true);
        assertNotEquals(oldUuid, made.uuid().toString());
        try (Volume v = Volumes.open(image)) {
            assertEquals(v.geometry().dataBlocks(), join(v.allocator().freeBlocks()), "the old file is gone");
        }
        assertTrue(Fsck.check(image, false).clean());
    }

    @Test
    void aFileWithDataIsNotOverwrittenButAZeroFilledOneIsTaken() throws IOException {
        Path data = dir.resolve("notes.txt");
        Files.writeString(data, "\n".repeat(5000) + "a line someone wrote\n");
        byte[] before = Files.readAllBytes(data);
        VolumeException.WouldOverwrite e = assertThrows(VolumeException.WouldOverwrite.class,
                () -> Volume.mkfs(data, Volumes.layout(4)));
        assertTrue(e.getMessage().contains("holds data") && e.getMessage().contains("offset 0"), e.getMessage());
        assertArrayEquals(before, Files.readAllBytes(data), "nothing written");

        Path zeros = dir.resolve("zeros.img");
        try (RandomAccessFile f = new RandomAccessFile(zeros.toFile(), "rw")) {
            f.setLength(Volumes.layout(4).geometry().bytes() * 2); // as truncate -s or fallocate leave it
        }
        Volume.mkfs(zeros, Volumes.layout(4));
        assertTrue(Fsck.check(zeros, false).clean());
    }

    @Test
    void anOpenVolumeIsRefusedEvenWithForce() throws IOException {
        Path image = dir.resolve("vol.img");
        volumeWithAFile(image);
        try (Volume v = Volumes.open(image)) {
            byte[] before = Files.readAllBytes(image);
            assertThrows(VolumeException.InUse.class, () -> Volume.mkfs(image, Volumes.layout(4), true));
            assertArrayEquals(before, Files.readAllBytes(image), "nothing written under the open volume");
            join(v.allocator().open("keep"));
            assertEquals(40, join(v.allocator().getBlocks("keep", 0, 40, false)).blocks(), "and it goes on");
        }
    }
}
