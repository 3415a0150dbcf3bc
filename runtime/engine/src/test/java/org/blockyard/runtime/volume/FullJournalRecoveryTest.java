package org.blockyard.runtime.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Random;

import org.blockyard.runtime.alloc.FileState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Recovery of a full journal: a 16384-block (64 MiB) journal filled with committed transactions of 256 logged
 * blocks each, never checkpointed, then the process "dies". Reopening replays all of it; the time is printed
 * (the README's figure comes from this test). No timing threshold: a test asserts behaviour.
 */
class FullJournalRecoveryTest {
    @TempDir
    Path dir;

    @Test
    void aFullJournalIsReplayedWhole() throws Exception {
        Path image = dir.resolve("full.img");
        int journalBlocks = 16384;
        Layout layout = Layout.make(4096, 8L * 32768, 32768, 2048, journalBlocks, 0, 0);
        Superblock sb = Volume.mkfs(image, layout);
        long expectedBlocks, logUsed;
        int transactions = 0;
        Metadata meta;
        try (FileChannel ch = FileChannel.open(image, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            meta = Volume.inspect(image);
            Journal j = new Journal(ch, meta, new Journal.Settings(0, 256, 1.0), 0, 1);
            Random rnd = new Random(1);
            long next = layout.geometry().systemBlocks(0);
            for (int f = 0; f < 1000; f++) meta.created(f + 1, Metadata.KIND_FILE, "file-" + f);
            // Each transaction: 240 files get an extent each, and the bitmaps of the groups those land in.
            while (j.logUsed() + 2L * j.maxTransactionBlocks() + 4 < j.logCapacity()) {
                for (int k = 0; k < 240; k++) {
                    int blocks = 1 + rnd.nextInt(4);
                    var geo = layout.geometry();
                    if (geo.isSystemZone(next) || geo.groupOf(next + blocks - 1) != geo.groupOf(next)) {
                        int after = geo.groupOf(next + blocks - 1);
                        next = geo.groupStart(after) + geo.systemBlocks(after);
                    }
                    int g = geo.groupOf(next);
                    meta.bitmapChanged(g, next, blocks, true);
                    long id = 1 + rnd.nextInt(1000);
                    meta.fileChanged(id, FileState.Change.MAPPED, meta.entry(id).map.mappedBlocks(), next, blocks);
                    next += blocks;
                }
                j.commitNow();
                transactions++;
            }
            expectedBlocks = meta.freeBlocks();
            logUsed = j.logUsed();
            // Died here: nothing checkpointed, the superblock still says "clean" from mkfs but the log is full.
        }
        Volume v = Volumes.open(image);
        try {
            Volume.Recovery r = v.recovery();
            assertFalse(r.wasClean());
            assertEquals(transactions, r.transactionsReplayed());
            assertEquals(expectedBlocks, meta.freeBlocks());
            assertEquals(expectedBlocks, Volumes.join(v.allocator().freeBlocks()));
            System.out.printf("full journal: %d transactions in %d of %d log blocks, %d distinct blocks replayed,"
                            + " recovery (open) %.1f ms%n", transactions, logUsed, journalBlocks - 1,
                    r.blocksReplayed(), r.nanos() / 1e6);
        } finally {
            v.close();
        }
        assertTrue(Fsck.check(image, false).clean(), () -> Fsck.check(image, false).report());
        assertEquals(sb.uuid(), Volume.inspect(image).superblock.uuid());
    }
}
