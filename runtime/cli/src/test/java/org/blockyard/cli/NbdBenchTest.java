package org.blockyard.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bench nbd} run tiny (a second a job, two jobs): the JSON parses, every job has a row for each server,
 * both servers moved bytes and were charged CPU, serve exited 0 and the volume is clean. Skipped without fio or
 * nbdkit (failed with CI set, where .ci/run installs them).
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class NbdBenchTest {
    @TempDir
    Path dir;

    private static void assumeInstalled(String tool) {
        boolean found = false;
        for (String d : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
            if (!d.isEmpty() && Files.isExecutable(Path.of(d, tool))) found = true;
        if (!found && System.getenv("CI") != null) throw new AssertionError(tool + " is not installed, and CI is set");
        assumeTrue(found, tool + " is not installed");
    }

    @Test
    void bothServersMoveBytesAndTheReportParses() throws Exception {
        assumeInstalled("fio");
        assumeInstalled("nbdkit");
        Path json = dir.resolve("nbd.json");
        Cli.Run r = Cli.run(Duration.ofSeconds(200), "bench", "nbd", "--size", "16MiB", "--runtime", "1", "--iodepth", "8",
                "--jobs", "randwrite,read", "--dir", dir.toString(), "--json", json.toString());
        assertEquals(0, r.code(), r.out() + r.err());
        assertTrue(r.out().contains("randwrite: blockyard/nbdkit IOPS"), r.out());
        JsonNode doc = new ObjectMapper().readTree(json.toFile());
        assertEquals("nbd", doc.path("bench").asText());
        assertEquals(8, doc.path("parameters").path("iodepth").asInt());
        Set<String> seen = new HashSet<>();
        for (JsonNode row : doc.path("results")) {
            String key = row.path("job").asText() + "/" + row.path("server").asText();
            assertTrue(seen.add(key), "one row each: " + key);
            assertTrue(row.path("gib_moved").asDouble() > 0, key + " moved bytes: " + row);
            assertTrue(row.path("iops").asDouble() > 0, key + ": " + row);
            assertTrue(row.path("clat_p99_us").asDouble() >= row.path("clat_p50_us").asDouble(), key + ": " + row);
            assertTrue(row.path("server_cpu_s").asDouble() > 0, key + " charged its server CPU: " + row);
        }
        assertEquals(Set.of("fill/blockyard", "fill/nbdkit", "randwrite/blockyard", "randwrite/nbdkit", "read/blockyard",
                "read/nbdkit"), seen);
        assertTrue(doc.path("summary").path("fsck_clean").asBoolean(), doc.toString());
        assertEquals(0, doc.path("summary").path("blockyard_exit_code").asInt(), doc.toString());
        assertTrue(doc.path("summary").path("randwrite_blockyard_vs_nbdkit").path("iops").asDouble() > 0, doc.toString());
        try (var left = Files.list(dir)) {
            assertEquals(Set.of(json), Set.copyOf(left.toList()), "the bench's directory is removed, servers stopped");
        }
    }
}
