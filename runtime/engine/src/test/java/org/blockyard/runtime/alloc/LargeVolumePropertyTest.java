package org.blockyard.runtime.alloc;

import static org.blockyard.runtime.alloc.AllocatorChecks.await;
import static org.blockyard.runtime.alloc.LargeVolumeTest.onSmallStack;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;

/**
 * Random operations on a volume of 100,000 groups of 256 blocks, from a thread with a 256 KiB stack:
 * extent allocations of every shape (units, limits, hints anywhere), releases of random subsets, and files
 * that grow, truncate and close. After every step the free count plus what is owned is the capacity; at
 * the end no block has two owners, none is in a system zone, and every group's count matches its bitmap.
 */
class LargeVolumePropertyTest {
    private static final int GROUPS = 100_000;
    private static final int GROUP_BLOCKS = 256;

    @Test
    void randomOperationsOn100000GroupsConserveEveryBlock() {
        Geometry g = Geometry.of(4096, (long) GROUPS * GROUP_BLOCKS, GROUP_BLOCKS);
        Random rnd = new Random(20261130);
        try (ActorBlockAllocator a = ActorBlockAllocator.start(AllocatorSettings.of(g, ReservationPolicy.extended()))) {
            List<Extent> owned = new ArrayList<>();
            String[] files = {"/a", "/b", "/c"};
            long[] fileEnd = new long[files.length];
            boolean[] open = new boolean[files.length];
            long capacity = g.dataBlocks();
            for (int step = 0; step < 400; step++) {
                int op = rnd.nextInt(10);
                if (op < 4) {
                    int unit = 1 << rnd.nextInt(5);
                    long want = unit * (1L + rnd.nextInt(op == 0 ? 20_000 : 64));
                    long max = rnd.nextBoolean() ? 0 : unit * (1L + rnd.nextInt(16));
                    long hint = rnd.nextBoolean() ? -1 : (long) (rnd.nextDouble() * g.totalBlocks());
                    try {
                        owned.addAll(onSmallStack(() -> await(a.allocate(want, unit, max, hint))));
                    } catch (AllocationException.NoSpace e) {
                        // a full volume is an answer too
                    }
                } else if (op < 7 && !owned.isEmpty()) {
                    List<Extent> some = new ArrayList<>();
                    for (int i = rnd.nextInt(Math.min(owned.size(), 50)); i >= 0; i--)
                        some.add(owned.remove(rnd.nextInt(owned.size())));
                    onSmallStack(() -> await(a.release(some)));
                } else {
                    int f = rnd.nextInt(files.length);
                    if (!open[f]) {
                        await(a.open(files[f]));
                        open[f] = true;
                    } else if (op == 7) {
                        int n = 1 + rnd.nextInt(300);
                        long at = fileEnd[f];
                        var run = onSmallStack(() -> await(a.getBlocks(files[f], at, n, true)));
                        fileEnd[f] += run.blocks();
                    } else if (op == 8) {
                        long from = fileEnd[f] == 0 ? 0 : rnd.nextLong(fileEnd[f] + 1);
                        await(a.truncate(files[f], from));
                        fileEnd[f] = Math.min(fileEnd[f], from);
                    } else {
                        await(a.close(files[f]));
                        open[f] = false;
                    }
                }
                long held = 0;
                for (Extent e : owned) held += e.blocks();
                for (String f : files) for (Extent e : await(a.heldExtents(f).exceptionally(x -> List.of()))) held += e.blocks();
                assertEquals(capacity, await(a.freeBlocks()) + held, "free + owned != capacity after step " + step);
            }
            List<Extent> all = new ArrayList<>(owned);
            for (String f : files) all.addAll(await(a.heldExtents(f).exceptionally(x -> List.of())));
            AllocatorChecks.checkInvariants(a, all);
            assertEquals(await(a.freeBlocks()),
                    onSmallStack(() -> await(a.freeExtents(0, g.totalBlocks(), Integer.MAX_VALUE))).extents().stream()
                            .mapToLong(Extent::blocks).sum(), "the free extents add up to the free count");
        }
    }
}
