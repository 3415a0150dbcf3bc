package org.blockyard.benches;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
 * {@code bench extents --volume}: the blockyard rows run on a fresh durable volume each, the session row through
 * sessions over loans; the journal's counts are in the rows, the image is gone after the run, and an image that
 * exists is refused in one line.
 */
class ExtentsVolumeTest {

    @Test
    void theBlockyardRowsRunOnAFreshDurableVolumeEach(@TempDir Path dir) throws Exception {
        Path image = dir.resolve("ext.img"), out = dir.resolve("extents.json");
        int rc = assertTimeoutPreemptively(Duration.ofSeconds(120), () -> new CommandLine(new ExtentsCommand())
                .execute("--shape", "random-64k", "--allocator", "blockyard,blockyard-session", "--volume",
                        image.toString(), "--volume-size", "128MiB", "--unit", "4KiB", "--fill", "0.3", "--overwrite",
                        "0.1", "--clients", "2", "--no-warmup", "--quiet", "--json", out.toString()));
        assertEquals(0, rc);
        assertFalse(Files.exists(image), "each row's volume is deleted after it");
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> rows = (List<Map<String, Object>>) new ObjectMapper()
                .readValue(Files.readString(out), Map.class).get("results");
        assertEquals(List.of("blockyard-volume", "blockyard-session-volume"),
                rows.stream().map(r -> r.get("allocator")).toList());
        for (Map<String, Object> r : rows) {
            long allocations = ((Number) r.get("allocations")).longValue();
            long transactions = ((Number) r.get("journal_transactions")).longValue();
            assertTrue(allocations > 0 && transactions > 0, r.toString());
            assertTrue(((Number) r.get("allocations_per_transaction")).doubleValue() > 0, r.toString());
        }
    }

    @Test
    void anImageThatExistsIsRefusedInOneLine(@TempDir Path dir) throws Exception {
        Path image = Files.createFile(dir.resolve("there.img"));
        CommandLine cl = new CommandLine(new ExtentsCommand());
        java.io.StringWriter err = new java.io.StringWriter();
        cl.setErr(new java.io.PrintWriter(err));
        cl.setExecutionExceptionHandler((e, line, parsed) -> {
            line.getErr().println(e.getMessage());
            return 2;
        });
        assertEquals(2, cl.execute("--volume", image.toString()));
        assertEquals("--volume '" + image + "': must not exist: each durable row makes a fresh volume there",
                err.toString().trim());
        assertTrue(Files.exists(image), "left as it was");
    }
}
