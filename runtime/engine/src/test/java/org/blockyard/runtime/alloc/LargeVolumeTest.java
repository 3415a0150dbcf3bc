package org.blockyard.runtime.alloc;

import static org.blockyard.runtime.alloc.AllocatorChecks.await;
import static org.blockyard.runtime.alloc.AllocatorChecks.refused;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import org.junit.jupiter.api.Test;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.FreeExtentPage;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.runtime.config.BlockyardConfig;

/**
 * Volumes of 65,536 to 100,000 groups, as a storage engineer sizes them (small groups keep the test's
 * memory modest; the walks do not care how big a group is). Calls are made from a thread with a small
 * stack, so a walk that grew the stack per group would overflow here.
 */
class LargeVolumeTest {
    private static final int GROUP_BLOCKS = 256;

    /** Blocks that the prepare step filled, as extents, so checks can count them as owned. */
    private final List<Extent> filled = java.util.Collections.synchronizedList(new ArrayList<>());

    private void fill(BlockGroup b, int blocks) {
        b.fillFromStart(blocks);
        if (blocks > 0) filled.add(new Extent(b.firstDataBlock(), blocks));
    }

    private List<Extent> ownedWith(List<Extent> got) {
        List<Extent> all = new ArrayList<>(filled);
        all.addAll(got);
        return all;
    }

    private static ActorBlockAllocator start(int groups, Consumer<BlockGroup> prepare) {
        Geometry g = Geometry.of(4096, (long) groups * GROUP_BLOCKS, GROUP_BLOCKS);
        return ActorBlockAllocator.start(AllocatorSettings.of(g, ReservationPolicy.extended()),
                BlockyardConfig.load(), prepare);
    }

    /** Runs {@code body} on a thread with a 256 KiB stack and answers what it returned. */
    static <T> T onSmallStack(java.util.function.Supplier<T> body) {
        AtomicReference<Object> result = new AtomicReference<>();
        Thread t = new Thread(null, () -> {
            try {
                result.set(body.get());
            } catch (Throwable e) {
                result.set(e);
            }
        }, "small-stack", 256 * 1024);
        t.start();
        try {
            t.join();
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
        if (result.get() instanceof RuntimeException r) throw r;
        if (result.get() instanceof Error e) throw e;
        @SuppressWarnings("unchecked") T value = (T) result.get();
        return value;
    }

    @Test
    void aNearlyFullVolumeOf100000GroupsServesFromItsLastGroup() {
        int groups = 100_000;
        try (ActorBlockAllocator a = start(groups, b -> {
            if (b.group() < groups - 1) b.fillFromStart((int) b.dataBlocks());
        })) {
            long free = await(a.freeBlocks());
            List<Extent> got = onSmallStack(() -> await(a.allocate(16, 1, 0, 0)));
            assertEquals(16, got.stream().mapToLong(Extent::blocks).sum());
            for (Extent e : got) assertEquals(groups - 1, a.geometry().groupOf(e.start()), "served by the last group");
            assertEquals(free - 16, (long) await(a.freeBlocks()));
            // Every group full: NoSpace, answered without a stack overflow.
            await(a.allocate(free - 16, 1, 0, -1));
            refused(AllocationException.NoSpace.class, onSmallStack(() -> a.allocate(1, 1, 0, 0)));
        }
    }

    @Test
    void aRequestSplitBetweenTheFirstAndTheLastGroupOf65536LosesNoBlock() {
        int groups = 65_536;
        try (ActorBlockAllocator a = start(groups, b -> {
            if (b.group() == 0) fill(b, (int) b.dataBlocks() - 1);
            else if (b.group() < groups - 1) fill(b, (int) b.dataBlocks());
        })) {
            long free = await(a.freeBlocks());
            List<Extent> got = onSmallStack(() -> await(a.allocate(2, 1, 0, 0)));
            assertEquals(2, got.stream().mapToLong(Extent::blocks).sum());
            assertEquals(free - 2, (long) await(a.freeBlocks()));
            AllocatorChecks.checkInvariants(a, ownedWith(got));
        }
    }

    @Test
    void aGroupThatFailsHalfWayThroughAMultiGroupAllocationGetsEveryClaimedBlockBack() {
        int groups = 65_536;
        try (ActorBlockAllocator a = start(groups, b -> {
            if (b.group() == 0) fill(b, (int) b.dataBlocks() - 1);
            else if (b.group() < groups - 1) fill(b, (int) b.dataBlocks());
            else b.injectFaultInNextClaim(new IllegalStateException("injected bug in the last group"));
        })) {
            long free = await(a.freeBlocks());
            // Group 0 claims its last block, then the last group fails: the claim is given back.
            refused(AllocationException.Failed.class, onSmallStack(() -> a.allocate(2, 1, 0, 0)));
            AllocatorChecks.checkInvariants(a, ownedWith(List.of()));
            assertEquals(free, (long) await(a.freeBlocks()), "a block was lost");
            // The failed group recovered and serves the same request now.
            List<Extent> got = await(a.allocate(2, 1, 0, 0));
            assertEquals(2, got.stream().mapToLong(Extent::blocks).sum());
            AllocatorChecks.checkInvariants(a, ownedWith(got));
        }
    }

    /** Every other block used in every group: 100,000 groups of 127 free runs each. */
    @Test
    void freeExtentsPagedToTheEndAndTheScoreCoverEvery100000Groups() {
        int groups = 100_000;
        try (ActorBlockAllocator a = start(groups, b -> {
            for (long blk = b.firstDataBlock() + 1; blk < b.end(); blk += 2)
                b.markUsed(blk, 1);
        })) {
            long runs = 0, blocks = 0;
            long cursor = 0;
            int pages = 0;
            while (cursor >= 0) {
                long from = cursor;
                FreeExtentPage page = onSmallStack(() -> await(a.freeExtents(from, a.geometry().totalBlocks(), 1_000_000)));
                for (Extent e : page.extents()) {
                    runs++;
                    blocks += e.blocks();
                }
                cursor = page.nextCursor();
                pages++;
            }
            assertTrue(pages > 1, "the enumeration took several pages");
            assertEquals(await(a.freeBlocks()), blocks, "the pages cover every free block once");
            assertEquals(blocks, runs, "every free run is one block");
            double score = onSmallStack(() -> await(a.fragmentationScore()));
            assertEquals(1.0, score, 1e-9, "single-block free runs are the worst score");
        }
    }
}
