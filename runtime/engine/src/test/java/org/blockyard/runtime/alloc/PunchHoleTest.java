package org.blockyard.runtime.alloc;

import static org.blockyard.runtime.alloc.AllocatorChecks.await;
import static org.blockyard.runtime.alloc.AllocatorChecks.refused;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Stream;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.BlockAllocator;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;

/**
 * punchHole unmaps and frees every block of a range, written or not, anywhere in a file, on every allocator.
 * Without preallocation, whose blocks a punch gives back too, the free count moves only by what a punch unmaps.
 */
class PunchHoleTest {
    private static final Geometry G = Geometry.of(4096, 4 * 4096, 4096);

    static Stream<Arguments> allocators() {
        Function<Geometry, BlockAllocator> actors = g -> ActorBlockAllocator.start(
                AllocatorSettings.of(g, ReservationPolicy.extended()).withPreallocMinWindowBlocks(0));
        Function<Geometry, BlockAllocator> global = g -> new GlobalLockAllocator(g, ReservationPolicy.extended(), 0);
        Function<Geometry, BlockAllocator> groups = g -> new GroupLockAllocator(g, ReservationPolicy.extended(), 0);
        return Stream.of(Arguments.of("actors", actors), Arguments.of("global lock", global), Arguments.of("group locks", groups));
    }

    private static void closeIfCloseable(BlockAllocator a) throws Exception {
        if (a instanceof AutoCloseable c) c.close();
    }

    /** Maps {@code [0, blocks)} of {@code f} and marks it written. */
    private static void writeFile(BlockAllocator a, String f, long blocks) {
        for (long l = 0; l < blocks; ) l += await(a.getBlocks(f, l, (int) (blocks - l), true)).blocks();
        assertEquals(blocks, (long) await(a.markWritten(f, 0, blocks)));
    }

    /** The physical blocks logical {@code [from, to)} of {@code f} maps, in order. */
    private static List<Long> physical(BlockAllocator a, String f, long from, long to) {
        List<Long> out = new ArrayList<>();
        for (long l = from; l < to; ) {
            BlockRun run = await(a.getBlocks(f, l, (int) (to - l), false));
            if (run.isHole()) {
                l++;
                continue;
            }
            for (long i = 0; i < run.blocks(); i++) out.add(run.physicalStart() + i);
            l += run.blocks();
        }
        return out;
    }

    private static long mapped(BlockAllocator a, String f) {
        return await(a.fileExtents(f)).stream().mapToLong(Extent::blocks).sum();
    }

    private static boolean isFree(BlockAllocator a, long block) {
        return !await(a.freeExtents(block, block + 1, 1)).extents().isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("allocators")
    void aPunchInTheMiddleFreesExactlyItsBlocksAndLeavesAHole(String name, Function<Geometry, BlockAllocator> make)
            throws Exception {
        BlockAllocator a = make.apply(G);
        try {
            await(a.open("/f"));
            writeFile(a, "/f", 64);
            for (long l = 64; l < 72; ) l += await(a.getBlocks("/f", l, (int) (72 - l), true)).blocks(); // left unwritten
            List<Long> middle = physical(a, "/f", 16, 32);
            assertEquals(16, middle.size());
            long free = await(a.freeBlocks());
            assertEquals(0L, (long) await(a.punchHole("/f", 1L << 20, 8)), "a punch where nothing is mapped");
            assertEquals(free, (long) await(a.freeBlocks()));

            assertEquals(16L, (long) await(a.punchHole("/f", 16, 16)), "written blocks are freed");
            assertEquals(free + 16, (long) await(a.freeBlocks()));
            for (long p : middle) assertTrue(isFree(a, p), "block " + p + " is free again");
            assertEquals(48 + 8, mapped(a, "/f"));
            BlockRun hole = await(a.getBlocks("/f", 16, 16, false));
            assertTrue(hole.isHole(), "the range is a hole: " + hole);
            for (long l = 17; l < 32; l++) assertTrue(await(a.getBlocks("/f", l, 1, false)).isHole());
            assertEquals(16, physical(a, "/f", 0, 16).size(), "the blocks before it stay");
            assertEquals(32, physical(a, "/f", 32, 64).size(), "the blocks after it stay");
            assertFalse(await(a.getBlocks("/f", 15, 1, false)).unwritten());
            assertFalse(await(a.getBlocks("/f", 32, 1, false)).unwritten());

            assertEquals(0L, (long) await(a.punchHole("/f", 16, 16)), "a second punch frees nothing more");
            assertEquals(0L, (long) await(a.punchHole("/f", 20, 4)));
            assertEquals(free + 16, (long) await(a.freeBlocks()));

            // Unwritten blocks go too, and a range across a hole and both kinds of run frees what it maps.
            assertEquals(8L + 32L + 4L, (long) await(a.punchHole("/f", 8, 60)), "[8, 16), [32, 64) and [64, 68)");
            assertEquals(free + 16 + 44, (long) await(a.freeBlocks()));
            assertEquals(8 + 4, mapped(a, "/f")); // [0, 8) written, [68, 72) unwritten
            assertTrue(await(a.getBlocks("/f", 68, 4, false)).unwritten());
        } finally {
            closeIfCloseable(a);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("allocators")
    void badPunchesGetTheTypedErrorsOfTheSiblingCallsAndChangeNothing(String name, Function<Geometry, BlockAllocator> make)
            throws Exception {
        BlockAllocator a = make.apply(G);
        try {
            refused(AllocationException.UnknownFile.class, a.punchHole("/nobody", 0, 4));
            await(a.open("/f"));
            writeFile(a, "/f", 16);
            long free = await(a.freeBlocks());
            refused(AllocationException.InvalidRequest.class, a.punchHole("/f", -1, 4));
            refused(AllocationException.InvalidRequest.class, a.punchHole("/f", 0, 0));
            refused(AllocationException.InvalidRequest.class, a.punchHole("/f", 0, -4));
            refused(AllocationException.OutOfRange.class, a.punchHole("/f", 1L << 48, 1));
            refused(AllocationException.OutOfRange.class, a.punchHole("/f", 8, Long.MAX_VALUE));
            assertEquals(free, (long) await(a.freeBlocks()));
            assertEquals(16, mapped(a, "/f"));
            await(a.close("/f"));
            refused(AllocationException.UnknownFile.class, a.punchHole("/f", 0, 4)); // closed, as discardUnwritten
            assertEquals(free, (long) await(a.freeBlocks()));
        } finally {
            closeIfCloseable(a);
        }
    }
}
