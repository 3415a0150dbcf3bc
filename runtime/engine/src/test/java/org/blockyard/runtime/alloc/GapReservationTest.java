package org.blockyard.runtime.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Extent;

/** A file's gaps and their reservations (FileState#gapEndingAt, #reserveGap), without actors. */
class GapReservationTest {

    private static FileState file() {
        FileState f = new FileState(1, "/f", 0, 8);
        f.writers = 1;
        return f;
    }

    @Test
    void aShortAnswerLeavesAGapThatOnlyTheRequestRightAfterItMeets() {
        FileState f = file();
        f.answered(100, 256, true, Reply.ok(new BlockRun(100, 5000, 6, true, true)));
        assertEquals(106, f.gapEndingAt(356), "the request that went on past the gap");
        assertEquals(-1, f.gapEndingAt(106), "the caller asking for the rest itself");
        assertEquals(-1, f.gapEndingAt(357));
        f.answered(106, 250, true, Reply.ok(new BlockRun(106, 7000, 250, true, true)));
        assertEquals(-1, f.gapEndingAt(356), "answered in full: no gap");
        f.answered(0, 10, true, Reply.ok(new BlockRun(0, 1, 4, true, true)));
        f.answered(0, 10, false, Reply.ok(new BlockRun(0, 1, 4, false, false)));
        assertEquals(-1, f.gapEndingAt(10), "a lookup's answer leaves no gap");
    }

    /**
     * Many gaps in flight (a caller far ahead of its answers) keep one reservation each, up to the most a file
     * keeps; the caller's requests take them in any order, and what is left goes back in one piece each.
     */
    @Test
    void eachGapKeepsItsReservationUntilTheCallerAsksOrTheFileGivesThemBack() {
        FileState f = file();
        int n = FileState.MAX_GAP_RESERVATIONS;
        for (int i = 0; i < n; i++) {
            assertNull(f.reservationToGiveBack(), "room for reservation " + i);
            BlockRun r = f.reserveGap(1000L * i, 2, 50_000L + 1000L * i, 2 + 100);
            assertEquals(2, r.blocks());
            assertTrue(f.reservedAt(1000L * i));
        }
        assertEquals(new Extent(50_000, 2), f.reservationToGiveBack(), "full: the oldest goes back");
        assertFalse(f.reservedAt(0));
        for (int i = n - 1; i >= 1; i--) {
            BlockRun got = f.takePrealloc(1000L * i, 1);
            assertEquals(new BlockRun(1000L * i, 50_000L + 1000L * i, 1, true, true), got, "gap " + i + " from its reservation");
        }
        assertEquals(1, f.takePrealloc(1001, 5).blocks(), "the rest of a reservation, at most what it holds");
        assertNull(f.takePrealloc(1002, 5), "taken up: gone");
        List<Extent> left = f.dropPreallocations();
        // Reservations 2..n-1 have one block left each; the preallocation after the last reservation is whole.
        assertEquals(n - 2 + 1, left.size(), left.toString());
        assertTrue(left.contains(new Extent(50_000L + 1000L * (n - 1) + 2, 100)), "the preallocation");
        assertFalse(f.holdsUnmapped());
        assertEquals(List.of(), f.preallocated());
    }
}
