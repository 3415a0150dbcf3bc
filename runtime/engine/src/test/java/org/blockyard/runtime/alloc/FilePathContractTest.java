package org.blockyard.runtime.alloc;

import static org.blockyard.runtime.alloc.AllocatorChecks.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.function.Function;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.BlockAllocator;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.api.alloc.MapRequest;

/** The file path's checks and guarantees, run over the actors and over the global-lock baseline alike. */
class FilePathContractTest {

    /** The file calls of one implementation, answering or throwing the AllocationException. */
    interface Files extends AutoCloseable {
        void open(String file);

        BlockRun getBlocks(String file, long logical, int max, boolean create);

        long truncate(String file, long from);

        List<Extent> extents(String file);

        /** Frees blocks behind the files' backs, as the extent interface's release does. */
        void release(List<Extent> extents);

        long freeBlocks();

        List<BlockRun> batch(String file, List<MapRequest> requests);

        @Override
        void close();
    }

    /** Both implementations, driven through the one {@link BlockAllocator} interface. */
    static final class Through implements Files {
        final BlockAllocator a;
        final AutoCloseable closer;

        Through(BlockAllocator a, AutoCloseable closer) {
            this.a = a;
            this.closer = closer;
        }

        static Through actors(Geometry g) {
            ActorBlockAllocator a = ActorBlockAllocator.start(AllocatorSettings.of(g, ReservationPolicy.extended()));
            return new Through(a, a);
        }

        static Through locked(Geometry g) {
            return new Through(new GlobalLockAllocator(g, ReservationPolicy.extended()), () -> {});
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

        public void close() {
            try {
                closer.close();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }

    static List<Arguments> implementations() {
        Function<Geometry, Files> actors = Through::actors, locked = Through::locked;
        return List.of(Arguments.of("actors", actors), Arguments.of("global-lock", locked));
    }

    private static <E extends AllocationException> E refused(Class<E> type, Runnable call) {
        RuntimeException e = assertThrows(RuntimeException.class, call::run);
        Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
        return assertInstanceOf(type, cause);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("implementations")
    void badLogicalBlocksAndCountsAreRefusedAndChangeNothing(String name, Function<Geometry, Files> impl) {
        try (Files f = impl.apply(Geometry.of(4096, 2 * 4096, 4096))) {
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

    @ParameterizedTest(name = "{0}")
    @MethodSource("implementations")
    void aBatchMapsExactlyAsTheSameCallsOneAfterTheOther(String name, Function<Geometry, Files> impl) {
        Geometry g = Geometry.of(4096, 4 * 4096, 4096);
        List<MapRequest> appends = new ArrayList<>();
        for (long l = 0; l < 300; l++) appends.add(MapRequest.allocate(l, 1));
        appends.add(new MapRequest(5000, 3, false)); // a hole, looked up
        appends.add(new MapRequest(0, 300, false)); // what the batch mapped, looked up
        try (Files batched = impl.apply(g); Files single = impl.apply(g)) {
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

    @ParameterizedTest(name = "{0}")
    @MethodSource("implementations")
    void aRefusedRequestEndsTheBatchAndKeepsWhatCameBefore(String name, Function<Geometry, Files> impl) {
        try (Files f = impl.apply(Geometry.of(4096, 2 * 4096, 4096))) {
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

    @ParameterizedTest(name = "{0}")
    @MethodSource("implementations")
    void aTruncateRefusedByAGroupLeavesTheFileAsItWas(String name, Function<Geometry, Files> impl) {
        try (Files f = impl.apply(Geometry.of(4096, 2 * 4096, 4096))) {
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

    @ParameterizedTest(name = "{0}")
    @MethodSource("implementations")
    void theEighthFileGetsTheBlocksThatSevenIdleFilesHeldAsPreallocation(String name, Function<Geometry, Files> impl) {
        try (Files f = impl.apply(Geometry.of(4096, 4096, 4096))) { // one group of 4094 data blocks
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

    @ParameterizedTest(name = "{0}")
    @MethodSource("implementations")
    void freshRunsAreUnwrittenAndAdjacentOnesStayOneExtent(String name, Function<Geometry, Files> impl) {
        try (Files f = impl.apply(Geometry.of(4096, 4096, 4096))) {
            f.open("/f");
            List<BlockRun> runs = new ArrayList<>();
            for (long l = 0; l < 20; l += 4) runs.add(f.getBlocks("/f", l, 4, true));
            assertTrue(runs.stream().allMatch(r -> r.fresh() && r.unwritten()), "fresh runs are unwritten: " + runs);
            assertEquals(1, f.extents("/f").size(), "a lone appender's unwritten runs merge into one extent");
        }
    }
}
