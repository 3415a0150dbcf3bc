package org.blockyard.benches.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.blockyard.runtime.io.ElevatorRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The elevator benchmarks on the simulated disk: the plugins take part, a run repeats byte for byte, and the
 * figures show the rules they are about (short virtual runs; no wall-clock thresholds).
 */
class ElevatorBenchesTest {
    @TempDir Path dir;

    private static void run(Object command, String... args) {
        int rc = new CommandLine(command).execute(args);
        assertEquals(0, rc, "exit code of " + String.join(" ", args));
    }

    private JsonNode json(Path p) throws Exception {
        return new ObjectMapper().readTree(p.toFile());
    }

    @Test
    public void twoStreamingRunsWithTheSameSeedWriteIdenticalTraces() throws Exception {
        for (String elevator : List.of("anticipatory", "cfq")) {
            Path a = dir.resolve(elevator + "-a.blktrace"), b = dir.resolve(elevator + "-b.blktrace");
            run(new StreamingBench(), "--elevator", elevator, "--seconds", "1", "--seed", "5", "--trace", a.toString());
            run(new StreamingBench(), "--elevator", elevator, "--seconds", "1", "--seed", "5", "--trace", b.toString());
            assertTrue(Files.size(a) > 10_000, "a trace of a second of I/O");
            assertArrayEquals(Files.readAllBytes(a), Files.readAllBytes(b), elevator + ": the traces differ");
        }
    }

    @Test
    public void twoMetadataRunsWithTheSameSeedWriteIdenticalTraces() throws Exception {
        Path a = dir.resolve("a.blktrace"), b = dir.resolve("b.blktrace");
        run(new MetadataBench(), "--seconds", "1", "--trace", a.toString());
        run(new MetadataBench(), "--seconds", "1", "--trace", b.toString());
        assertArrayEquals(Files.readAllBytes(a), Files.readAllBytes(b));
    }

    @Test
    public void streamingAllListsEveryInstalledElevatorAndAnticipationWinsTheReader() throws Exception {
        Path j = dir.resolve("s.json");
        run(new StreamingBench(), "--all", "--seconds", "2", "--json", j.toString());
        JsonNode results = json(j).get("results");
        assertEquals("deadline", results.get(0).get("elevator").asText());
        Map<String, Double> read = new java.util.HashMap<>();
        for (JsonNode e : results) read.put(e.get("elevator").asText(), e.get("read_mib_s").asDouble());
        assertEquals(Map.of("noop", 0, "deadline", 0, "anticipatory", 0, "cfq", 0, "fifo", 0).keySet(), read.keySet());
        assertTrue(read.get("anticipatory") > 3 * read.get("deadline"), read.toString());
    }

    @Test
    public void metaHelpsUnderCfqAndChangesNothingUnderDeadline() throws Exception {
        Path j = dir.resolve("m.json");
        run(new MetadataBench(), "--seconds", "3", "--json", j.toString());
        JsonNode results = json(j).get("results");
        assertEquals(2, results.size());
        for (JsonNode r : results) {
            assertTrue(r.has("files_per_s_meta") && r.has("files_per_s_plain") && r.has("meta_speedup"));
            if (r.get("elevator").asText().equals("deadline"))
                assertEquals(r.get("files_per_s_plain").asDouble(), r.get("files_per_s_meta").asDouble(),
                        "deadline gives META no precedence");
            else
                assertTrue(r.get("meta_speedup").asDouble() > 1.1, "cfq serves META first: " + r);
        }
    }

    @Test
    public void randomReadsReportTheRatioOfAnticipatoryOverDeadline() throws Exception {
        Path j = dir.resolve("r.json");
        run(new org.blockyard.benches.job.RandomReadsCommand(), "--seconds", "2", "--json", j.toString());
        JsonNode out = json(j);
        assertEquals(2, out.get("results").size());
        assertTrue(out.get("summary").get("anticipatory_over_deadline").asDouble() > 0);
    }

    @Test
    public void asSelectsAnticipatoryWhenItIsInstalledAndIsAnErrorOnABenchWhenNot() throws Exception {
        ElevatorRegistry with = BenchElevators.registerWith(ElevatorRegistry.builtIn("deadline"));
        assertEquals(new ElevatorRegistry.Selection("as", "anticipatory", false), with.select("as"));
        assertEquals("noop [deadline] anticipatory cfq fifo", with.listing("deadline"));
        ElevatorRegistry without = ElevatorRegistry.builtIn("deadline");
        assertEquals(new ElevatorRegistry.Selection("as", "deadline", true), without.select("as"));

        Path j = dir.resolve("f.json");
        // The configuration falls back (above); a benchmark asked for an elevator it does not have refuses.
        CommandLine refused = new CommandLine(new StreamingBench());
        refused.setErr(new java.io.PrintWriter(new java.io.StringWriter()));
        assertEquals(1, refused.execute("--elevator", "as", "--builtin-only", "--seconds", "1", "--json", j.toString()),
                "a BadOption, which the blockyard command line turns into exit code 2");
        run(new StreamingBench(), "--elevator", "as", "--seconds", "1", "--json", j.toString());
        JsonNode r = json(j).get("results").get(0);
        assertEquals("as", r.get("elevator_requested").asText());
        assertEquals("anticipatory", r.get("elevator").asText());
    }
}
