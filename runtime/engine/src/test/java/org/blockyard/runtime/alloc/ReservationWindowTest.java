package org.blockyard.runtime.alloc;

import static org.blockyard.runtime.alloc.AllocatorChecks.await;
import static org.blockyard.runtime.alloc.AllocatorChecks.refused;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;

/** ext3's reservation-window semantics, as oracles. */
class ReservationWindowTest {

    /** Window lengths seen by one file appending single blocks, one entry per new window. */
    private static List<Long> windowSizesOfSequentialAppend(ReservationPolicy policy, int blocks) {
        GlobalLockAllocator a = new GlobalLockAllocator(Geometry.of(4096, 4 * 32768, 32768), policy);
        FileState f = a.openFile("/d/f");
        List<Long> sizes = new ArrayList<>();
        Extent last = null;
        for (int i = 0; i < blocks; i++) {
            a.getBlocks(f, i, 1);
            Extent w = a.group(f.windowGroup).windowOf(f.id);
            if (!w.equals(last) && (last == null || w.start() != last.start())) sizes.add(w.blocks());
            last = w;
        }
        assertEquals(1, f.extentCount(), "a lone sequential writer gets one extent");
        return sizes;
    }

    @Test
    void windowDoublesWhenMoreThanHalfWasUsedUpTo1027() {
        List<Long> sizes = windowSizesOfSequentialAppend(ReservationPolicy.ext3(), 5000);
        assertEquals(List.of(8L, 16L, 32L, 64L, 128L, 256L, 512L, 1024L, 1027L, 1027L), sizes.subList(0, 10));
        assertTrue(sizes.stream().skip(8).allMatch(s -> s == 1027L), "the window stays at 1027: " + sizes);
    }

    @Test
    void extendedWindowKeepsGrowingWhileItsStreamFillsIt() {
        List<Long> sizes = windowSizesOfSequentialAppend(ReservationPolicy.extended(), 30000);
        assertEquals(List.of(8L, 16L, 32L, 64L, 128L, 256L, 512L, 1024L, 2048L, 4096L, 8192L, 16384L), sizes.subList(0, 12));
    }

    @Test
    void windowIsSizedUpToTheRequest() {
        GlobalLockAllocator a = new GlobalLockAllocator(Geometry.of(4096, 32768, 32768), ReservationPolicy.ext3());
        FileState f = a.openFile("/d/f");
        BlockRun run = a.getBlocks(f, 0, 300);
        assertEquals(300, run.blocks(), "one request claims the whole contiguous run");
        assertEquals(300, a.group(0).windowOf(f.id).blocks());
    }

    @Test
    void windowsOfConcurrentFilesNeverOverlapAndHoldTheirFilesBlocks() {
        GlobalLockAllocator a = new GlobalLockAllocator(Geometry.of(4096, 32768, 32768), ReservationPolicy.ext3());
        FileState f1 = a.openFile("/d/a"), f2 = a.openFile("/d/b");
        for (int i = 0; i < 100; i++) {
            a.getBlocks(f1, i, 1);
            a.getBlocks(f2, i, 1);
            Extent w1 = a.group(0).windowOf(f1.id), w2 = a.group(0).windowOf(f2.id);
            assertTrue(!w1.overlaps(w2), w1 + " overlaps " + w2);
        }
        // Interleaved in window-sized pieces, not block by block.
        assertTrue(f1.extentCount() <= 8, "extents: " + f1.extents());
    }

    @Test
    void lastWritersCloseDiscardsTheWindow() {
        try (ActorBlockAllocator a = ActorBlockAllocator.start(
                AllocatorSettings.of(Geometry.of(4096, 2 * 32768, 32768), ReservationPolicy.ext3()))) {
            await(a.open("/d/f"));
            await(a.open("/d/f"));
            await(a.getBlocks("/d/f", 0, 1, true));
            assertEquals(1, await(a.stats()).windows());
            await(a.close("/d/f"));
            assertEquals(1, await(a.stats()).windows(), "another writer still has the file open");
            await(a.close("/d/f"));
            assertEquals(0, await(a.stats()).windows(), "the last close drops the window");
            refused(AllocationException.UnknownFile.class, a.getBlocks("/d/f", 1, 1, true));
            refused(AllocationException.UnknownFile.class, a.close("/d/f"));
            await(a.open("/d/f"));
            assertEquals(1, await(a.getBlocks("/d/f", 1, 1, true)).blocks(), "a re-opened file allocates again");
        }
    }

    @Test
    void aLastPassWithoutReservationsComesBeforeNoSpace() {
        // Two groups of 64 blocks, 2 system blocks each: 124 data blocks.
        Geometry g = Geometry.of(4096, 128, 64);
        try (ActorBlockAllocator a = ActorBlockAllocator.start(AllocatorSettings.of(g, ReservationPolicy.ext3()))) {
            await(a.open("/d/holder"));
            BlockRun first = await(a.getBlocks("/d/holder", 0, 1, true));
            assertNotNull(first);
            assertEquals(1, await(a.stats()).windows(), "the holder keeps a window with 7 free blocks in it");
            await(a.open("/d/filler"));
            long got = 0;
            for (long logical = 0; ; logical++) {
                var stage = a.getBlocks("/d/filler", logical, 1, true);
                try {
                    got += await(stage).blocks();
                } catch (AllocationException.NoSpace e) {
                    break;
                }
            }
            assertEquals(g.dataBlocks() - 1, got, "the filler also took the blocks inside the holder's window");
            assertEquals(0L, await(a.freeBlocks()));
            List<Extent> owned = new ArrayList<>(await(a.fileExtents("/d/holder")));
            owned.addAll(await(a.fileExtents("/d/filler")));
            AllocatorChecks.checkInvariants(a, owned);
        }
    }

    @Test
    void homeGroupIsNeverSkippedForBeingNearlyFull() {
        Geometry g = Geometry.of(4096, 4 * 64, 64);
        GlobalLockAllocator a = new GlobalLockAllocator(g, ReservationPolicy.ext3());
        FileState f = a.openFile("/d/f");
        int home = f.homeGroup;
        BlockGroup hg = a.group(home);
        // Leave 3 free blocks at the end of the home group: fewer than a window of 8.
        hg.markUsed(hg.firstDataBlock(), (int) (hg.end() - hg.firstDataBlock() - 3));
        a.republish(home);
        BlockRun run = a.getBlocks(f, 0, 1);
        assertEquals(home, g.groupOf(run.physicalStart()), "allocated in the nearly full home group");
        assertNull(hg.windowOf(f.id), "without a window there");
    }
}
