package org.blockyard.runtime.volume;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.junit.jupiter.api.Test;

/**
 * A load reads the written bitmaps of a volume with many groups several at a time: what it finds is what a
 * one-by-one read finds, group by group, and a bad or unreadable bitmap is reported as the same group's.
 */
class BitmapReadaheadTest {
    private static final int GROUPS = 600;
    private final Layout layout = Volumes.layout(GROUPS);
    private final Metadata meta = Metadata.fresh(Superblock.fresh(layout));
    private final Map<Long, byte[]> disk = new ConcurrentHashMap<>();
    private final List<Integer> written = new ArrayList<>();

    BitmapReadaheadTest() {
        for (long b : meta.allBlocks()) disk.put(b, meta.image(b));
        Random rnd = new Random(5);
        for (int g = 0; g < GROUPS; g++) {
            if (rnd.nextInt(5) == 0) continue; // a fifth stay unwritten, so the written ones are not contiguous
            long start = layout.geometry().groupStart(g) + layout.geometry().systemBlocks(g) + rnd.nextInt(1000);
            meta.bitmapChanged(g, start, 1 + rnd.nextInt(3000), true);
            written.add(g);
        }
        for (long b : meta.takeCommit()) disk.put(b, meta.image(b));
    }

    private byte[] read(long block) {
        return disk.getOrDefault(block, new byte[layout.blockSize()]);
    }

    @Test
    void whatIsReadAheadIsWhatEachGroupHolds() {
        Set<String> threads = ConcurrentHashMap.newKeySet();
        Metadata loaded = Metadata.load(meta.superblock, b -> {
            threads.add(Thread.currentThread().getName());
            return read(b);
        }, null);
        for (int g = 0; g < GROUPS; g++) {
            assertEquals(meta.free(g), loaded.free(g), "free blocks of group " + g);
            assertArrayEquals(meta.bitmapWords(g), loaded.bitmapWords(g), "bitmap of group " + g);
        }
        assertTrue(written.size() > 400, "most groups written: " + written.size());
        assertTrue(threads.stream().anyMatch(t -> t.contains("readahead")), "read ahead in other threads: " + threads);
    }

    @Test
    void aBadBitmapInTheMiddleIsReportedAsItsOwnGroups() {
        int bad = written.get(written.size() / 2);
        long block = layout.bitmapBlock(bad);
        byte[] flipped = disk.get(block).clone();
        flipped[100] ^= 0x10;
        disk.put(block, flipped);
        VolumeException.Corrupt e = assertThrows(VolumeException.Corrupt.class,
                () -> Metadata.load(meta.superblock, this::read, null));
        assertTrue(e.getMessage().contains("bitmap of group " + bad + " fails its checksum"), e.getMessage());

        List<String> found = new ArrayList<>();
        Metadata.load(meta.superblock, this::read, (s, b, what) -> found.add(s + " " + b + " " + what));
        assertEquals(1, found.size(), found.toString());
        assertTrue(found.get(0).startsWith(VolumeException.Structure.BITMAP + " " + block + " "), found.toString());
    }

    @Test
    void aReadThatFailsFailsTheLoadWithItsOwnError() {
        long block = layout.bitmapBlock(written.get(written.size() - 3));
        UncheckedIOException gone = new UncheckedIOException(new IOException("Input/output error"));
        UncheckedIOException e = assertThrows(UncheckedIOException.class, () -> Metadata.load(meta.superblock, b -> {
            if (b == block) throw gone;
            return read(b);
        }, null));
        assertSame(gone, e);
    }
}
