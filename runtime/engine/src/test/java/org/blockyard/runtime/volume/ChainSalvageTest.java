package org.blockyard.runtime.volume;

import static org.blockyard.runtime.volume.Volumes.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;

import org.blockyard.api.alloc.Extent;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A file-table chain whose blocks each check but do not make one chain (blocks of two layouts, as a replay
 * stopped at a damaged transaction can leave while a checkpoint had written later blocks home): the open
 * refuses it, fsck --repair rebuilds the entry from its blocks, and the volume opens with every run the
 * blocks agree on.
 */
class ChainSalvageTest {
    @TempDir
    Path dir;

    /** A file of 400 one-block runs (a hole after each): three table blocks. Answers its extents. */
    private static List<Extent> longFile(Path image) {
        try (Volume v = Volumes.open(image)) {
            join(v.allocator().open("long"));
            for (int i = 0; i < 400; i++) join(v.allocator().getBlocks("long", 2L * i, 1, true));
            join(v.allocator().close("long"));
            return join(v.allocator().fileExtents("long"));
        }
    }

    /** Rewrites header field {@code offset} of the file's table block {@code index} to {@code value}, checksum and all. */
    private static void rewriteHeader(Path image, int index, int offset, int value) {
        Metadata m = Volume.inspect(image);
        Superblock sb = m.superblock;
        long block = m.layout.fileTableStart() + m.entry("long").slots().get(index);
        byte[] b = Tamper.read(image, block * 4096, 4096);
        ByteBuffer o = Layout.le(b);
        o.putInt(offset, value);
        o.putInt(4, Layout.crc(sb.uuidBytes(), block, b, 8, b.length - 8));
        Tamper.write(image, block * 4096, b);
    }

    private void assertSalvaged(Path image, List<Extent> extents) {
        VolumeException.Corrupt refused = assertThrows(VolumeException.Corrupt.class, () -> Volumes.open(image).close());
        assertEquals(VolumeException.Structure.FILE_TABLE, refused.structure(), refused.getMessage());
        Fsck.Result repaired = Fsck.check(image, true);
        assertEquals(1, repaired.count(Fsck.Kind.FILE_TABLE_CHECKSUM), repaired::report);
        assertEquals(1, repaired.exitCode(), repaired::report);
        try (Volume v = Volumes.open(image)) {
            assertEquals(extents, join(v.allocator().fileExtents("long")));
        }
        Fsck.Result after = Fsck.check(image, false);
        assertTrue(after.clean(), after::report);
    }

    @Test
    void aChainWhoseBlocksDisagreeOnItsLengthIsRebuiltFromThem() {
        Path image = Volumes.make(dir, 4);
        List<Extent> extents = longFile(image);
        assertEquals(3, Volume.inspect(image).entry("long").slots().size());
        rewriteHeader(image, 1, 24, 2); // its middle block says the chain has two blocks
        assertSalvaged(image, extents);
    }

    @Test
    void aChainWithTwoBlocksOfOneIndexIsRebuiltFromThem() {
        Path image = Volumes.make(dir, 4);
        List<Extent> extents = longFile(image);
        rewriteHeader(image, 2, 20, 1); // its last block says it is the middle one
        assertSalvaged(image, extents);
    }
}
