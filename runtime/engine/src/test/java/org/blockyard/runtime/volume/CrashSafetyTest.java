package org.blockyard.runtime.volume;

import static org.blockyard.runtime.volume.Volumes.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Extent;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** kill -9 simulated in-process: a volume abandoned without close, and a journal whose tail is torn. */
class CrashSafetyTest {
    @TempDir
    Path dir;

    /** Checkpoints only when the log is full, so the tests see every transaction in it. */
    private static final Journal.Settings KEEP_LOG = new Journal.Settings(0, 64, 1.0);

    @Test
    void acknowledgedAllocationsSurviveAVolumeAbandonedMidRun() throws Exception {
        abandonMidRunThenCheck(Volumes.make(dir, 4), v -> true);
    }

    @Test
    void acknowledgedChangesSurviveACrashWhileCheckpointsRideOnCommits() throws Exception {
        Path image = dir.resolve("small-journal.img");
        Volume.mkfs(image, Layout.make(4096, 4096L * 4, 4096, 64, 64, 0, 0)); // 63 log blocks: checkpoints all along
        Journal.Stats s = abandonMidRunThenCheck(image, v -> v.journalStats().checkpoints() >= 5);
        assertTrue(s.checkpoints() >= 5, "checkpoints under load: " + s);
    }

    /**
     * Files whose maps span several file-table blocks (every append leaves a hole, so each is a run of its own):
     * commits log only the blocks that changed, checkpoints write them home along the way, and after the crash
     * every acknowledged run is where it was.
     */
    @Test
    void acknowledgedRunsOfFilesSpanningManyTableBlocksSurviveACrash() throws Exception {
        Path image = dir.resolve("long-maps.img");
        Volume.mkfs(image, Layout.make(4096, 4096L * 8, 4096, 64, 128, 0, 0)); // checkpoints all along
        Journal.Stats s = abandonMidRunThenCheck(image, Volumes.FAST, v -> v.journalStats().checkpoints() >= 3,
                2_000, 1);
        assertTrue(s.checkpoints() >= 3, "checkpoints under load: " + s);
        try (Volume v = Volumes.open(image)) {
            int longest = 0;
            for (String f : v.allocator().files()) longest = Math.max(longest, join(v.allocator().fileExtents(f)).size());
            assertTrue(longest > 2 * Volumes.layout(4).extentsPerTableBlock(), "maps of three table blocks or more: "
                    + longest + " extents");
        }
    }

    @Test
    void acknowledgedChangesSurviveACrashInTheMiddleOfASlicedCheckpoint() throws Exception {
        Path image = dir.resolve("sliced.img");
        // 32 groups, so a checkpoint has dozens of bitmaps and descriptors to write home; one home write per
        // commit: each checkpoint rides many commits, and the crash most likely falls between two of its slices.
        Volume.mkfs(image, Layout.make(4096, 1024L * 32, 1024, 64, 256, 0, 0));
        Journal.Settings oneAtATime = new Journal.Settings(0, 64, 0.5, 1);
        Journal.Stats s = abandonMidRunThenCheck(image, oneAtATime, v -> v.journalStats().checkpoints() >= 3);
        assertTrue(s.homeSteps() > s.checkpoints() + 1, "checkpoints written in slices: " + s);
    }

    @Test
    void aCheckpointRidesCommitsInSlicesOfTheConfiguredSize() throws Exception {
        // Riding commits, a step carries two home writes (more only when the log's room runs short); a step that
        // goes alone (no record within the 1 ms commit interval) carries the rest. So a checkpoint's writes are spread over several steps.
        Journal.Stats sliced = eightWritersOnSmallLog(dir.resolve("sliced2.img"), 2);
        assertTrue(sliced.checkpoints() >= 2, "checkpoints: " + sliced);
        assertTrue(sliced.homeSteps() >= 2 * sliced.checkpoints(), "home writes spread over commits: " + sliced);
        // Unsliced, every checkpoint writes all of its images home in one step (none when it has none).
        Journal.Stats whole = eightWritersOnSmallLog(dir.resolve("whole.img"), Integer.MAX_VALUE);
        assertTrue(whole.checkpoints() >= 2, "checkpoints: " + whole);
        assertTrue(whole.homeSteps() <= whole.checkpoints(), "at most one home step per checkpoint: " + whole);
    }

