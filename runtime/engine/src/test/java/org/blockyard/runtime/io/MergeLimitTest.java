package org.blockyard.runtime.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.blockyard.api.io.IoRequest;
import org.junit.jupiter.api.Test;

/** Merges and the coalesces they lead to never build a request longer than {@code max_sectors}. */
class MergeLimitTest {
    private static final long MS = 1_000_000L;

    @Test
    void aBackMergeThatClosesAGapDoesNotCoalescePastMaxSectors() {
        Simulation sim = new Simulation(QueueSetup.defaults(), new ConstantLatencyDevice(1 << 20, MS));
        int max = sim.queue().limits().maxSectors();
        // [0, max/2) and [max/2 + 8, max + 8) queued; then [max/2, max/2 + 8) joins the first at its back, and
        // the two would make max + 8 sectors: they stay two requests.
        sim.submit(IoRequest.write(0, 0, max / 2, 1), (c, e) -> {});
        sim.submit(IoRequest.write(1, max / 2 + 8, max / 2, 1), (c, e) -> {});
        sim.submit(IoRequest.write(2, max / 2, 8, 1), (c, e) -> {});
        sim.run();
        assertEquals(1, sim.stats().backMerges());
        assertEquals(0, sim.stats().coalesced(), sim.stats().toString());
        assertEquals(2, sim.stats().requestsDispatched());
        assertTrue(sim.stats().maxRequestSectors() <= max, sim.stats().toString());
        assertEquals(max + 8, sim.stats().sectorsDispatched());
    }
}
