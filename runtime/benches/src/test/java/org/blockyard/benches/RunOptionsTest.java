package org.blockyard.benches;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** The measuring loop every allocator benchmark runs: warm-ups first, then the policies in rounds. */
class RunOptionsTest {

    private static RunOptions options(boolean warmup, int runs) {
        RunOptions o = new RunOptions();
        o.warmup = warmup;
        o.runs = runs;
        o.quiet = true;
        return o;
    }

    @Test
    void everyPolicyIsWarmedUpBeforeAnyIsMeasuredAndTheRunsInterleave() {
        List<String> order = new ArrayList<>();
        List<Map<String, Object>> rows = options(true, 3).measure(List.of("a", " b"), p -> {
            order.add(p);
            Map<String, Object> row = Report.row();
            row.put("policy", p);
            row.put("n", (double) order.size());
            return row;
        });
        assertEquals(List.of("a", "b", "a", "b", "a", "b", "a", "b"), order);
        assertEquals(2, rows.size());
        assertEquals("a", rows.get(0).get("policy"));
        assertEquals(5.0, rows.get(0).get("n"), "a's measured runs were calls 3, 5 and 7: median 5");
        assertEquals(6.0, rows.get(1).get("n"), "b's were 4, 6 and 8");
    }

    @Test
    void warmUpRoundsComeFirstAndEveryRunsRateIsKept() {
        List<String> order = new ArrayList<>();
        RunOptions o = options(true, 3);
        o.warmupRuns = 2;
        List<Map<String, Object>> rows = o.measure(List.of("a", "b"), p -> {
            order.add(p);
            Map<String, Object> row = Report.row();
            row.put("policy", p);
            row.put("allocs_per_s", (double) order.size());
            row.put("messages", 7L);
            return row;
        });
        assertEquals(List.of("a", "b", "a", "b", "a", "b", "a", "b", "a", "b"), order);
        assertEquals(7.0, rows.get(0).get("allocs_per_s"), "a's measured runs were calls 5, 7 and 9");
        @SuppressWarnings("unchecked")
        Map<String, Object> perRun = (Map<String, Object>) rows.get(0).get("per_run");
        assertEquals(List.of(5.0, 7.0, 9.0), perRun.get("allocs_per_s"));
        assertFalse(perRun.containsKey("messages"), "counts are not rates");
    }

    @Test
    void warmUpRunsBelowOneAreRefused() {
        RunOptions o = options(true, 1);
        o.warmupRuns = 0;
        assertThrows(BadOption.class, () -> o.measure(List.of("a"), p -> Report.row()));
    }

    @Test
    void withoutWarmUpOneRunEach() {
        List<String> order = new ArrayList<>();
        options(false, 1).measure(List.of("x", "y"), p -> {
            order.add(p);
            return Report.row();
        });
        assertEquals(List.of("x", "y"), order);
    }
}
