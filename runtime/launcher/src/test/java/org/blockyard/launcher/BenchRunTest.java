package org.blockyard.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.blockyard.cli.Cli;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code bench run} as a user runs it (the whole command line, in this JVM, as {@link CommandLineErrorsTest} runs it): the JSON in the shape docs/json.md gives, and every wrong value in a
 * job file or an option one line on standard error naming the key, the value and what is allowed, exit code 2.
 */
class BenchRunTest {
    @TempDir
    static Path dir;

    static Cli.Run run(String... args) {
        return CommandLineErrorsTest.run(args);
    }

    static Path job(String name, String text) {
        try {
            return Files.writeString(dir.resolve(name), text);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    static Path image;

    @BeforeAll
    static void files() throws Exception {
        image = Files.writeString(dir.resolve("precious.db"), "data that must survive");
    }

    static Stream<Arguments> wrongValues() {
        String one = "jobs = [ { name = a, size = 1MiB } ]\n";
        return Stream.of(
                wrong("here it is bs", "4k", job("typo.conf", "jobs = [ { name = a, blocksize = 4k, size = 1MiB } ]")),
                wrong("did you mean device", "mem", job("gtypo.conf", "global { devcie = mem }\n" + one)),
                wrong("settings", "{...}", job("top.conf", "settings { }\n" + one)),
                wrong("a.bs", "4q", job("bs.conf", "jobs = [ { name = a, bs = 4q, size = 1MiB } ]")),
                wrong("a.rw", "randomread", job("rw.conf", "jobs = [ { name = a, rw = randomread, size = 1MiB } ]")),
                wrong("a.bssplit", "4k/50:64k/40", job("split.conf", "jobs = [ { name = a, bssplit = \"4k/50:64k/40\", size = 1MiB } ]")),
                wrong("a.nrfiles", "2", job("engine.conf", "jobs = [ { name = a, nrfiles = 2, size = 1MiB } ]")),
                wrong("a.device", "mem", job("where.conf", "jobs = [ { name = a, device = mem, size = 1MiB } ]")),
                wrong("name", "a", job("nosize.conf", "jobs = [ { name = a, rw = read } ]")),
                wrong("a.runtime", "ten", job("time.conf", "jobs = [ { name = a, runtime = ten } ]")),
                wrong("a.fill_low", "0.95", job("fill.conf", "jobs = [ { name = a, ioengine = extents, size = 1MiB, fill_high = 0.9, fill_low = 0.95 } ]")),
                wrong("JOBFILE", "missing.conf", dir.resolve("missing.conf").toString()),
                wrong("JOBFILE", "bad.conf", job("bad.conf", "jobs = [ { name = a\n")),
                wrong("--blocksize", "4k", "--rw=read", "--size=1MiB", "--blocksize=4k"),
                wrong("--iodepth", "0", "--rw=read", "--size=1MiB", "--iodepth=0"),
                wrong("--time_based", "maybe", "--rw=read", "--runtime=1s", "--time_based=maybe"),
                wrong("--device", "disk", "--rw=read", "--size=1MiB", "--device", "disk"),
                wrong("--elevator", "foo", "--rw=read", "--size=1MiB", "--elevator", "foo"),
                wrong("--status-interval", "-1", "--rw=read", "--size=1MiB", "--status-interval", "-1"),
                wrong("--size", "", "--rw=read"),
                wrong("a.bs", "1MiB", job("big.conf", "jobs = [ { name = a, bs = 1m, size = 4MiB } ]")),
                wrong("a.size", "2097152", "--device=mem", "--device_size=1MiB", job("beyond.conf", "jobs = [ { name = a, size = 2MiB } ]").toString()),
                wrong("filename", "precious.db", "--device=file", "--filename=" + image, "--rw=write", "--size=4k"));
    }

    private static Arguments wrong(String key, String value, Object... args) {
        List<String> a = new java.util.ArrayList<>(List.of("bench", "run"));
        for (Object o : args) a.add(o.toString());
        return Arguments.of(a, key, value);
    }

    /** The check every command's wrong values pass: exit code 2, one line naming the key and the value, no trace. */
    @ParameterizedTest(name = "{1}")
    @MethodSource("wrongValues")
    void aWrongValueIsOneLineNamingTheKeyAndExitCodeTwo(List<String> args, String key, String value) {
        new CommandLineErrorsTest().aWrongValueIsOneLineNamingTheOptionAndExitCodeTwo(args, key, value);
    }

    @Test
    void aRefusedWriteLeavesTheFileAsItWas() throws Exception {
        run("bench", "run", "--device=file", "--filename=" + image, "--rw=write", "--size=4k");
        assertEquals("data that must survive", Files.readString(image));
    }

    private static final Set<String> TOP = Set.of("bench", "parameters", "results", "summary");

    private static JsonNode only(String text) throws Exception {
        ObjectMapper m = new ObjectMapper();
        try (JsonParser p = m.createParser(text)) {
            JsonNode doc = m.readTree(p);
            assertNull(p.nextToken(), "nothing after the JSON document");
            return doc;
        }
    }

    @Test
    void theJsonAloneGoesToStandardOutputInTheDocumentedShape() throws Exception {
        Path file = job("two.conf", """
                global { device = sim, elevator = [noop, deadline] }
                jobs = [
                  { name = reader, rw = randread, size = 256k }
                  { name = files, ioengine = files, size = 1MiB, numjobs = 2 }
                ]
                """);
        Cli.Run r = run("bench", "run", file.toString(), "--quiet", "--json", "-", "--volume_size=128MiB");
        assertEquals(0, r.code(), r.err());
        assertEquals("", r.err(), "--quiet: nothing on standard error");
        JsonNode doc = only(r.out());
        doc.fieldNames().forEachRemaining(f -> assertTrue(TOP.contains(f), "top-level field " + f));
        assertEquals("run", doc.get("bench").asText());
        JsonNode p = doc.get("parameters");
        assertEquals(file.toString(), p.get("job_file").asText());
        assertEquals(134217728, p.get("volume_size").asLong(), "sizes in bytes");
        assertEquals(List.of("noop", "deadline"), List.of(p.get("elevator").get(0).asText(), p.get("elevator").get(1).asText()));
        assertEquals("randread", p.get("jobs").get(0).get("rw").asText());
        assertEquals(262144, p.get("jobs").get(0).get("size").asLong());
        assertFalse(p.has("status_interval") || p.has("json") || p.has("quiet"), "output options are not parameters");
        JsonNode results = doc.get("results");
        assertEquals(6, results.size(), "per elevator: two jobs and the total");
        for (JsonNode row : results) {
            row.fieldNames().forEachRemaining(f -> assertTrue(f.matches("[a-z0-9_]+"), f));
            assertTrue(row.has("job") && row.has("elevator") && row.has("device"), row.toString());
        }
        JsonNode reader = results.get(0), files = results.get(1), total = results.get(2);
        assertEquals("noop", reader.get("elevator").asText());
        for (String f : List.of("ios", "iops", "mib_s", "bytes", "reads", "writes", "merged", "depth_max", "request_bytes_mean"))
            assertTrue(reader.get(f).isNumber(), f + " in " + reader);
        for (String part : List.of("raw", "corrected"))
            for (String q : List.of("p50", "p90", "p99", "p999", "p9999", "max"))
                assertTrue(reader.get("clat_us").get(part).get(q).isNumber(), part + "." + q);
        assertFalse(reader.has("slat_us"), "no hand-over on the virtual clock");
        for (String f : List.of("calls", "calls_per_s", "mib_s", "files_opened", "extents_per_file", "enospc"))
            assertTrue(files.get(f).isNumber(), f + " in " + files);
        assertTrue(files.get("lat_us").get("corrected").has("p99"), files.toString());
        assertEquals("total", total.get("job").asText());
        for (String f : List.of("ios", "submissions", "merges", "seeks", "device_time_ms", "volume_used_bytes", "cpu_s", "wall_s"))
            assertTrue(total.get(f).isNumber(), f + " in " + total);
        assertTrue(doc.get("summary").get("cpu_s").isNumber());
    }
}
