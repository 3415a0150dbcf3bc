package org.blockyard.runtime.volume;

import static org.blockyard.runtime.volume.Volumes.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** filefrag's lines and the map's colours, against a volume whose layout the test made. */
class ToolsTest {
    @TempDir
    Path dir;

    @Test
    void filefragListsExtentsWithExpectedAndFlags() {
        Path image = Volumes.make(dir, 4);
        long p0, p1;
        try (Volume v = Volumes.open(image)) {
            join(v.allocator().open("f"));
            p0 = join(v.allocator().getBlocks("f", 0, 8, true)).physicalStart();
            join(v.allocator().markWritten("f", 0, 8));
            join(v.allocator().allocate(50, 1, 0, p0 + 8)); // someone else takes the blocks after f's first run
            p1 = join(v.allocator().getBlocks("f", 8, 4, true)).physicalStart();
        }
        String out = Filefrag.format(Volume.inspect(image), "f");
        String[] lines = out.split("\n");
        assertEquals("File size of f is 49152 (12 blocks of 4096 bytes)", lines[1]);
        assertEquals(String.format("%4d: %8d..%8d: %10d..%10d: %6d: %10s %s", 0, 0, 7, p0, p0 + 7, 8, "", ""), lines[3]);
        String expected = p1 == p0 + 8 ? "" : Long.toString(p0 + 8);
        assertEquals(String.format("%4d: %8d..%8d: %10d..%10d: %6d: %10s %s", 1, 8, 11, p1, p1 + 3, 4, expected,
                "unwritten,last,eof"), lines[4]);
        assertEquals("f: 2 extents found", lines[5]);
        assertThrows(VolumeException.NoSuchFile.class, () -> Filefrag.format(Volume.inspect(image), "g"));
    }

    @Test
    void theMapShowsSystemZoneFreeSpaceAndEachFileInItsColour() {
        Path image = Volumes.make(dir, 2);
        long start;
        try (Volume v = Volumes.open(image)) {
            join(v.allocator().open("big"));
            start = join(v.allocator().getBlocks("big", 0, 2048, true)).physicalStart();
        }
        BlockMap.Picture p = BlockMap.draw(Volume.inspect(image), 4096, 4); // one pixel per block
        int colour = p.legend().get("big");
        assertEquals(colour, p.image().getRGB((int) start + 5, 0) & 0xFFFFFF);
        assertEquals(BlockMap.SYSTEM, p.image().getRGB(0, 0) & 0xFFFFFF);
        assertEquals(BlockMap.FREE, p.image().getRGB(4095, 5) & 0xFFFFFF); // group 1, last block
        assertEquals(2 * 5, p.image().getHeight());
        assertTrue(p.legend().containsKey("free"));
    }
}