    /** Eight threads append 64 one-block runs each to their own file, with a 511-block log; the journal's counts. */
    private Journal.Stats eightWritersOnSmallLog(Path image, int sliceBlocks) throws Exception {
        Volume.mkfs(image, Layout.make(4096, 1024L * 32, 1024, 64, 512, 0, 0));
        Journal.Stats s;
        try (Volume v = Volume.open(image, Volumes.CONFIG, new Journal.Settings(TimeUnit.MILLISECONDS.toNanos(1), 64, 0.25, sliceBlocks))) {
            VolumeAllocator a = v.allocator();
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                String file = "f" + t;
                Thread th = new Thread(() -> {
                    join(a.open(file));
                    for (long b = 0; b < 64; b++) join(a.getBlocks(file, b, 1, true));
                });
                th.start();
                threads.add(th);
            }
            for (Thread th : threads) th.join(60_000);
            s = v.journalStats();
        }
        Fsck.Result r = Fsck.check(image, false);
        assertTrue(r.clean(), r::report);
        return s;
    }

    /**
     * Four threads append, take extents and never stop; once 400 calls are acknowledged and {@code enough}
     * holds, the volume is abandoned (kill -9). Every acknowledged run and extent is found after recovery, and
     * fsck is clean. Answers the journal's counts at the crash.
     */
    private Journal.Stats abandonMidRunThenCheck(Path image, Predicate<Volume> enough) throws Exception {
        return abandonMidRunThenCheck(image, Volumes.FAST, enough);
    }

    private Journal.Stats abandonMidRunThenCheck(Path image, Journal.Settings settings, Predicate<Volume> enough)
            throws Exception {
        return abandonMidRunThenCheck(image, settings, enough, 400, 0);
    }

    /** As above, with at least {@code minAcks} acknowledgements, each append leaving {@code hole} blocks unmapped. */
    private Journal.Stats abandonMidRunThenCheck(Path image, Journal.Settings settings, Predicate<Volume> enough,
                                                 int minAcks, int hole) throws Exception {
        Map<String, List<BlockRun>> acked = new ConcurrentHashMap<>();
        List<Extent> ackedExtents = java.util.Collections.synchronizedList(new ArrayList<>());
        AtomicInteger acks = new AtomicInteger();
        Volume v = Volume.open(image, Volumes.CONFIG, settings);
        VolumeAllocator a = v.allocator();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            String file = "w" + t;
            Thread th = new Thread(() -> {
                try {
                    join(a.open(file));
                    long next = 0;
                    for (int i = 0; ; i++) {
                        if (i % 5 == 4) {
                            ackedExtents.addAll(join(a.allocate(3, 1, 0, -1)));
                        } else {
                            BlockRun r = join(a.getBlocks(file, next, 1 + i % 9, true));
                            acked.computeIfAbsent(file, k -> new ArrayList<>()).add(r);
                            next += r.blocks() + hole;
                        }
                        acks.incrementAndGet();
                    }
                } catch (RuntimeException stopped) {
                    // the volume went away under us, as in a crash
                }
            });
            th.start();
            threads.add(th);
        }
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(60);
        while ((acks.get() < minAcks || !enough.test(v)) && System.nanoTime() < deadline) Thread.sleep(5);
        Journal.Stats atCrash = v.journalStats();
        v.abandon(); // calls in flight now are never acknowledged
        for (Thread th : threads) th.join(30_000);

        try (Volume again = Volumes.open(image)) {
            assertFalse(again.recovery().wasClean());
            for (Map.Entry<String, List<BlockRun>> e : acked.entrySet()) {
                join(again.allocator().open(e.getKey()));
                for (BlockRun r : e.getValue()) {
                    BlockRun now = join(again.allocator().getBlocks(e.getKey(), r.logicalStart(), r.blocks(), false));
                    assertEquals(r.physicalStart(), now.physicalStart(), e.getKey() + " " + r + " " + again.recovery());
                    assertEquals(r.blocks(), now.blocks(), e.getKey() + " " + r);
                }
            }
            // Acknowledged extents are still owned: their owner may release them.
            join(again.allocator().release(new ArrayList<>(ackedExtents)));
        }
        Fsck.Result r = Fsck.check(image, false);
        assertTrue(r.clean(), r::report);
        return atCrash;
    }

    @Test
    void aBatchIsAcknowledgedOnlyOnceEveryRunInItIsDurable() {
        Path image = Volumes.make(dir, 4);
        Volume v = Volumes.open(image);
        join(v.allocator().open("b"));
        List<org.blockyard.api.alloc.MapRequest> requests = new ArrayList<>();
        for (long l = 0; l < 64; l += 2) requests.add(org.blockyard.api.alloc.MapRequest.allocate(l, 2));
        long recordsBefore = v.journalStats().records();
        List<BlockRun> runs = join(v.allocator().getBlocks("b", requests));
        assertEquals(32, runs.size());
        // Runs that continue each other reach the journal as one record, not one per call.
        long records = v.journalStats().records() - recordsBefore;
        assertTrue(records < 16, "records for a batch of 32 appends: " + records);
        v.abandon(); // right after the acknowledgement: nothing but the journal holds the runs

        try (Volume again = Volumes.open(image)) {
            join(again.allocator().open("b"));
            for (BlockRun r : runs) {
                BlockRun now = join(again.allocator().getBlocks("b", r.logicalStart(), r.blocks(), false));
                assertEquals(r.physicalStart(), now.physicalStart(), "run " + r);
            }
        }
        Fsck.Result r = Fsck.check(image, false);
        assertTrue(r.clean(), r::report);
    }

    /**
     * Small files written whole, one call each, then a crash right after the last acknowledgement: every file is
     * found with its runs, and nothing a file held besides them (window, preallocation) is left used.
     */
    @Test
    void filesWrittenWholeAreDurableWhenAcknowledged() {
        Path image = Volumes.make(dir, 4);
        Volume v = Volumes.open(image);
        List<List<BlockRun>> written = new ArrayList<>();
        long blocks = 0;
        for (int f = 0; f < 40; f++) {
            List<org.blockyard.api.alloc.MapRequest> calls = new ArrayList<>();
            for (long l = 0; l <= f % 5; l++) calls.add(org.blockyard.api.alloc.MapRequest.allocate(l, 1));
            blocks += calls.size();
            written.add(join(v.allocator().writeFile("small/" + f, calls)));
        }
        long free = join(v.allocator().freeBlocks());
        v.abandon(); // right after the acknowledgement: nothing but the journal holds the files

        try (Volume again = Volumes.open(image)) {
            for (int f = 0; f < 40; f++) {
                List<Extent> map = join(again.allocator().fileExtents("small/" + f));
                assertEquals(f % 5 + 1, map.stream().mapToLong(Extent::blocks).sum(), "small/" + f);
                assertEquals(written.get(f).get(0).physicalStart(), map.get(0).start(), "small/" + f);
            }
            assertEquals(free, (long) join(again.allocator().freeBlocks()), "the files' " + blocks + " blocks and no more");
        }
        Fsck.Result r = Fsck.check(image, false);
        assertTrue(r.clean(), r::report);
    }

    private record Setup(Path image, BlockRun first, BlockRun second, Journal.Replay log) {}

    /** Two acknowledged appends to one file, then a crash: both are in the log, the second last. */
    private Setup twoAppendsThenCrash() {
        Path image = Volumes.make(dir, 4);
        Volume v = Volume.open(image, Volumes.CONFIG, KEEP_LOG);
        join(v.allocator().open("a"));
        BlockRun first = join(v.allocator().getBlocks("a", 0, 10, true));
        // A transaction of its own for the second append: the journal is idle when it starts.
        BlockRun second = join(v.allocator().getBlocks("a", 10, 10, true));
        v.abandon();
        Metadata.BlockReader disk = block -> Tamper.read(image, block * 4096, 4096);
        Superblock sb = Superblock.decode(Tamper.read(image, 0, Superblock.BYTES), 0, "test");
        Journal.Replay log = Journal.scan(sb.layout(), sb.uuidBytes(), disk);
        assertTrue(log.transactions() >= 2, "transactions in the log: " + log.transactions());
        return new Setup(image, first, second, log);
    }

    @Test
    void committedTransactionsAreReplayedAfterACrash() {
        Setup s = twoAppendsThenCrash();
        try (Volume v = Volumes.open(s.image())) {
            assertEquals(s.log().transactions(), v.recovery().transactionsReplayed());
            join(v.allocator().open("a"));
            assertEquals(s.second().physicalStart(), join(v.allocator().getBlocks("a", 10, 10, false)).physicalStart());
        }
        assertTrue(Fsck.check(s.image(), false).clean());
    }

    @Test
    void aTornLastTransactionIsDroppedAndTheOnesBeforeItAreReplayed() {
        Setup s = twoAppendsThenCrash();
        Layout layout = Superblock.decode(Tamper.read(s.image(), 0, Superblock.BYTES), 0, "t").layout();
        // Tear the last transaction: one byte of its first logged block never reached the disk as written.
        Tamper.flip(s.image(), Journal.layoutBlock(layout, s.log().lastStart() + 1) * 4096 + 100);
        assertLastDropped(s);
    }

    @Test
    void aJournalTruncatedBeforeTheLastCommitBlockDropsThatTransaction() {
        Setup s = twoAppendsThenCrash();
        Layout layout = Superblock.decode(Tamper.read(s.image(), 0, Superblock.BYTES), 0, "t").layout();
        // The commit block of the last transaction was never written.
        Tamper.write(s.image(), Journal.layoutBlock(layout, s.log().position() - 1) * 4096, new byte[4096]);
        assertLastDropped(s);
    }

    private void assertLastDropped(Setup s) {
        try (Volume v = Volumes.open(s.image())) {
            assertEquals(s.log().transactions() - 1, v.recovery().transactionsReplayed());
            assertTrue(v.recovery().logEnd().contains("transaction " + (s.log().nextSeq() - 1)), v.recovery().logEnd());
            join(v.allocator().open("a"));
            // The first append's transactions were whole: it is there.
            BlockRun first = join(v.allocator().getBlocks("a", 0, 10, false));
            assertEquals(s.first().physicalStart(), first.physicalStart());
            assertEquals(10, first.blocks());
        }
        Fsck.Result r = Fsck.check(s.image(), false);
        assertTrue(r.clean(), r::report);
        assertNotNull(Volume.inspect(s.image()).entry("a"));
        assertNull(Volume.inspect(s.image()).entry("b"));
    }
}
