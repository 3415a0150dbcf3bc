package org.blockyard.benches;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import com.typesafe.config.Config;
import org.junit.jupiter.api.Test;

import org.blockyard.runtime.config.BlockyardConfig;

/** The stall bench at a tiny size: every call is counted, and the corrected latencies never hide a stall. */
class StallTest {
    private static final Config CONFIG = BlockyardConfig.load();
    /** 2 clients of 2,000 calls, one search past 200 windows per 10 client calls, 8,192-block groups. */
    private static final Stall.Spec SPEC = new Stall.Spec(2, 2_000, 10, 0, 200, 8192, 1, 512, 7, 10_000);

    @Test
    void everyAllocatorCountsEveryCallAndCorrectedPercentilesAreNeverBelowRawOnes() {
        for (String allocator : List.of(Stall.ACTORS, Stall.GLOBAL_LOCK, Stall.GROUP_LOCKS)) {
            Map<String, Object> row = Stall.run(SPEC, allocator, CONFIG);
            assertEquals(4_000L, row.get("client_calls"), allocator + ": " + row);
            assertTrue((Long) row.get("victim_searches") >= 1, allocator + " victim searched: " + row);
            assertTrue((Long) row.get("victim_searches") <= 4_000 / 10 + 1, allocator + " at most one search per permit");
            for (String p : List.of("p50", "p90", "p99", "p999", "max")) {
                double raw = (Double) Report.get(row, "client_latency_us.raw." + p);
                double corrected = (Double) Report.get(row, "client_latency_us.corrected." + p);
                assertTrue(corrected >= raw, allocator + " " + p + ": corrected " + corrected + " < raw " + raw);
            }
        }
    }

    @Test
    void theLockSidesCorrectionAddsTheCallsItsStallsHeldBack() {
        Map<String, Object> row = Stall.run(SPEC, Stall.GLOBAL_LOCK, CONFIG);
        // Behind the lock every due search runs (the last may be left when the clients end first).
        long searches = (Long) row.get("victim_searches");
        assertTrue(searches == 400 || searches == 399, "one search per 10 client calls: " + row);
        // Every search holds the lock while both clients wait, far longer than their mean interval.
        assertTrue((Long) Report.get(row, "client_latency_us.calls_added") > 0, row.toString());
        double longestWait = (Double) Report.get(row, "client_latency_us.raw.max");
        // p99, not p99.9: of 4,000 raw calls the p99.9 is the fourth longest, already a stall, and the
        // corrected histogram's added calls can put its p99.9 just below that (1,371 against 1,389 µs once).
        double correctedP99 = (Double) Report.get(row, "client_latency_us.corrected.p99");
        assertTrue(correctedP99 > (Double) Report.get(row, "client_latency_us.raw.p99"),
                "the corrected p99 shows more of the stalls than the raw one: " + row);
        assertTrue((Double) Report.get(row, "client_latency_us.corrected.p999") <= longestWait,
                "no corrected call waits longer than the longest stall");
    }

    /**
     * The common correction is HdrHistogram's at the given interval over the raw samples: each sample of
     * {@code v} adds one call per interval below it. A recorded stall of 1 ms at 10 us adds 99 calls.
     */
    @Test
    @SuppressWarnings("unchecked")
    void theCommonCorrectionAddsOneCallPerIntervalOfEachStall() {
        Latency l = new Latency();
        for (int i = 0; i < 999; i++) l.record(1_000);
        l.record(1_000_000);
        Map<String, Object> at10 = l.correctedAtMicros(10_000);
        assertEquals(99L, at10.get("calls_added"));
        assertEquals(10.0, at10.get("expected_interval_us"));
        // 1,099 samples: the 100 from the stall (1 ms down to 10 us) are the slowest 9.1%.
        assertTrue((Double) at10.get("p99") > 100, at10.toString());
        assertTrue((Double) l.correctedAtMicros(1_000_000).get("p99") < 2, "at 1 ms nothing is added below the stall");

        Map<String, Object> row = Stall.run(SPEC, Stall.GLOBAL_LOCK, CONFIG);
        Map<String, Object> common = (Map<String, Object>) row.get("client_latency_common_us");
        assertEquals(10.0, common.get("expected_interval_us"), row.toString());
        assertTrue((Double) common.get("p999") >= (Double) Report.get(row, "client_latency_us.raw.p999"), row.toString());
    }

    @Test
    void aSpecThatCannotFitItsStretchIsRefused() {
        try {
            new Stall.Spec(1, 1, 100, 0, 2000, 8192, 1, 512, 1, 0);
        } catch (IllegalArgumentException expected) {
            assertTrue(expected.getMessage().contains("--blocks-per-group"), expected.getMessage());
            return;
        }
        throw new AssertionError("a stretch of 2000 slides does not fit 8192 blocks");
    }
}
