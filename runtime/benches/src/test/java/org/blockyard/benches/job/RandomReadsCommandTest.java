package org.blockyard.benches.job;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.blockyard.benches.BadOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code bench randomreads} is the shipped job file {@code config/jobs/randomreads.conf}: the class-path copy is
 * that file, the alias reports what {@code bench run} of the file reports (on the virtual clock, to the figure), its
 * options land on the file's keys, and one that contradicts the file is refused.
 */
class RandomReadsCommandTest {
    @TempDir
    Path dir;

    private static final Path SHIPPED = Path.of("../../config/jobs/randomreads.conf");

    private JsonNode run(Object command, String... args) throws Exception {
        Path json = dir.resolve("out-" + System.nanoTime() + ".json");
        List<String> a = new ArrayList<>(List.of(args));
        a.add("--json");
        a.add(json.toString());
        int code = new CommandLine(command).setOut(new PrintWriter(Writer.nullWriter())).execute(a.toArray(String[]::new));
        assertEquals(0, code, "exit code of " + a);
        return new ObjectMapper().readTree(json.toFile());
    }

    @Test
    void theClassPathCopyIsTheFileInConfigJobs() throws Exception {
        try (var in = Workload.class.getResourceAsStream("jobs/" + RandomReadsCommand.JOB_FILE)) {
            assertTrue(in != null, "the job file is on the class path");
            assertArrayEquals(Files.readAllBytes(SHIPPED), in.readAllBytes());
        }
    }

    @Test
    void theAliasReportsWhatBenchRunOfTheJobFileReports() throws Exception {
        JsonNode alias = run(new RandomReadsCommand(), "--seconds", "1", "--readers", "4", "--think-us", "200", "--seed", "3");
        JsonNode file = run(new RunCommand(), SHIPPED.toString(), "--quiet", "--runtime=1s", "--numjobs=4", "--thinktime=200us",
                "--seed", "3");
        List<JsonNode> readers = new ArrayList<>();
        for (JsonNode r : file.get("results")) if (r.get("job").asText().equals("readers")) readers.add(r);
        JsonNode rows = alias.get("results");
        assertEquals(2, rows.size(), "the file's two elevators");
        assertEquals(readers.size(), rows.size());
        for (int i = 0; i < rows.size(); i++) {
            JsonNode a = rows.get(i), f = readers.get(i);
            assertEquals(f.get("elevator").asText(), a.get("elevator_requested").asText());
            assertEquals(Math.round(f.get("iops").asDouble() * 100) / 100.0, a.get("reads_per_s").asDouble(), a.toString());
            assertEquals(f.get("clat_us").get("raw").get("p99").asDouble() / 1000, a.get("latency_ms_p99").asDouble(), 0.01);
            assertTrue(a.get("reads_per_s").asDouble() > 0 && a.get("seeks").asLong() > 0, a.toString());
        }
        assertEquals(List.of("deadline", "anticipatory"), List.of(rows.get(0).get("elevator").asText(), rows.get(1).get("elevator").asText()));
        JsonNode p = alias.get("parameters");
        assertEquals(1, p.get("seconds").asLong());
        assertEquals(4, p.get("readers").asInt());
        assertEquals(200, p.get("think_us").asLong());
        assertEquals(3, p.get("seed").asLong());
        assertEquals("config/jobs/randomreads.conf", p.get("job_file").asText());
        assertEquals(4, p.get("jobs").get(0).get("numjobs").asInt(), "--readers is numjobs");
        assertEquals(200.0, p.get("jobs").get(0).get("thinktime_us").asDouble(), "--think-us is thinktime");
        assertTrue(alias.get("summary").get("anticipatory_over_deadline").asDouble() > 0);
    }

    @Test
    void theSpanIsTheJobsSizeAndOneElevatorRunsAlone() throws Exception {
        JsonNode alias = run(new RandomReadsCommand(), "--seconds", "1", "--readers", "2", "--span-percent", "10",
                "--elevator", "noop");
        assertEquals(1, alias.get("results").size());
        assertEquals("noop", alias.get("results").get(0).get("elevator").asText());
        long size = alias.get("parameters").get("jobs").get(0).get("size").asLong();
        assertEquals(10.0, alias.get("parameters").get("span_percent").asDouble(), 0.01);
        assertEquals(0, size % 4096, "whole blocks");
        assertTrue(size > 190_000_000L && size < 210_000_000L, "a tenth of the 1.88 GiB disk: " + size);
    }

    @Test
    void anOptionThatContradictsTheJobFileIsRefusedNamingIt() {
        BadOption mem = assertThrows(BadOption.class, () -> parsed("--device", "mem").call());
        assertTrue(mem.getMessage().contains("--device") && mem.getMessage().contains("mem")
                && mem.getMessage().contains("randomreads.conf runs on device = sim"), mem.getMessage());
        BadOption both = assertThrows(BadOption.class, () -> parsed("--all", "--elevator", "noop").call());
        assertTrue(both.getMessage().contains("--all"), both.getMessage());
        BadOption seconds = assertThrows(BadOption.class, () -> parsed("--seconds", "0").call());
        assertTrue(seconds.getMessage().contains("--seconds"), seconds.getMessage());
    }

    private static RandomReadsCommand parsed(String... args) {
        RandomReadsCommand c = new RandomReadsCommand();
        new CommandLine(c).parseArgs(args);
        return c;
    }
}
