package org.blockyard.benches;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code bench crash} for three kills on a one-group volume, one round with its journal damaged on purpose:
 * it ends in time, its JSON has every figure, and nothing acknowledged was lost, undone or read back wrong
 * but for what a damaged journal explains.
 */
class CrashBenchTest {

    @Test
    void threeKillsOneWithADamagedJournalEndInTimeAndLoseNothingAcknowledged(@TempDir Path dir) throws Exception {
        Path out = dir.resolve("crash.json");
        int rc = assertTimeoutPreemptively(Duration.ofSeconds(60), () -> new CommandLine(new CrashBenchCommand())
                .execute("--kills", "3", "--volume-size", "128MiB", "--max-kill-ms", "700", "--corrupt-every", "2",
                        "--seed", "3", "--child-timeout", "30", "--check-timeout", "30", "-q", "--json", out.toString()));
        Map<String, Object> r = results(out);
        for (String field : List.of("kills", "acknowledged", "lost_acknowledged_allocations", "undone_acknowledged_frees",
                "wrong_contents", "blocks_owned_twice", "fsck_problems", "stopped_writers", "stopped_writer_reasons",
                "silent_children", "child_failures", "damage_reported", "damage_not_reported", "lost_with_report",
                "corrupt_rounds", "corrupt_skipped", "after_unreported_damage", "blocks_checked", "released_extents",
                "recovery_ms"))
            assertTrue(r.containsKey(field), field + " in " + r);
        assertEquals(3, n(r, "kills"), "every round ran: " + r);
        assertTrue(n(r, "acknowledged") > 0, "the children acknowledged calls: " + r);
        assertTrue(n(r, "blocks_checked") > 0, "data files were read back: " + r);
        assertEquals(0, n(r, "silent_children"), r.toString());
        assertEquals(0, n(r, "child_failures"), r.toString());
        assertEquals(0, n(r, "stopped_writers"), r.toString());
        // Round 2 (or 3, when round 2's log held fewer than two transactions) had its journal damaged.
        assertTrue(n(r, "corrupt_rounds") + n(r, "corrupt_skipped") >= 1, r.toString());
        assertEquals(n(r, "corrupt_rounds"), n(r, "damage_reported") + n(r, "damage_not_reported"), r.toString());
        // Whatever went missing went with the damage: silently after damage not reported, else with the report.
        @SuppressWarnings("unchecked")
        Map<String, Object> after = (Map<String, Object>) r.get("after_unreported_damage");
        assertEquals(n(after, "lost"), n(r, "lost_acknowledged_allocations"), r.toString());
        assertEquals(n(after, "undone"), n(r, "undone_acknowledged_frees"), r.toString());
        assertEquals(n(after, "wrong"), n(r, "wrong_contents"), r.toString());
        long failures = n(r, "lost_acknowledged_allocations") + n(r, "undone_acknowledged_frees") + n(r, "wrong_contents")
                + n(r, "blocks_owned_twice") + n(r, "fsck_problems") + n(r, "damage_not_reported") + n(r, "unexpected_damage")
                + n(r, "open_failures") + n(r, "hung_or_failed_checks");
        assertEquals(failures == 0 ? 0 : 1, rc, "the exit code says whether anything failed: " + r);
    }

    /**
     * With sessions: the owners' calls go through loans; the kills come with blocks on loan and not handed out,
     * recovery frees them (nothing no one holds is left used), and nothing acknowledged is lost or undone.
     */
    @Test
    void killsWithLoansOutLoseNothingAcknowledgedAndRecoveryFreesTheLoans(@TempDir Path dir) throws Exception {
        Path out = dir.resolve("crash-sessions.json");
        int rc = assertTimeoutPreemptively(Duration.ofSeconds(90), () -> new CommandLine(new CrashBenchCommand())
                .execute("--kills", "3", "--volume-size", "128MiB", "--max-kill-ms", "700", "--corrupt-every", "0",
                        "--sessions", "--seed", "3", "--child-timeout", "30", "--check-timeout", "30", "-q", "--json",
                        out.toString()));
        Map<String, Object> r = results(out);
        assertEquals(3, n(r, "kills"), r.toString());
        assertEquals(Boolean.TRUE, r.get("sessions"));
        assertTrue(n(r, "rounds_with_loans_out") >= 1, "a kill came with blocks on loan: " + r);
        assertTrue(n(r, "recovery_freed_blocks") > 0, "recovery freed what was on loan: " + r);
        assertTrue(n(r, "released_extents") > 0, r.toString());
        for (String zero : List.of("lost_acknowledged_allocations", "undone_acknowledged_frees", "wrong_contents",
                "blocks_owned_twice", "fsck_problems", "not_freed_by_recovery", "stopped_writers", "silent_children",
                "child_failures", "hung_or_failed_checks", "open_failures"))
            assertEquals(0, n(r, zero), zero + ": " + r);
        assertEquals(0, rc, r.toString());
    }

    @Test
    void aBlockSaysWhichWriteItComesFrom() {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(2 * 4096);
        CrashPattern.fill(b, 4096, "k1-f0d2", 7, 3);
        CrashPattern.fill(b, 4096, "k1-f0d2", 8, 4);
        assertEquals(3, CrashPattern.generation(b, 0, 4096, "k1-f0d2", 7));
        assertEquals(4, CrashPattern.generation(b, 4096, 4096, "k1-f0d2", 8));
        assertEquals(CrashPattern.FOREIGN, CrashPattern.generation(b, 0, 4096, "k1-f0d2", 8), "another block's");
        assertEquals(CrashPattern.FOREIGN, CrashPattern.generation(b, 0, 4096, "k1-f1d2", 7), "another file's");
        b.put(100, (byte) (b.get(100) ^ 1));
        assertEquals(CrashPattern.TORN, CrashPattern.generation(b, 0, 4096, "k1-f0d2", 7));
        assertEquals(0, CrashPattern.generation(java.nio.ByteBuffer.allocate(4096), 0, 4096, "k1-f0d2", 7), "zeros");
        b.putInt(4096, 0x12345678);
        assertEquals(CrashPattern.GARBAGE, CrashPattern.generation(b, 4096, 4096, "k1-f0d2", 8));
    }

    @Test
    void aWrongValueIsRefusedInOneLine() {
        CommandLine cl = new CommandLine(new CrashBenchCommand());
        java.io.StringWriter err = new java.io.StringWriter();
        cl.setErr(new java.io.PrintWriter(err));
        cl.setExecutionExceptionHandler((e, line, parsed) -> {
            line.getErr().println(e.getMessage());
            return 2;
        });
        assertEquals(2, cl.execute("--corrupt-every", "-1"));
        assertEquals("--corrupt-every '-1': must be at least 0", err.toString().trim());
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> results(Path json) throws Exception {
        Map<String, Object> doc = new ObjectMapper().readValue(Files.readString(json), Map.class);
        return ((List<Map<String, Object>>) doc.get("results")).get(0);
    }

    private static long n(Map<String, Object> r, String key) {
        return ((Number) r.get(key)).longValue();
    }
}
