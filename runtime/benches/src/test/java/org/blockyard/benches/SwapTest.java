package org.blockyard.benches;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.blockyard.runtime.config.BlockyardConfig;

/** Elevators and policies switched many times while files are written: nothing lost, twice or wrong. */
class SwapTest {

    @Test
    void switchingElevatorsAndPoliciesUnderLoadLosesNothingAndIssuesNothingTwice() throws Exception {
        Map<String, Object> r = Swap.run(new Swap.Spec(1.5, 40, List.of("noop", "deadline"),
                List.of("no-reservation", "reservation"), 2, 1L << 20, List.of()), BlockyardConfig.load(), null);
        assertEquals(80L, r.get("swaps"));
        assertTrue((Long) r.get("requests_submitted") > 0, "requests went through the elevator: " + r);
        assertEquals(r.get("requests_submitted"), r.get("requests_completed"), "every request completed: " + r);
        assertEquals(0L, r.get("requests_lost"));
        assertEquals(0L, r.get("requests_issued_twice"));
        assertEquals(2L << 20, r.get("bytes_verified"));
        assertEquals(0L, r.get("verify_errors"), "the files read back as written");
        assertEquals("reservation", r.get("policy"));
        assertEquals("deadline", r.get("elevator"));
    }
}
