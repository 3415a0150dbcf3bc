package org.blockyard.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.blockyard.cli.Cli;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The benches name every installed plugin on the whole command line, the host's {@code bench swap} (with its
 * bundle events) included: the shipped plugins the churn does not bring are registered with its engine
 * directly, and an unknown name is exit code 2 with one line listing them all.
 */
class BenchPluginNamesTest {
    @TempDir
    Path dir;

    private static final Duration LIMIT = Duration.ofSeconds(120);

    @Test
    void anUnknownElevatorIsOneLineListingEveryInstalledOne() {
        Cli.Run r = assertTimeoutPreemptively(LIMIT, () -> CommandLineErrorsTest.run("bench", "run",
                "--rw=read", "--size=4k", "--device=sim", "--elevator", "sstf"));
        assertEquals(2, r.code());
        assertEquals("", r.out());
        assertEquals("blockyard bench run: --elevator 'sstf': installed are noop, deadline, anticipatory, cfq, fifo"
                + " (a plugin of your own: --deploy DIR)", r.err().strip());
    }

    @Test
    void theHostsSwapRunsShippedPluginsItsBundleEventsDoNotBring() throws Exception {
        Path json = dir.resolve("swap.json");
        Cli.Run r = assertTimeoutPreemptively(LIMIT, () -> CommandLineErrorsTest.run("bench", "swap",
                "--elevators", "noop,cfq", "--policies", "reservation,mballoc", "--seconds", "1", "--swaps", "12",
                "--writers", "1", "--file-size", "1MiB", "--no-warmup", "--quiet", "--json", json.toString()));
        assertEquals(0, r.code(), r.err());
        JsonNode row = new ObjectMapper().readTree(json.toFile()).get("results").get(0);
        assertEquals(12, row.get("bundle_events").asLong(), "fifo and no-reservation came and went as bundles");
        assertEquals("cfq", row.get("elevator").asText(), "the queue ran cfq at the end, not its default");
        assertEquals("mballoc", row.get("policy").asText(), "the allocator ran mballoc at the end, not its default");
        assertEquals(0, row.get("requests_lost").asLong());
        assertTrue(row.get("bytes_verified").asLong() > 0 && row.get("verify_errors").asLong() == 0, row.toString());
    }
}
