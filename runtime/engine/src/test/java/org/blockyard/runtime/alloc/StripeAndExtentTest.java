package org.blockyard.runtime.alloc;

import static org.blockyard.runtime.alloc.AllocatorChecks.await;
import static org.blockyard.runtime.alloc.AllocatorChecks.refused;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.FreeExtentPage;
import org.blockyard.api.alloc.Geometry;

/** Stripe alignment, the mkfs geometry rule, and the extent interface. */
class StripeAndExtentTest {

    @Test
    void deviceHintsOfOneBlockOrLessSetNoStripe() {
        Geometry g = Geometry.standard(1 << 20);
        Geometry one = g.fromDeviceHints(4096, 4096);
        assertEquals(0, one.strideBlocks());
        assertEquals(0, one.stripeBlocks());
        Geometry small = g.fromDeviceHints(512, 512);
        assertEquals(0, small.stripeBlocks());
        Geometry raid = g.fromDeviceHints(64 * 1024, 256 * 1024);
        assertEquals(16, raid.strideBlocks());
        assertEquals(64, raid.stripeBlocks());
    }

    @Test
    void withAStripeExtentsAndNewFilesStartOnStripeBoundaries() {
        Geometry g = Geometry.of(4096, 8 * 4096, 4096).withStripe(4, 16);
        try (ActorBlockAllocator a = ActorBlockAllocator.start(AllocatorSettings.of(g, ReservationPolicy.extended()))) {
            List<Extent> owned = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                for (Extent e : await(a.allocate(24, 1, 0, -1))) {
                    assertEquals(0, e.start() % 16, "extent " + e + " is not stripe-aligned");
                    owned.add(e);
                }
            }
            for (int i = 0; i < 6; i++) {
                String f = "/s/f" + i;
                await(a.open(f));
                BlockRun first = await(a.getBlocks(f, 0, 3, true));
                assertEquals(0, first.physicalStart() % 16, f + " starts off the stripe at " + first.physicalStart());
                owned.addAll(await(a.heldExtents(f)));
            }
            AllocatorChecks.checkInvariants(a, owned);
        }
    }

    @Test
    void aPartialAllocationIsASuccessAndNothingFreeIsNoSpace() {
        Geometry g = Geometry.of(4096, 2 * 64, 64); // 124 data blocks
        try (ActorBlockAllocator a = ActorBlockAllocator.start(AllocatorSettings.of(g, ReservationPolicy.extended()))) {
            List<Extent> got = await(a.allocate(200, 1, 0, -1));
            long n = got.stream().mapToLong(Extent::blocks).sum();
            assertEquals(g.dataBlocks(), n, "a partial result returns all there was");
            refused(AllocationException.NoSpace.class, a.allocate(1, 1, 0, -1));
            assertEquals(0.0, await(a.fragmentationScore()));
            await(a.release(got));
            assertEquals(g.dataBlocks(), (long) await(a.freeBlocks()));
        }
    }

    @Test
    void extentsRespectTheMaximumLengthAndTheUnit() {
        Geometry g = Geometry.of(4096, 4 * 4096, 4096);
        try (ActorBlockAllocator a = ActorBlockAllocator.start(AllocatorSettings.of(g, ReservationPolicy.extended()))) {
            List<Extent> got = await(a.allocate(1000, 8, 64, 5000));
            assertEquals(1000, got.stream().mapToLong(Extent::blocks).sum());
            for (Extent e : got) {
                assertTrue(e.blocks() <= 64 && e.blocks() % 8 == 0 && e.start() % 8 == 0, e.toString());
            }
            assertTrue(got.get(0).start() >= 5000, "the hint is honoured: " + got.get(0));
        }
    }

    @Test
    void freeExtentsAreEnumeratedInPagesWithAResumableCursor() {
        Geometry g = Geometry.of(4096, 2 * 4096, 4096);
        try (ActorBlockAllocator a = ActorBlockAllocator.start(AllocatorSettings.of(g, ReservationPolicy.extended()))) {
            // Punch a regular pattern: allocate everything, free every other 4-block piece of the first 400.
            List<Extent> all = await(a.allocate(g.dataBlocks(), 1, 4, -1));
            List<Extent> back = new ArrayList<>();
            for (Extent e : all) if (e.start() < 400 && (e.start() / 4) % 2 == 0) back.add(e);
            await(a.release(back));
            List<Extent> seen = new ArrayList<>();
            long cursor = 0;
            int pages = 0;
            while (cursor >= 0) {
                FreeExtentPage page = await(a.freeExtents(cursor, g.totalBlocks(), 7));
                assertTrue(page.extents().size() <= 7);
                seen.addAll(page.extents());
                cursor = page.nextCursor();
                pages++;
            }
            assertEquals(back.size(), seen.size(), "every free extent once");
            assertTrue(pages > 1);
            for (int i = 1; i < seen.size(); i++) assertTrue(seen.get(i - 1).end() < seen.get(i).start(), "ascending");
            double score = await(a.fragmentationScore());
            assertTrue(score > 0.5 && score <= 1.0, "free space in 4-block pieces is badly fragmented: " + score);
        }
    }
}
