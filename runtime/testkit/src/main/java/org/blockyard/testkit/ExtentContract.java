package org.blockyard.testkit;

import static org.blockyard.testkit.AllocatorChecks.await;
import static org.blockyard.testkit.AllocatorChecks.refused;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.BlockAllocator;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;

/**
 * The extent interface's contract, through {@link BlockAllocator} alone: the same refusals, conservation
 * under random use, and no {@code NoSpace} while open files hold unused preallocations. An implementation's
 * test extends this class and starts it over the geometry it is given, with the reservation policy (the
 * preallocation test counts on its windows); the actors and the global-lock and group-locks peers run it
 * in this module's tests.
 */
// The lock peers answer on the caller's thread, where no stage's deadline can stop a call that never
// returns: each test has one of its own.
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
public abstract class ExtentContract {

    /** A fresh allocator over {@code g}, with the reservation policy; closed by the test if it is {@link AutoCloseable}. */
    protected abstract BlockAllocator start(Geometry g);

    private static void close(BlockAllocator a) {
        if (a instanceof AutoCloseable c) {
            try {
                c.close();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }

    @Test
    public void badExtentCallsAreRefusedAlikeAndChangeNothing() {
        Geometry g = Geometry.of(4096, 4 * 4096, 4096);
        BlockAllocator a = start(g);
        try {
            List<Extent> owned = await(a.allocate(64, 1, 0, -1));
            long free = await(a.freeBlocks());
            refused(AllocationException.InvalidRequest.class, a.allocate(0, 1, 0, -1));
            refused(AllocationException.InvalidRequest.class, a.allocate(10, 4, 0, -1));
            refused(AllocationException.InvalidRequest.class, a.allocate(8, 0, 0, -1));
            refused(AllocationException.InvalidRequest.class, a.allocate(1L << 40, 1 << 20, 0, -1));
            refused(AllocationException.InvalidRequest.class, a.allocate(8, 4, 6, -1));
            refused(AllocationException.OutOfRange.class, a.allocate(8, 1, 0, g.totalBlocks()));
            refused(AllocationException.OutOfRange.class, a.release(List.of(new Extent(0, Long.MAX_VALUE))));
            refused(AllocationException.OutOfRange.class, a.release(List.of(new Extent(g.totalBlocks() - 2, 4))));
            refused(AllocationException.DoubleFree.class, a.release(List.of(owned.get(0), owned.get(0))));
            refused(AllocationException.DoubleFree.class, a.release(List.of(new Extent(5000, 1))));
            refused(AllocationException.SystemZone.class, a.release(List.of(new Extent(0, 1))));
            refused(AllocationException.OutOfRange.class, a.freeExtents(0, g.totalBlocks() + 1, 10));
            refused(AllocationException.InvalidRequest.class, a.freeExtents(0, 10, 0));
            assertEquals(free, (long) await(a.freeBlocks()), "a refused call changed the free count");
            await(a.release(owned));
            assertEquals(g.dataBlocks(), (long) await(a.freeBlocks()));
        } finally {
            close(a);
        }
    }

    @Test
    public void randomAllocationsAndReleasesConserveEveryBlock() {
        Geometry g = Geometry.of(4096, 16 * 1024, 1024);
        BlockAllocator a = start(g);
        Random rnd = new Random(7);
        try {
            List<Extent> owned = new ArrayList<>();
            for (int step = 0; step < 2000; step++) {
                if (rnd.nextInt(3) > 0) {
                    int unit = 1 << rnd.nextInt(4);
                    long hint = rnd.nextBoolean() ? -1 : rnd.nextLong(g.totalBlocks());
                    try {
                        owned.addAll(await(a.allocate(unit * (1L + rnd.nextInt(40)), unit,
                                rnd.nextBoolean() ? 0 : unit * 8L, hint)));
                    } catch (AllocationException.NoSpace e) {
                        // full for now
                    }
                } else if (!owned.isEmpty()) {
                    List<Extent> some = new ArrayList<>();
                    for (int i = rnd.nextInt(Math.min(8, owned.size())); i >= 0; i--)
                        some.add(owned.remove(rnd.nextInt(owned.size())));
                    await(a.release(some));
                }
                long held = owned.stream().mapToLong(Extent::blocks).sum();
                assertEquals(g.dataBlocks(), await(a.freeBlocks()) + held, "free + owned != capacity at step " + step);
            }
            List<Extent> sorted = new ArrayList<>(owned);
            sorted.sort(null);
            for (int i = 1; i < sorted.size(); i++)
                assertTrue(sorted.get(i - 1).end() <= sorted.get(i).start(), "owned twice: " + sorted.get(i));
            long listed = await(a.freeExtents(0, g.totalBlocks(), Integer.MAX_VALUE)).extents().stream()
                    .mapToLong(Extent::blocks).sum();
            assertEquals((long) await(a.freeBlocks()), listed, "the free extents add up to the free count");
        } finally {
            close(a);
        }
    }

    @Test
    public void anExtentRequestGetsTheBlocksThatIdleFilesHeldAsPreallocationBeforeNoSpace() {
        Geometry g = Geometry.of(4096, 4096, 4096); // one group of 4094 data blocks
        BlockAllocator a = start(g);
        try {
            long mapped = 0;
            for (int i = 0; i < 7; i++) {
                String file = "/idle" + i;
                await(a.open(file));
                for (long l = 0; l < 130; l++) mapped += await(a.getBlocks(file, l, 1, true)).blocks();
            }
            long free = await(a.freeBlocks());
            long preallocated = g.dataBlocks() - mapped - free;
            assertTrue(preallocated > 0, "the idle files hold preallocations: " + preallocated);
            List<Extent> got = await(a.allocate(free + preallocated, 1, 0, -1));
            assertEquals(free + preallocated, got.stream().mapToLong(Extent::blocks).sum(),
                    "every block the idle files held unused went to the extent request");
            assertEquals(0, (long) await(a.freeBlocks()));
            refused(AllocationException.NoSpace.class, a.allocate(1, 1, 0, -1));
        } finally {
            close(a);
        }
    }
}
