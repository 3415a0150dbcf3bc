package org.blockyard.runtime.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.Test;

import org.blockyard.runtime.alloc.FileState.Change;

/**
 * The file table of files whose extent maps span many table blocks: a commit logs the blocks whose content
 * changed, not the whole chain, and what the logged blocks say, read back as a mount reads them, is the
 * live map after every commit.
 */
class FileTableLayoutTest {
    private final Layout layout = Volumes.layout(4);
    private final int per = layout.extentsPerTableBlock();
    private final Metadata meta = Metadata.fresh(Superblock.fresh(layout));
    /** The blocks as a volume would hold them: every block mkfs wrote, then every commit's images. */
    private final Map<Long, byte[]> disk = new HashMap<>();

    FileTableLayoutTest() {
        for (long b : meta.allBlocks()) disk.put(b, meta.image(b));
    }

    private List<Long> commit() {
        List<Long> blocks = meta.takeCommit();
        for (long b : blocks) disk.put(b, meta.image(b));
        return blocks;
    }

    private List<Long> tableBlocks(List<Long> blocks) {
        return blocks.stream().filter(b -> b >= layout.fileTableStart() && b < layout.journalStart()).toList();
    }

    private void assertDiskHoldsTheLiveMaps() {
        Metadata loaded = Metadata.load(meta.superblock, b -> disk.getOrDefault(b, new byte[layout.blockSize()]), null);
        for (Metadata.Entry e : meta.entries()) {
            Metadata.Entry back = loaded.entry(e.id);
            assertNotNull(back, "entry " + e.name + " read back");
            List<ExtentMap.Run> want = e.map.runs(), got = back.map.runs();
            int i = 0;
            while (i < Math.min(want.size(), got.size()) && want.get(i).equals(got.get(i))) i++;
            if (i < want.size() || i < got.size())
                fail(e.name + " read back differs at run " + i + " of " + want.size() + " (read back " + got.size() + "): "
                        + (i < want.size() ? want.get(i) : "none") + " live, " + (i < got.size() ? got.get(i) : "none") + " read");
        }
        assertEquals(meta.entries().size(), loaded.entries().size());
    }

    /** One new run after the last: {@code gap} keeps it from continuing the run before. */
    private void append(long id, long logical, long physical) {
        meta.fileChanged(id, Change.MAPPED, logical, physical, 1);
    }

    @Test
    void anAppendToAFileOfManyTableBlocksLogsOnlyTheLastOne() {
        meta.created(1, Metadata.KIND_FILE, "big");
        int runs = 6 * per + per / 2; // seven table blocks, the last half full
        for (int i = 0; i < runs; i++) append(1, i, 10_000 + 2L * i);
        assertEquals(7, tableBlocks(commit()).size(), "a new entry's chain is written whole");
        int[] slots = meta.entry(1).slots().stream().mapToInt(Integer::intValue).toArray();

        append(1, runs, 10_000 + 2L * runs); // a new run in the last block
        assertEquals(List.of(layout.fileTableStart() + slots[6]), tableBlocks(commit()));
        meta.fileChanged(1, Change.MAPPED, runs + 1, 10_000 + 2L * runs + 1, 5); // the last run grows
        assertEquals(List.of(layout.fileTableStart() + slots[6]), tableBlocks(commit()));
        meta.fileChanged(1, Change.WRITTEN, 3L * per + 1, 0, 1); // a run in the fourth block is written
        assertEquals(4, tableBlocks(commit()).size(), "the fourth block and those after it");
        assertDiskHoldsTheLiveMaps();

        for (int i = runs + 6; meta.entry(1).map.size() <= 7 * per; i += 2) append(1, i, 20_000 + 2L * i);
        assertEquals(8, tableBlocks(commit()).size(), "a longer chain changes every block's header");
        meta.fileChanged(1, Change.TRUNCATED, 2L * per, 0, 0);
        assertEquals(8, tableBlocks(commit()).size(), "two blocks kept, six given back and zeroed");
        assertEquals(2, meta.entry(1).slots().size());
        assertDiskHoldsTheLiveMaps();
    }

    /**
     * Random changes anywhere in three interleaved files (appends, holes filled, runs written, discarded,
     * truncated), a commit after every few: the disk agrees with the live maps every time, and the chain
     * slots given back are reused.
     */
    @Test
    void randomChangesReadBackAsTheLiveMaps() {
        Random rnd = new Random(11);
        long[] end = new long[4];
        for (long id = 1; id <= 3; id++) meta.created(id, Metadata.KIND_FILE, "f" + id);
        long physical = 10_000;
        for (int round = 0; round < 600; round++) {
            for (int k = 0; k < 1 + rnd.nextInt(5); k++) {
                long id = 1 + rnd.nextInt(3);
                int op = rnd.nextInt(100);
                if (op < 55 || end[(int) id] < 10) { // append one to four runs, each a block apart
                    for (int r = 0; r < 1 + rnd.nextInt(4); r++) {
                        long len = 1 + rnd.nextInt(3);
                        meta.fileChanged(id, Change.MAPPED, end[(int) id] + rnd.nextInt(2), physical, len);
                        end[(int) id] = meta.entry(id).map.runs().stream().mapToLong(x -> x.logical() + x.blocks()).max().orElse(0);
                        physical += len + rnd.nextInt(2);
                    }
                } else if (op < 70) { // map over whatever is in a range (a hole filled, runs cut)
                    long at = rnd.nextLong(end[(int) id]), len = 1 + rnd.nextInt(6);
                    meta.fileChanged(id, Change.MAPPED, at, physical, len);
                    physical += len + 1;
                } else if (op < 85) {
                    long at = rnd.nextLong(end[(int) id]);
                    meta.fileChanged(id, Change.WRITTEN, at, 0, 1 + rnd.nextInt(20));
                } else if (op < 99) {
                    long at = rnd.nextLong(end[(int) id]);
                    meta.fileChanged(id, Change.DISCARDED, at, 0, 1 + rnd.nextInt(4));
                } else { // cut the last quarter or so
                    long at = end[(int) id] - rnd.nextLong(end[(int) id] / 4 + 1);
                    meta.fileChanged(id, Change.TRUNCATED, at, 0, 0);
                    end[(int) id] = at;
                }
            }
            commit();
            if (round % 25 == 24) assertDiskHoldsTheLiveMaps();
        }
        assertDiskHoldsTheLiveMaps();
        int slots = meta.entries().stream().mapToInt(e -> e.slots().size()).sum();
        int most = meta.entries().stream().flatMap(e -> e.slots().stream()).mapToInt(Integer::intValue).max().orElse(0);
        assertEquals(true, slots > 3, "the maps span several blocks: " + slots);
        assertEquals(true, most < slots + 16, "slots given back are used again: highest " + most + " for " + slots);
    }
}
