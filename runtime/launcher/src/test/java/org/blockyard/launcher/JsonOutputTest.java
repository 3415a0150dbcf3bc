package org.blockyard.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.Set;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.blockyard.cli.Cli;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --json -} puts one JSON document on standard output and nothing else, in the shape docs/json.md
 * describes, for an allocator bench and an I/O bench alike; {@code --json FILE} writes the same shape.
 */
class JsonOutputTest {
    @TempDir
    Path dir;

    private static final Set<String> TOP = Set.of("bench", "parameters", "results", "summary");

    /** The whole of {@code text} as one JSON value; anything after it fails. */
    private static JsonNode only(String text) throws Exception {
        ObjectMapper m = new ObjectMapper();
        try (JsonParser p = m.createParser(text)) {
            JsonNode doc = m.readTree(p);
            assertEquals(null, p.nextToken(), "nothing after the JSON document");
            return doc;
        }
    }

    /** The documented shape: bench, parameters, results (a list of rows), optional summary; snake_case names. */
    private static void assertDocumented(JsonNode doc, String bench, String... resultFields) {
        assertTrue(doc.isObject(), doc.toString());
        for (Iterator<String> it = doc.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            assertTrue(TOP.contains(f), "unknown top-level field " + f);
        }
        assertEquals(bench, doc.get("bench").asText());
        assertTrue(doc.get("parameters").isObject());
        doc.get("parameters").fieldNames().forEachRemaining(f -> assertTrue(f.matches("[a-z0-9_]+"), f));
        assertTrue(doc.get("results").isArray() && doc.get("results").size() > 0, doc.toString());
        for (JsonNode row : doc.get("results")) {
            assertTrue(row.isObject());
            row.fieldNames().forEachRemaining(f -> assertTrue(f.matches("[a-z0-9_]+"), f));
            for (String f : resultFields) assertTrue(row.has(f), f + " in " + row);
        }
        if (doc.has("summary")) assertTrue(doc.get("summary").isObject());
    }

    @Test
    void anAllocatorBenchPutsOnlyJsonOnStandardOutputAndItsTableOnStandardError() throws Exception {
        Cli.Run r = CommandLineErrorsTest.run("bench", "tiobench", "--writers", "2", "--file-size", "1MiB",
                "--policy", "reservation,global-lock", "--no-warmup", "--quiet", "--json", "-");
        assertEquals(0, r.code(), r.err());
        JsonNode doc = only(r.out());
        assertDocumented(doc, "tiobench", "policy", "writers", "allocs_per_s", "alloc_latency_us");
        assertEquals(2, doc.get("results").size());
        assertEquals(1048576, doc.get("parameters").get("file_size").asLong(), "sizes in bytes");
        assertTrue(r.err().contains("allocs_per_s"), "the table went to standard error: " + r.err());
    }

    @Test
    void anIoBenchPutsOnlyJsonOnStandardOutput() throws Exception {
        Cli.Run r = CommandLineErrorsTest.run("bench", "dio", "--offset", "0", "--length", "64KiB",
                "--elevator", "mq-deadline", "--json", "-");
        assertEquals(0, r.code(), r.err());
        JsonNode doc = only(r.out());
        assertDocumented(doc, "dio", "elevator", "requests_dispatched", "offset_bytes");
        assertEquals("deadline", doc.get("results").get(0).get("elevator").asText());
        assertEquals("mq-deadline", doc.get("parameters").get("elevator").asText());
        assertFalse(r.err().isEmpty(), "the table went to standard error");
    }

    @Test
    void outputFormatJsonPutsOnlyJsonOnStandardOutputForAnAllocatorBenchAndAnIoBench() throws Exception {
        Cli.Run extents = CommandLineErrorsTest.run("bench", "extents", "--shape", "aging,random-2m",
                "--allocator", "global-lock", "--volume-size", "512MiB", "--unit", "64KiB", "--rounds", "2",
                "--overwrite", "0.2", "--no-warmup", "--output-format", "json");
        assertEquals(0, extents.code(), extents.err());
        JsonNode doc = only(extents.out());
        assertDocumented(doc, "extents", "allocator", "shape", "score_v3_by_round", "free_extent_histogram");
        assertEquals(2, doc.get("results").size());
        assertEquals(3, doc.get("results").get(1).get("score_v3_by_round").size(), "the first fill and two rounds");
        assertTrue(extents.err().contains("free extents after random-2m"), "tables and histograms went to standard error");

        Cli.Run streaming = CommandLineErrorsTest.run("bench", "streaming", "--seconds", "2",
                "--output-format", "json");
        assertEquals(0, streaming.code(), streaming.err());
        JsonNode row = only(streaming.out()).get("results").get(0);
        assertEquals(2, row.get("read_mib_s_by_second").size());
        assertTrue(row.get("read_clat_cdf_ms").isArray());
    }

    @Test
    void aFileGetsTheSameDocumentAndStandardOutputTheTable() throws Exception {
        Path file = dir.resolve("r.json");
        Cli.Run r = CommandLineErrorsTest.run("bench", "randomreads", "--seconds", "1",
                "--json", file.toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("reads_per_s"), r.out());
        JsonNode doc = only(Files.readString(file));
        assertDocumented(doc, "randomreads", "elevator", "reads_per_s", "latency_ms_p99");
        assertTrue(doc.get("summary").get("anticipatory_over_deadline").asDouble() > 0);
    }
}
