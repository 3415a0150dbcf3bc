package org.blockyard.benches;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;

import org.junit.jupiter.api.Test;

/** The recorder reports raw and coordinated-omission-corrected percentiles, or says why it did not correct. */
class LatencyTest {
    private static final long MICRO = 1_000;

    /** 10,000 calls of 1 µs and one stall of 50 ms, in a closed loop. */
    private static Latency stalledClient() {
        Latency l = new Latency();
        for (int i = 0; i < 10_000; i++) l.record(MICRO);
        l.record(50_000 * MICRO);
        return l;
    }

    @Test
    void aClosedLoopStallHiddenInTheRawPercentilesShowsInTheCorrectedOnes() {
        Latency l = stalledClient().correctClosedLoop(10_000 * MICRO + 50_000 * MICRO, 1);
        assertEquals(1.0, l.percentileMicros(99), 0.01, "raw p99 sees one slow call in 10,001");
        // Mean interval 6 µs: the stall hid about 8,300 calls, most of them waiting for milliseconds.
        assertTrue(l.correctedPercentileMicros(99) > 10_000, "corrected p99 " + l.correctedPercentileMicros(99));
        assertTrue(l.correctedPercentileMicros(50) >= l.percentileMicros(50));
    }

    @Test
    void aPacedClientIsCorrectedWithItsIntendedInterval() {
        Latency l = new Latency();
        for (int i = 0; i < 1_000; i++) l.recordPaced(MICRO, 100 * MICRO);
        l.recordPaced(10_000 * MICRO, 100 * MICRO);
        // 10 ms at one call per 100 µs: 99 calls would have waited 100 µs to 9.9 ms.
        assertEquals(1_000 + 1 + 99, l.correctedCount());
        assertTrue(l.correctedPercentileMicros(99) > 8_000, "corrected p99 " + l.correctedPercentileMicros(99));
        assertEquals(1.0, l.percentileMicros(99), 0.01);
    }

    @Test
    void mergedClientsKeepTheirOwnCorrectionAndAPauseSaysWhyItIsNotCorrected() {
        Latency all = new Latency();
        all.merge(stalledClient().correctClosedLoop(60_000 * MICRO, 1));
        all.merge(stalledClient().correctClosedLoop(60_000 * MICRO, 1));
        Map<String, Object> s = all.summaryMicros();
        assertTrue(s.containsKey("corrected") && s.containsKey("raw"), s.toString());
        assertEquals(Latency.CLOSED_LOOP, s.get("correction"));

        Latency pause = new Latency().notCorrected("a pause, not a call");
        pause.record(5 * MICRO);
        Latency both = new Latency();
        both.merge(pause);
        assertFalse(both.isCorrected());
        assertEquals("a pause, not a call", both.summaryMicros().get("not_corrected"));
    }
}
