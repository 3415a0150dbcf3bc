package org.blockyard.benches.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Small job files of each kind, run as {@code bench run FILE --json F}: the figures a job reports are the
 * ones its load actors counted, and they agree with what the other side counted on its own (the queue's
 * submissions, the allocator's free blocks, the files' extents).
 */
class WorkloadRunTest {
    @TempDir
    Path dir;

    /** Runs {@code text} as a job file; answers the rows by job name ("total" for the total). */
    private Map<String, JsonNode> run(String text, String... more) throws Exception {
        Path file = Files.writeString(dir.resolve("job.conf"), text);
        Path json = dir.resolve("out.json");
        String[] args = new String[more.length + 4];
        args[0] = file.toString();
        args[1] = "--quiet";
        args[2] = "--json";
        args[3] = json.toString();
        System.arraycopy(more, 0, args, 4, more.length);
        int code = new CommandLine(new RunCommand()).setOut(new java.io.PrintWriter(java.io.Writer.nullWriter()))
                .execute(args);
        assertEquals(0, code, "exit code");
        Map<String, JsonNode> rows = new HashMap<>();
        for (JsonNode r : new ObjectMapper().readTree(json.toFile()).get("results")) rows.put(r.get("job").asText(), r);
        return rows;
    }

    @Test
    void queueJobsOnTheSimulatedDiskReportWhatTheQueueCounted() throws Exception {
        String jobs = """
                global { device = sim, elevator = deadline }
                jobs = [
                  { name = reader, rw = randread, bs = 4k, numjobs = 2, size = 512k }
                  { name = writer, rw = write, bs = 4k, iodepth = 32, offset = 1GiB, size = 1MiB }
                ]
                """;
        Map<String, JsonNode> r = run(jobs);
        JsonNode reader = r.get("reader"), writer = r.get("writer"), total = r.get("total");
        assertEquals(2 * 128, reader.get("ios").asLong(), "two clones of 512 KiB in 4 KiB reads");
        assertEquals(2 * 128, reader.get("reads").asLong());
        assertEquals(2 * 512 * 1024, reader.get("bytes").asLong());
        assertEquals(256, writer.get("writes").asLong());
        assertEquals(1 << 20, writer.get("write_bytes").asLong());
        assertEquals(total.get("submissions").asLong(), total.get("ios").asLong(), "the queue took every submission counted");
        assertEquals(reader.get("ios").asLong() + writer.get("ios").asLong(), total.get("ios").asLong());
        assertTrue(writer.get("merged").asLong() > 0 && total.get("merges").asLong() > 0, "sequential writes merge");
        assertTrue(writer.get("depth_max").asLong() > 1 && writer.get("depth_max").asLong() <= 32, writer.toString());
        assertTrue(total.get("seeks").asLong() > 0 && total.get("device_time_ms").asLong() > 0, total.toString());
        assertTrue(reader.get("clat_us").get("corrected").get("p9999").asDouble() > 0, reader.toString());

        Map<String, JsonNode> again = run(jobs);
        for (String job : new String[] {"reader", "writer"}) {
            ObjectNode a = (ObjectNode) r.get(job), b = (ObjectNode) again.get(job);
            assertEquals(a, b, job + ": the same seed on the virtual clock gives the same figures");
        }
    }

    @Test
    void aMixOnAMemoryDeviceMovesTheBytesItReports() throws Exception {
        Map<String, JsonNode> r = run("""
                global { device = mem, device_size = 64MiB }
                jobs = [ { name = mix, rw = randrw, rwmixread = 70, bssplit = "4k/50:16k/50", iodepth = 8, numjobs = 2,
                           size = 2MiB } ]
                """);
        JsonNode mix = r.get("mix"), total = r.get("total");
        assertEquals(2L * 2 * 1024 * 1024, mix.get("bytes").asLong(), "each clone moves its size exactly");
        assertEquals(mix.get("bytes").asLong(), mix.get("read_bytes").asLong() + mix.get("write_bytes").asLong());
        assertEquals(mix.get("ios").asLong(), mix.get("reads").asLong() + mix.get("writes").asLong());
        assertTrue(mix.get("reads").asLong() > mix.get("writes").asLong(), "70% reads: " + mix);
        assertEquals(total.get("submissions").asLong(), mix.get("ios").asLong());
        assertTrue(mix.has("slat_us") && mix.get("depth_max").asLong() <= 8, mix.toString());
    }

    @Test
    void filesJobsMapWhatTheyAppendAndTheVolumeHoldsWhatTheyKept() throws Exception {
        Map<String, JsonNode> r = run("""
                global { volume_size = 256MiB, bs = 16k, iodepth = 2 }
                jobs = [
                  { name = keep, ioengine = files, numjobs = 3, nrfiles = 2, size = 1MiB }
                  { name = cut, ioengine = files, numjobs = 2, size = 2MiB, truncate_to = 256k }
                ]
                """);
        JsonNode keep = r.get("keep"), cut = r.get("cut"), total = r.get("total");
        assertEquals(6, keep.get("files_opened").asLong());
        assertEquals(6, keep.get("files_closed").asLong());
        assertEquals(6L << 20, keep.get("bytes").asLong(), "the blocks the getBlocks answers mapped");
        assertEquals(keep.get("bytes").asLong(), keep.get("extent_bytes").asLong(), "what the files' extents hold");
        assertTrue(keep.get("calls").asLong() >= 6 * 64, "16 KiB calls: " + keep);
        assertEquals(2, cut.get("truncates").asLong());
        assertEquals(2 * (2L << 20) - 2 * (256 << 10), cut.get("truncated_bytes").asLong());
        assertEquals(keep.get("bytes").asLong() + 2 * (256 << 10), total.get("volume_used_bytes").asLong(),
                "the volume holds what the files kept");
    }

    @Test
    void extentsChurnReleasesWhatItAllocatedAndTheVolumeHoldsTheRest() throws Exception {
        Map<String, JsonNode> r = run("""
                global { volume_size = 256MiB }
                jobs = [ { name = churn, ioengine = extents, bsrange = 4k-64k, numjobs = 2, size = 256MiB,
                           fill_high = 0.5, fill_low = 0.3, iodepth = 2 } ]
                """);
        JsonNode churn = r.get("churn"), total = r.get("total");
        assertEquals(2L * 256 << 20, churn.get("bytes").asLong(), "each clone allocates its size");
        assertTrue(churn.get("releases").asLong() > 0, churn.toString());
        assertEquals(churn.get("bytes").asLong() - churn.get("released_bytes").asLong(),
                total.get("volume_used_bytes").asLong(), "allocated less released is what the volume holds");
        assertTrue(total.get("volume_used_bytes").asLong() <= 0.5 * (256 << 20) + (128 << 10), total.toString());
    }

    @Test
    void aPrefilledVolumeLeavesTheJobsOnlyWhatIsPastTheFill() throws Exception {
        // 256 MiB of files on 1 GiB: room for them all, but not past a pre-fill of 90% (about 100 MiB).
        String jobs = """
                global { volume_size = 1GiB, prefill = %s }
                jobs = [ { name = w, ioengine = files, nrfiles = 4, size = 64MiB, bs = 1MiB } ]
                """;
        JsonNode empty = run(jobs.formatted("0")).get("w"), filled = run(jobs.formatted("0.9")).get("w");
        assertEquals(0, empty.get("enospc").asLong(), empty.toString());
        assertTrue(filled.get("enospc").asLong() > 0, filled.toString());
    }
}
