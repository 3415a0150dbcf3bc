package org.blockyard.testkit;

import static org.blockyard.testkit.AllocatorChecks.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.BlockAllocator;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.api.alloc.MapRequest;
import org.blockyard.runtime.alloc.FileState;

/**
 * The file path's checks and guarantees, through {@link BlockAllocator} alone: refusals that change nothing,
 * batches and pipelined calls laid out as single calls, gaps, deletes, whole-file writes, and preallocations
 * given up before {@code NoSpace}. An implementation's test extends this class and starts it over the
 * geometry it is given, with the reservation policy (the layouts checked are its windows'); the actors and
 * the global-lock and group-locks peers run it in this module's tests.
 */
// The lock peers answer on the caller's thread, where no stage's deadline can stop a call that never
// returns: each test has one of its own.
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
public abstract class FilePathContract {

    /** A fresh allocator over {@code g}, with the reservation policy; closed by the test if it is {@link AutoCloseable}. */
    protected abstract BlockAllocator start(Geometry g);

    private Files files(Geometry g) {
        BlockAllocator a = start(g);
        return new Through(a, a instanceof AutoCloseable c ? c : () -> {});
    }

    /** The file calls of one implementation, answering or throwing the AllocationException. */
    private interface Files extends AutoCloseable {
        void open(String file);

        BlockRun getBlocks(String file, long logical, int max, boolean create);

        long truncate(String file, long from);

        List<Extent> extents(String file);

        /** Frees blocks behind the files' backs, as the extent interface's release does. */
        void release(List<Extent> extents);

        long freeBlocks();

        List<BlockRun> batch(String file, List<MapRequest> requests);

        /** Open, the batch and close in one call ({@link BlockAllocator#writeFile}). */
        List<BlockRun> writeFile(String file, List<MapRequest> requests);

        /** The requests sent one by one, each before the answer to the one before it came. */
        List<BlockRun> pipelined(String file, List<MapRequest> requests);

        /** Extents of {@code blocks} in all, through the extent interface. */
        List<Extent> allocate(long blocks);

        void closeFile(String file);

        void delete(String file);

        @Override
        void close();
    }

    /** An implementation, driven through the one {@link BlockAllocator} interface. */
    private static final class Through implements Files {
        final BlockAllocator a;
        final AutoCloseable closer;

        Through(BlockAllocator a, AutoCloseable closer) {
            this.a = a;
            this.closer = closer;
        }

        private static <T> T call(java.util.concurrent.CompletionStage<T> s) {
            return await(s);
        }

        public void open(String f) { call(a.open(f)); }
        public BlockRun getBlocks(String f, long l, int m, boolean c) { return call(a.getBlocks(f, l, m, c)); }
        public long truncate(String f, long from) { return call(a.truncate(f, from)); }
        public List<Extent> extents(String f) { return call(a.fileExtents(f)); }
        public void release(List<Extent> e) { call(a.release(e)); }
        public long freeBlocks() { return call(a.freeBlocks()); }
        public List<BlockRun> batch(String f, List<MapRequest> r) { return call(a.getBlocks(f, r)); }
        public List<BlockRun> writeFile(String f, List<MapRequest> r) { return call(a.writeFile(f, r)); }
        public List<Extent> allocate(long blocks) { return call(a.allocate(blocks, 1, blocks, 0)); }
        public void closeFile(String f) { call(a.close(f)); }
        public void delete(String f) { call(a.delete(f)); }

        public List<BlockRun> pipelined(String f, List<MapRequest> requests) {
            List<java.util.concurrent.CompletionStage<BlockRun>> sent = new ArrayList<>();
            for (MapRequest r : requests) sent.add(a.getBlocks(f, r.logicalBlock(), r.maxBlocks(), r.create()));
            List<BlockRun> runs = new ArrayList<>();
            for (var s : sent) runs.add(call(s));
            return runs;
        }

