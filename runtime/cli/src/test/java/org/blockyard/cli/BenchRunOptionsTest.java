package org.blockyard.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code bench run JOBFILE --KEY=VALUE}: an option replaces the key wherever the file sets it (global and every
 * job), and it is checked on its own, so a wrong one is an error even when every job of the file sets the key
 * itself (docs/jobs.md).
 */
class BenchRunOptionsTest {
    @TempDir
    Path dir;

    private Path job(String name, String text) throws IOException {
        return Files.writeString(dir.resolve(name), text);
    }

    @Test
    void aWrongOptionIsAnErrorWhereTheJobSetsTheKeyItself() throws IOException {
        Path file = job("mix.conf", """
                global { device = sim, elevator = noop }
                jobs = [ { name = m, rw = randrw, rwmixread = 70, bs = 4k, size = 64k } ]
                """);
        Cli.refused(Cli.run("bench", "run", file.toString(), "--quiet", "--rwmixread=170"), Main.USAGE,
                "--rwmixread '170'", "must be from 0 to 100");
    }

    /**
     * Every key, set in the file (in the job, or in global for the run's keys) to a value that is right, and given
     * as an option with a value that is wrong.
     */
    static Stream<Arguments> everyKey() {
        return Stream.of(
                key("ioengine", "queue", "disk", "queue"), key("rw", "randread", "randomread", "queue"),
                key("rwmixread", "30", "170", "queue"), key("bs", "4k", "4q", "queue"),
                key("bssplit", "\"4k/50:8k/50\"", "4k/50:64k/40", "queue"), key("bsrange", "4k-8k", "8k-4k", "queue"),
                key("size", "64k", "0", "queue"), key("offset", "0", "-1", "queue"),
                key("offset_increment", "0", "12x", "queue"), key("runtime", "1s", "ten", "queue"),
                key("time_based", "false", "maybe", "queue"), key("ramp_time", "0", "-1s", "queue"),
                key("iodepth", "1", "0", "queue"), key("numjobs", "1", "2000", "queue"),
                key("thinktime", "10us", "1y", "queue"), key("flags", "sync", "fast", "queue"),
                key("nrfiles", "1", "0", "files"), key("truncate_to", "0", "1q", "files"),
                key("unit", "4k", "0", "extents"), key("max_extent", "0", "-4k", "extents"),
                key("fill_high", "0.9", "1.5", "extents"), key("fill_low", "0.5", "0", "extents"),
                key("device", "sim", "disk", null), key("filename", "x.img", "", null),
                key("device_size", "1MiB", "1000", null), key("direct", "false", "maybe", null),
                key("allow_overwrite", "false", "2", null), key("elevator", "noop", "foo", null),
                key("volume_size", "1GiB", "0", null), key("seed", "1", "x", null));
    }

    private static Arguments key(String key, String good, String bad, String engine) {
        return Arguments.of(key, good, bad, engine);
    }

    @ParameterizedTest(name = "--{0}={2}")
    @MethodSource("everyKey")
    void everyOptionIsCheckedWhateverTheFileSays(String key, String good, String bad, String engine) throws IOException {
        String global = engine == null ? ", " + key + " = " + good : "";
        String device = key.equals("device_size") ? "mem" : key.equals("device") ? "" : "sim";
        String own = engine == null ? "" : ", " + key + " = " + good;
        if (key.equals("rwmixread")) own = ", rw = randrw" + own;
        String text = "global { " + (device.isEmpty() ? "" : "device = " + device + ", ") + "elevator = noop" + (key.equals("elevator") ? "" : global)
                + " }\njobs = [ { name = a, ioengine = " + (engine == null ? "queue" : engine) + ", size = 64k"
                + (key.equals("size") ? "" : own) + " } ]\n";
        if (key.equals("size")) text = text.replace("size = 64k", "size = " + good);
        Path file = job(key + ".conf", text);
        Cli.Run r = Cli.run("bench", "run", file.toString(), "--quiet", "--" + key + "=" + bad);
        Cli.refused(r, Main.USAGE, "--" + key, "'" + bad + "'");
    }

    /** A key no job of the file takes: the option is checked all the same. */
    @Test
    void aWrongOptionNoJobWouldUseIsAnErrorToo() throws IOException {
        Path file = job("churn.conf", """
                global { volume_size = 1GiB }
                jobs = [ { name = c, ioengine = extents, bs = 64k, size = 1MiB } ]
                """);
        Cli.refused(Cli.run("bench", "run", file.toString(), "--quiet", "--flags=fast"), Main.USAGE,
                "--flags 'fast'", "allowed are sync, meta, ahead");
        Cli.refused(Cli.run("bench", "run", file.toString(), "--quiet", "--thinktime=soon"), Main.USAGE, "--thinktime 'soon'");
        Cli.refused(Cli.run("bench", "run", file.toString(), "--quiet", "--device_size=1000"), Main.USAGE,
                "--device_size '1000'", "512-byte sectors");
    }

    @Test
    void anOptionReplacesTheKeyInGlobalAndInEveryJob() throws Exception {
        Path file = job("two.conf", """
                global { device = sim, elevator = noop, iodepth = 2 }
                jobs = [
                  { name = a, rw = randread, bssplit = "4k/50:16k/50", size = 256k, runtime = 10s, iodepth = 4 }
                  { name = b, rw = write, bs = 4k, offset = 1GiB, size = 128k }
                ]
                """);
        Path json = dir.resolve("r.json");
        Cli.Run r = Cli.run("bench", "run", file.toString(), "--quiet", "--json", json.toString(), "--bs=8k", "--iodepth=1",
                "--runtime=1s");
        assertEquals(0, r.code(), r.err());
        JsonNode jobs = new ObjectMapper().readTree(json.toFile()).get("parameters").get("jobs");
        for (JsonNode j : jobs) {
            assertEquals("8KiB", j.get("bs").asText(), j.toString());
            assertEquals(1, j.get("iodepth").asInt(), "over global's and over the job's own: " + j);
            assertEquals(1.0, j.get("runtime_s").asDouble(), j.toString());
        }
        assertEquals(List.of("randread", "write"), List.of(jobs.get(0).get("rw").asText(), jobs.get(1).get("rw").asText()),
                "what no option names stays as the file has it");
    }

    @Test
    void withoutAFileTheOptionsAreTheJobsOwnKeys() {
        Cli.refused(Cli.run("bench", "run", "--rw=read", "--rwmixread=70", "--size=4k"), Main.USAGE,
                "--rwmixread '70'", "only for a mixed rw");
        Cli.refused(Cli.run("bench", "run", "--ioengine=extents", "--rw=randread", "--size=64k"), Main.USAGE,
                "--rw 'randread'", "only for ioengine=queue");
    }
}
