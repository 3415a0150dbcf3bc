package org.blockyard.benches;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.blockyard.runtime.config.BlockyardConfig;

/** The replay of a BlueStore allocator dump: what it reads, what it counts, and that it repeats itself. */
class AllocReplayTest {
    @TempDir
    Path dir;

    private static final Path SHIPPED = Path.of("../../config/replay");

    @Test
    void theShippedDumpReplaysToTheSameAnswerEveryTimeOnBothAllocators() throws Exception {
        AllocReplay.Dump d = AllocReplay.readDump(SHIPPED.resolve("sample-dump.json"));
        List<AllocReplay.Request> r = AllocReplay.readRequests(SHIPPED.resolve("sample-requests.txt"));
        assertEquals(400, r.size());
        List<String> lines1 = new ArrayList<>(), lines2 = new ArrayList<>(), lines3 = new ArrayList<>();
        Map<String, Object> a = AllocReplay.run(d, r, "global-lock", BlockyardConfig.load(), lines1::add);
        Map<String, Object> b = AllocReplay.run(d, r, "global-lock", BlockyardConfig.load(), lines2::add);
        Map<String, Object> c = AllocReplay.run(d, r, "actors", BlockyardConfig.load(), lines3::add);
        assertEquals(strip(lines1), strip(lines2), "two replays, the same fragments request by request");
        assertEquals(strip(lines1), strip(lines3), "the actors place the same way as the lock, one request at a time");
        for (Map<String, Object> row : List.of(a, b, c)) {
            assertEquals(400L, ((Number) row.get("served")).longValue() + ((Number) row.get("no_space")).longValue());
            assertEquals(a.get("fragments"), row.get("fragments"));
        }
        long wanted = 0;
        for (AllocReplay.Request q : r) wanted += q.want();
        if (((Number) a.get("no_space")).longValue() == 0)
            assertEquals(wanted, ((Number) a.get("bytes_allocated")).longValue(), "every request got what it wanted");
        long split = Math.round(((Number) a.get("split_fraction")).doubleValue() * 400);
        assertTrue(split > 0, "an aged volume splits some requests");
    }

    /** A request line without its duration. */
    private static List<String> strip(List<String> lines) {
        List<String> out = new ArrayList<>();
        for (String l : lines) out.add(l.substring(0, l.lastIndexOf(',')));
        return out;
    }

    @Test
    void aSmallDumpIsReadAsItsFreeSpaceAndFragmentsAreCounted() throws Exception {
        // 256 MiB (two groups), two free runs in the second group: 4 blocks and 16 blocks.
        Path dump = dir.resolve("d.json");
        Files.writeString(dump, "{\"capacity\": 268435456, \"alloc_unit\": 4096, \"extents\": ["
                + "{\"offset\": \"0x4010000\", \"length\": \"0x4000\"}, {\"offset\": \"0x5000000\", \"length\": \"0x10000\"}]}"
                .replace("0x4010000", "0x" + Long.toHexString(32768L * 4096 + 0x10000))
                .replace("0x5000000", "0x" + Long.toHexString(32768L * 4096 + 0x100000)));
        Path req = dir.resolve("r.txt");
        Files.writeString(req, "# one request of 20 blocks, then one too many\n0x14000 4096\n4096 4096\n");
        Map<String, Object> row = AllocReplay.run(AllocReplay.readDump(dump), AllocReplay.readRequests(req),
                "global-lock", BlockyardConfig.load(), s -> { });
        assertEquals(1L, ((Number) row.get("served")).longValue());
        assertEquals(1L, ((Number) row.get("no_space")).longValue());
        assertEquals(2L, ((Number) row.get("fragments")).longValue(), "20 blocks from runs of 4 and 16");
        assertEquals(1.0, ((Number) row.get("split_fraction")).doubleValue());
    }

    @Test
    void badDumpsAndRequestLinesAreRefusedNamingTheOptionAndTheLine() throws Exception {
        Path notJson = dir.resolve("x.json");
        Files.writeString(notJson, "capacity: 5");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> AllocReplay.readDump(notJson)).getMessage()
                .startsWith("--dump"));
        Path overlapping = dir.resolve("o.json");
        Files.writeString(overlapping, "{\"capacity\": 65536, \"alloc_unit\": 4096, \"extents\": ["
                + "{\"offset\": \"0x0\", \"length\": \"0x4000\"}, {\"offset\": \"0x2000\", \"length\": \"0x4000\"}]}");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> AllocReplay.readDump(overlapping)).getMessage()
                .contains("overlaps"));
        Path bad = dir.resolve("r.txt");
        Files.writeString(bad, "4096 4096\nlots 4096\n");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> AllocReplay.readRequests(bad)).getMessage()
                .contains("line 2"));
    }
}