        public void close() {
            try {
                closer.close();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }

    private static <E extends AllocationException> E refused(Class<E> type, Runnable call) {
        RuntimeException e = assertThrows(RuntimeException.class, call::run);
        Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
        return assertInstanceOf(type, cause);
    }

    /**
     * A closed file is deleted: every block it mapped is free again and its name opens a new, empty file. An
     * open file, a name that is no file and a file deleted already are refused and change nothing.
     */
    @Test
    public void aClosedFileIsDeletedItsBlocksFreeAndItsNameNew() {
        try (Files f = files(Geometry.of(4096, 8 * 32768L, 32768))) {
            long before = f.freeBlocks();
            f.open("/gone");
            f.open("/kept");
            for (long l = 0; l < 4000; l += 100) {
                f.getBlocks("/gone", l, 100, true);
                f.getBlocks("/kept", l, 100, true);
            }
            List<Extent> kept = f.extents("/kept");
            refused(AllocationException.InvalidRequest.class, () -> f.delete("/gone")); // open: nothing changes
            assertEquals(4000, f.extents("/gone").stream().mapToLong(Extent::blocks).sum());
            f.closeFile("/gone");
            f.closeFile("/kept");
            long withBoth = f.freeBlocks();
            f.delete("/gone");
            assertEquals(withBoth + 4000, f.freeBlocks(), "every block of the deleted file is free");
            assertEquals(kept, f.extents("/kept"), "the other file is untouched");
            refused(AllocationException.UnknownFile.class, () -> f.extents("/gone"));
            refused(AllocationException.UnknownFile.class, () -> f.delete("/gone"));
            refused(AllocationException.UnknownFile.class, () -> f.delete("/never"));

            f.open("/gone"); // a new file under the old name
            assertEquals(List.of(), f.extents("/gone"));
            assertEquals(0, f.getBlocks("/gone", 0, 8, false).blocks(), "nothing of the old file is mapped");
            f.getBlocks("/gone", 0, 8, true);
            f.closeFile("/gone");
            f.delete("/gone");
            f.delete("/kept");
            assertEquals(before, f.freeBlocks());
        }
    }

    @Test
    public void badLogicalBlocksAndCountsAreRefusedAndChangeNothing() {
        try (Files f = files(Geometry.of(4096, 2 * 4096, 4096))) {
            f.open("/f");
            long free = f.freeBlocks();
            refused(AllocationException.OutOfRange.class, () -> f.getBlocks("/f", Long.MAX_VALUE - 1, 8, true));
            refused(AllocationException.OutOfRange.class, () -> f.getBlocks("/f", FileState.MAX_LOGICAL_BLOCKS - 4, 8, true));
            refused(AllocationException.InvalidRequest.class, () -> f.getBlocks("/f", -1, 1, true));
            refused(AllocationException.InvalidRequest.class, () -> f.getBlocks("/f", 0, 0, true));
            refused(AllocationException.InvalidRequest.class, () -> f.truncate("/f", -1));
            assertEquals(List.of(), f.extents("/f"));
            assertEquals(free, f.freeBlocks());

            BlockRun last = f.getBlocks("/f", FileState.MAX_LOGICAL_BLOCKS - 8, 8, true);
            assertEquals(8, last.blocks(), "the last blocks of the largest file can be allocated");
            BlockRun first = f.getBlocks("/f", 0, 1, true);
            assertTrue(first.physicalStart() != last.physicalStart(), "logical blocks never wrap onto each other");
        }
    }

    @Test
    public void aBatchMapsExactlyAsTheSameCallsOneAfterTheOther() {
        Geometry g = Geometry.of(4096, 4 * 4096, 4096);
        List<MapRequest> appends = new ArrayList<>();
        for (long l = 0; l < 300; l++) appends.add(MapRequest.allocate(l, 1));
        appends.add(new MapRequest(5000, 3, false)); // a hole, looked up
        appends.add(new MapRequest(0, 300, false)); // what the batch mapped, looked up
        try (Files batched = files(g); Files single = files(g)) {
            batched.open("/f");
            single.open("/f");
            List<BlockRun> runs = batched.batch("/f", appends);
            List<BlockRun> one = new ArrayList<>();
            for (MapRequest r : appends) one.add(single.getBlocks("/f", r.logicalBlock(), r.maxBlocks(), r.create()));
            assertEquals(one, runs, "one run per request, in order, the same as single calls");
            assertEquals(302, runs.size());
            assertTrue(runs.get(300).isHole());
            assertEquals(single.extents("/f"), batched.extents("/f"));
            assertEquals(List.of(), batched.batch("/f", List.of()));
        }
    }

    /**
     * A caller with several requests in flight (or in one batch) goes on past a request answered short,
     * because its window or group ended, before it sees the short answer and asks for the rest. The rest is
     * then placed before the request that went on, so the file's layout is that of a caller that asks again
     * at once: one run per group, not two. Two writers, as in tiobench, so that each new window is placed
     * apart from the other file's.
     */
    @Test
    public void requestsThatGoOnPastAShortAnswerGetTheLayoutOfACallerThatAsksAgainAtOnce() {
        Geometry g = Geometry.of(4096, 32 * 8192, 8192);
        int chunk = 256;
        long size = 12 * 8192; // twelve groups' worth a file: group boundaries cut requests short
        List<String> files = List.of("/a", "/b");
        List<MapRequest> appends = new ArrayList<>();
        for (long l = 0; l < size; l += chunk) appends.add(MapRequest.allocate(l, chunk));
        try (Files sync = files(g); Files batched = files(g); Files piped = files(g);
             Files deep = files(g)) {
            int shortAnswers = 0;
            for (String f : files) {
                sync.open(f);
                batched.open(f);
                piped.open(f);
                deep.open(f);
            }
            // Ten at a time: a group's 8,190 data blocks end inside a request, and that request is never the
            // last of its ten, so the one after it goes out before the short answer is seen.
            for (int i = 0; i < appends.size(); i += 10) {
                List<MapRequest> some = appends.subList(i, Math.min(appends.size(), i + 10));
                for (String f : files) {
                    for (MapRequest r : some) {
                        BlockRun first = sync.getBlocks(f, r.logicalBlock(), r.maxBlocks(), true);
                        if (first.blocks() < r.maxBlocks()) shortAnswers++;
                        askRest(sync, f, List.of(r), List.of(first));
                    }
                    askRest(batched, f, some, batched.batch(f, some));
                    askRest(piped, f, some, piped.pipelined(f, some));
                }
            }
            // Every request of a file in flight at once: each group boundary leaves a gap, all asked for at the end.
            for (String f : files) askRest(deep, f, appends, deep.pipelined(f, appends));
            assertTrue(shortAnswers >= 20, "group boundaries cut requests short: " + shortAnswers);
            for (String f : files) {
                List<BlockRun> layout = mapping(sync, f, size);
                assertTrue(layout.size() <= 13, "one run per group (the bitmap blocks part them): " + layout);
                assertEquals(layout, mapping(batched, f, size), f + " in batches of 10");
                assertEquals(layout, mapping(piped, f, size), f + " with 10 requests in flight");
                assertEquals(layout, mapping(deep, f, size), f + " with all its requests in flight");
            }
        }
    }

    /** The file's logical-to-physical runs over {@code [0, size)}, as lookups answer them, joined where they continue. */
    private static List<BlockRun> mapping(Files f, String file, long size) {
        List<BlockRun> runs = new ArrayList<>();
        for (long l = 0; l < size; ) {
            BlockRun r = f.getBlocks(file, l, (int) Math.min(Integer.MAX_VALUE, size - l), false);
            assertTrue(r.blocks() > 0, "mapped at " + l);
            l += r.blocks();
            BlockRun last = runs.isEmpty() ? null : runs.get(runs.size() - 1);
            if (last != null && last.physicalStart() + last.blocks() == r.physicalStart()) {
                runs.set(runs.size() - 1, new BlockRun(last.logicalStart(), last.physicalStart(), last.blocks() + r.blocks(), false, false));
            } else {
                runs.add(new BlockRun(r.logicalStart(), r.physicalStart(), r.blocks(), false, false));
            }
        }
        return runs;
    }

    /** What a caller does with short answers once it sees them: asks for the rest, one request at a time. */
    private static void askRest(Files f, String file, List<MapRequest> asked, List<BlockRun> runs) {
        for (int i = 0; i < asked.size(); i++) {
            long l = runs.get(i).logicalStart() + runs.get(i).blocks();
            long end = asked.get(i).logicalBlock() + asked.get(i).maxBlocks();
            while (l < end) {
                BlockRun r = f.getBlocks(file, l, (int) (end - l), true);
                assertTrue(r.blocks() > 0);
                l += r.blocks();
            }
        }
    }

    /**
     * The blocks kept for the rest of a short answer are the file's only if the caller asks for them: a caller
     * that leaves the hole (and never learns of those blocks) finds a hole there, and its close gives them back.
     */
    @Test
    public void aGapTheCallerNeverAsksForStaysAHoleAndItsBlocksGoBackAtClose() {
        try (Files f = files(Geometry.of(4096, 8 * 8192, 8192))) {
            long free = f.freeBlocks();
            f.open("/f");
            List<MapRequest> appends = new ArrayList<>();
            for (long l = 0; l < 3 * 8192; l += 256) appends.add(MapRequest.allocate(l, 256));
            long mapped = 0;
            List<long[]> holes = new ArrayList<>();
            for (int i = 0; i < appends.size(); i += 10) {
                List<MapRequest> some = appends.subList(i, Math.min(appends.size(), i + 10));
                List<BlockRun> runs = f.batch("/f", some);
                for (int k = 0; k < runs.size(); k++) {
                    mapped += runs.get(k).blocks();
                    long end = some.get(k).logicalBlock() + some.get(k).maxBlocks();
                    long got = runs.get(k).logicalStart() + runs.get(k).blocks();
                    if (got < end) holes.add(new long[] {got, end - got});
                }
            }
            assertTrue(holes.size() >= 2, "group boundaries left holes");
            for (long[] h : holes)
                assertTrue(f.getBlocks("/f", h[0], (int) h[1], false).isHole(), "nothing mapped at " + h[0]);
            long inFile = 0;
            for (Extent e : f.extents("/f")) inFile += e.blocks();
            assertEquals(mapped, inFile, "the file holds what its answers said, no more");
            f.closeFile("/f");
            assertEquals(free - mapped, f.freeBlocks(), "the close gave back the preallocation and the reservation");
        }
    }

    /** The rest of a short answer, placed first, is refused for lack of space: the request after it answers for itself. */
    @Test
    public void aGapThatCannotBeFilledLeavesTheNextRequestItsOwnAnswer() {
        try (Files f = files(Geometry.of(4096, 4096, 4096))) {
            long free = f.freeBlocks();
            List<Extent> all = f.allocate(free);
            Extent last = all.get(all.size() - 1);
            f.release(List.of(new Extent(last.end() - 10, 10))); // ten free blocks on the whole volume
            f.open("/f");
            List<MapRequest> two = List.of(MapRequest.allocate(0, 20), MapRequest.allocate(20, 5));
            refused(AllocationException.NoSpace.class, () -> f.batch("/f", two));
            assertEquals(List.of(new Extent(last.end() - 10, 10)), f.extents("/f"), "the first request got the ten");
            assertEquals(0, f.freeBlocks());
            refused(AllocationException.NoSpace.class, () -> f.getBlocks("/f", 10, 10, true));
            assertTrue(f.getBlocks("/f", 10, 15, false).isHole(), "nothing more was mapped");
        }
    }

    @Test
    public void aRefusedRequestEndsTheBatchAndKeepsWhatCameBefore() {
        try (Files f = files(Geometry.of(4096, 2 * 4096, 4096))) {
            f.open("/f");
            List<MapRequest> bad = List.of(MapRequest.allocate(0, 4), MapRequest.allocate(-1, 1), MapRequest.allocate(4, 4));
            refused(AllocationException.InvalidRequest.class, () -> f.batch("/f", bad));
            assertEquals(4, f.getBlocks("/f", 0, 16, false).blocks(), "the request before the bad one was served");
            assertTrue(f.getBlocks("/f", 4, 4, false).isHole(), "the one after it was not");
            refused(AllocationException.InvalidRequest.class, () -> f.batch("/f", null));
            refused(AllocationException.InvalidRequest.class,
                    () -> f.batch("/f", java.util.Collections.nCopies(BlockAllocator.MAX_BATCH + 1, MapRequest.allocate(0, 1))));
            refused(AllocationException.UnknownFile.class, () -> f.batch("/never", List.of(MapRequest.allocate(0, 1))));
        }
    }

    private static List<MapRequest> oneBlockCalls(long from, long to) {
        List<MapRequest> calls = new ArrayList<>();
        for (long l = from; l < to; l++) calls.add(MapRequest.allocate(l, 1));
        return calls;
    }

    /**
     * tar's files written whole, one call each, against the same files opened, written one block per call and
     * closed: the same runs, the same layout, the same free count (every preallocation back), and each file
     * closed afterwards unless another writer holds it open.
     */
    @Test
    public void aFileWrittenWholeIsLaidOutAsOpenCallsAndCloseAndIsClosedAfter() {
        Geometry g = Geometry.of(4096, 4 * 4096, 4096);
        java.util.Random rnd = new java.util.Random(7);
        try (Files whole = files(g); Files stepwise = files(g)) {
            long free = whole.freeBlocks();
            long written = 0;
            for (int i = 0; i < 200; i++) {
                String file = "/src/f" + i;
                int blocks = 1 + rnd.nextInt(8);
                written += blocks;
                List<BlockRun> runs = whole.writeFile(file, oneBlockCalls(0, blocks));
                stepwise.open(file);
                List<BlockRun> one = new ArrayList<>();
                for (MapRequest r : oneBlockCalls(0, blocks)) one.add(stepwise.getBlocks(file, r.logicalBlock(), 1, true));
                stepwise.closeFile(file);
                assertEquals(one, runs, file + ": one run per call, as the calls one after the other");
                assertEquals(stepwise.extents(file), whole.extents(file), file);
                refused(AllocationException.UnknownFile.class, () -> whole.getBlocks(file, 0, 1, false));
            }
            assertEquals(free - written, whole.freeBlocks(), "no preallocation or window outlives the close");
            assertEquals(stepwise.freeBlocks(), whole.freeBlocks());

            // Written again while another writer holds it open: the file stays open for that writer.
            whole.open("/src/f0");
            List<BlockRun> more = whole.writeFile("/src/f0", oneBlockCalls(100, 102));
            assertEquals(2, more.size());
            assertEquals(1, whole.getBlocks("/src/f0", 102, 1, true).blocks(), "still open for the other writer");
            whole.closeFile("/src/f0");
            refused(AllocationException.UnknownFile.class, () -> whole.getBlocks("/src/f0", 0, 1, false));
            assertEquals(List.of(), whole.writeFile("/src/empty", List.of()), "an empty file is created and closed");
            assertEquals(List.of(), whole.extents("/src/empty"));
        }
    }

    /** A refused request ends the batch, and the file is closed all the same: nothing held stays behind. */
    @Test
    public void aRefusedWriteFileStillClosesTheFileAndKeepsWhatCameBefore() {
        try (Files f = files(Geometry.of(4096, 2 * 4096, 4096))) {
            long free = f.freeBlocks();
            List<MapRequest> bad = List.of(MapRequest.allocate(0, 4), MapRequest.allocate(-1, 1), MapRequest.allocate(4, 4));
            refused(AllocationException.InvalidRequest.class, () -> f.writeFile("/f", bad));
            assertEquals(List.of(new Extent(f.extents("/f").get(0).start(), 4)), f.extents("/f"),
                    "the request before the bad one was served, the one after it was not");
            assertEquals(free - 4, f.freeBlocks(), "the file's preallocation went back at the close");
            refused(AllocationException.UnknownFile.class, () -> f.getBlocks("/f", 0, 1, false));
            refused(AllocationException.OutOfRange.class,
                    () -> f.writeFile("/g", List.of(MapRequest.allocate(FileState.MAX_LOGICAL_BLOCKS, 1))));
            refused(AllocationException.UnknownFile.class, () -> f.getBlocks("/g", 0, 1, false));
            refused(AllocationException.InvalidRequest.class, () -> f.writeFile("/f", null));
            refused(AllocationException.InvalidRequest.class,
                    () -> f.writeFile("/f", java.util.Collections.nCopies(BlockAllocator.MAX_BATCH + 1, MapRequest.allocate(0, 1))));
            refused(AllocationException.InvalidRequest.class, () -> f.writeFile(null, List.of(MapRequest.allocate(0, 1))));
            refused(AllocationException.InvalidRequest.class, () -> f.writeFile(" ", List.of(MapRequest.allocate(0, 1))));
            assertEquals(free - 4, f.freeBlocks(), "nothing refused took a block");
        }
    }

    @Test
    public void aTruncateRefusedByAGroupLeavesTheFileAsItWas() {
        try (Files f = files(Geometry.of(4096, 2 * 4096, 4096))) {
            f.open("/f");
            for (long l = 0; l < 40; ) l += f.getBlocks("/f", l, 40 - (int) l, true).blocks();
            List<Extent> before = f.extents("/f");
            // The file's last block is released behind its back (a caller mixing the two interfaces).
            Extent tail = before.get(before.size() - 1);
            f.release(List.of(new Extent(tail.end() - 1, 1)));
            long free = f.freeBlocks();

            refused(AllocationException.DoubleFree.class, () -> f.truncate("/f", 0));
            assertEquals(before, f.extents("/f"), "the refused truncate cut nothing");
            assertEquals(free, f.freeBlocks(), "and freed nothing");
            assertEquals(40, f.getBlocks("/f", 0, 40, false).blocks(), "the file still maps all it had");
        }
    }

    @Test
    public void theEighthFileGetsTheBlocksThatSevenIdleFilesHeldAsPreallocation() {
        try (Files f = files(Geometry.of(4096, 4096, 4096))) { // one group of 4094 data blocks
            for (int i = 0; i < 7; i++) {
                String file = "/idle" + i;
                f.open(file);
                // Appends until the window is big enough to preallocate, then stops: an idle writer.
                for (long l = 0; l < 130; l++) f.getBlocks(file, l, 1, true);
            }
            long mapped = 0;
            for (int i = 0; i < 7; i++) for (Extent e : f.extents("/idle" + i)) mapped += e.blocks();
            long free = f.freeBlocks();
            long preallocated = 4094 - mapped - free;
            assertTrue(preallocated > 0, "the idle files hold preallocations: " + preallocated);

            f.open("/eighth");
            long want = free + preallocated, got = 0;
            while (got < want) got += f.getBlocks("/eighth", got, (int) (want - got), true).blocks();
            assertEquals(0, f.freeBlocks(), "every block the idle files held unused went to the eighth file");
            refused(AllocationException.NoSpace.class, () -> f.getBlocks("/eighth", 5000, 1, true));
        }
    }

    @Test
    public void freshRunsAreUnwrittenAndAdjacentOnesStayOneExtent() {
        try (Files f = files(Geometry.of(4096, 4096, 4096))) {
            f.open("/f");
            List<BlockRun> runs = new ArrayList<>();
            for (long l = 0; l < 20; l += 4) runs.add(f.getBlocks("/f", l, 4, true));
            assertTrue(runs.stream().allMatch(r -> r.fresh() && r.unwritten()), "fresh runs are unwritten: " + runs);
            assertEquals(1, f.extents("/f").size(), "a lone appender's unwritten runs merge into one extent");
        }
    }
}
