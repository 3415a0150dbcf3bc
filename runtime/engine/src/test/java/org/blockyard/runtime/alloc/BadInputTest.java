package org.blockyard.runtime.alloc;

import static org.blockyard.runtime.alloc.AllocatorChecks.await;
import static org.blockyard.runtime.alloc.AllocatorChecks.refused;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;

/** Every bad input gets a typed error and changes nothing. */
class BadInputTest {
    private final Geometry g = Geometry.of(4096, 4 * 4096, 4096);
    private ActorBlockAllocator a;
    private List<Extent> owned;
    private long freeBefore;

    @BeforeEach
    void start() {
        a = ActorBlockAllocator.start(AllocatorSettings.of(g, ReservationPolicy.extended()));
        await(a.open("/f"));
        await(a.getBlocks("/f", 0, 10, true));
        owned = new ArrayList<>(await(a.allocate(64, 1, 0, -1)));
        freeBefore = await(a.freeBlocks());
    }

    @AfterEach
    void checkNothingChanged() {
        List<Extent> all = new ArrayList<>(owned);
        all.addAll(await(a.heldExtents("/f")));
        assertEquals(freeBefore, (long) await(a.freeBlocks()), "a refused call changed the free count");
        AllocatorChecks.checkInvariants(a, all);
        a.close();
    }

    @Test
    void blocksOutsideTheVolumeAreRefused() {
        refused(AllocationException.OutOfRange.class, a.release(List.of(new Extent(g.totalBlocks() - 2, 4))));
        refused(AllocationException.OutOfRange.class, a.freeExtents(0, g.totalBlocks() + 1, 10));
        refused(AllocationException.OutOfRange.class, a.allocate(8, 1, 0, g.totalBlocks()));
    }

    @Test
    void aDoubleFreeIsRefusedAndFreesNothingElse() {
        Extent first = owned.get(0);
        Extent freeBlock = await(a.freeExtents(0, g.totalBlocks(), 1)).extents().get(0);
        var e = refused(AllocationException.DoubleFree.class, a.release(List.of(first, new Extent(freeBlock.start(), 1))));
        assertTrue(e.getMessage().contains(String.valueOf(freeBlock.start())), e.getMessage());
        refused(AllocationException.DoubleFree.class, a.release(List.of(first, first)));
    }

    @Test
    void aReleaseAcrossGroupsWithOneBadExtentFreesNone() {
        List<Extent> far = await(a.allocate(8, 1, 0, 3 * 4096L + 100));
        owned.addAll(far);
        freeBefore = await(a.freeBlocks());
        Extent free = new Extent(2 * 4096L + 4000, 1); // group 2, never allocated
        refused(AllocationException.DoubleFree.class, a.release(List.of(owned.get(0), far.get(0), free)));
    }

    @Test
    void systemZoneBlocksAreNeverFreed() {
        refused(AllocationException.SystemZone.class, a.release(List.of(new Extent(4096, 1))));
        refused(AllocationException.SystemZone.class, a.release(List.of(new Extent(0, 2))));
    }

    @Test
    void countsOfZeroOrBelowAreRefused() {
        refused(AllocationException.InvalidRequest.class, a.getBlocks("/f", 100, 0, true));
        refused(AllocationException.InvalidRequest.class, a.getBlocks("/f", -1, 1, true));
        refused(AllocationException.InvalidRequest.class, a.allocate(0, 1, 0, -1));
        refused(AllocationException.InvalidRequest.class, a.allocate(-8, 1, 0, -1));
        refused(AllocationException.InvalidRequest.class, a.allocate(10, 4, 0, -1));
        refused(AllocationException.InvalidRequest.class, a.allocate(8, 0, 0, -1));
        refused(AllocationException.InvalidRequest.class, a.allocate(8, 4, 6, -1));
        refused(AllocationException.InvalidRequest.class, a.truncate("/f", -3));
        refused(AllocationException.InvalidRequest.class, a.freeExtents(0, 10, 0));
    }

    @Test
    void closedAndUnknownFilesAreRefused() {
        refused(AllocationException.UnknownFile.class, a.getBlocks("/never", 0, 1, true));
        refused(AllocationException.UnknownFile.class, a.truncate("/never", 0));
        refused(AllocationException.UnknownFile.class, a.close("/never"));
        refused(AllocationException.UnknownFile.class, a.fileExtents("/never"));
        refused(AllocationException.InvalidRequest.class, a.open(""));
        await(a.open("/g"));
        await(a.getBlocks("/g", 0, 1, true));
        owned.addAll(await(a.fileExtents("/g")));
        await(a.close("/g")); // gives back the rest of its first window, preallocated
        freeBefore = await(a.freeBlocks());
        refused(AllocationException.UnknownFile.class, a.getBlocks("/g", 1, 1, true));
        refused(AllocationException.UnknownFile.class, a.truncate("/g", 0));
        refused(AllocationException.UnknownFile.class, a.close("/g"));
        assertEquals(1, await(a.fileExtents("/g")).size(), "a closed file keeps its blocks");
    }

    @Test
    void geometryRefusesNonsense() {
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> Geometry.of(4096, 100, 4096));
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> Geometry.of(3000, 8192, 4096));
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> g.withStripe(1, 1));
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> new Extent(5, 0));
    }
}
