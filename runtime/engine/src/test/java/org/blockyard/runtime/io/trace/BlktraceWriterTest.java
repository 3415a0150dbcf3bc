package org.blockyard.runtime.io.trace;

import static org.blockyard.runtime.io.trace.BlktraceAction.BACKMERGE;
import static org.blockyard.runtime.io.trace.BlktraceAction.COMPLETE;
import static org.blockyard.runtime.io.trace.BlktraceAction.FRONTMERGE;
import static org.blockyard.runtime.io.trace.BlktraceAction.INSERT;
import static org.blockyard.runtime.io.trace.BlktraceAction.ISSUE;
import static org.blockyard.runtime.io.trace.BlktraceAction.QUEUE;
import static org.blockyard.runtime.io.trace.BlktraceWriter.RW_AHEAD;
import static org.blockyard.runtime.io.trace.BlktraceWriter.RW_FLUSH;
import static org.blockyard.runtime.io.trace.BlktraceWriter.RW_FUA;
import static org.blockyard.runtime.io.trace.BlktraceWriter.RW_META;
import static org.blockyard.runtime.io.trace.BlktraceWriter.RW_SYNC;
import static org.blockyard.runtime.io.trace.BlktraceWriter.RW_WRITE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BlktraceWriterTest {

    @TempDir
    Path dir;

    /** One event and the RWBS string blkparse must print for it. */
    record Ev(long timeNanos, BlktraceAction action, long sector, int bytes, int rwbs, int pid, String letters) {}

    /**
     * A small block-layer story: a writer whose three bios become one request through a back and a front
     * merge, a synchronous metadata read, a read-ahead, a flushing synchronous write and a synchronous
     * metadata write; each request is inserted, issued and completed.
     */
    static List<Ev> story() {
        List<Ev> e = new ArrayList<>();
        long t = 1_000;
        e.add(new Ev(t += 1_000, QUEUE, 1000, 4096, RW_WRITE, 100, "W"));
        e.add(new Ev(t += 1_000, INSERT, 1000, 4096, RW_WRITE, 100, "W"));
        e.add(new Ev(t += 1_000, QUEUE, 1008, 4096, RW_WRITE, 100, "W"));
        e.add(new Ev(t += 1_000, BACKMERGE, 1008, 4096, RW_WRITE, 100, "W"));
        e.add(new Ev(t += 1_000, QUEUE, 992, 4096, RW_WRITE, 100, "W"));
        e.add(new Ev(t += 1_000, FRONTMERGE, 992, 4096, RW_WRITE, 100, "W"));
        e.add(new Ev(t += 1_000, QUEUE, 50_000, 4096, RW_SYNC | RW_META, 200, "RSM"));
        e.add(new Ev(t += 1_000, INSERT, 50_000, 4096, RW_SYNC | RW_META, 200, "RSM"));
        e.add(new Ev(t += 1_000, QUEUE, 80_000, 16384, RW_AHEAD, 300, "RA"));
        e.add(new Ev(t += 1_000, INSERT, 80_000, 16384, RW_AHEAD, 300, "RA"));
        e.add(new Ev(t += 1_000, ISSUE, 992, 12288, RW_WRITE, 100, "W"));
        e.add(new Ev(t += 1_000, ISSUE, 50_000, 4096, RW_SYNC | RW_META, 200, "RSM"));
        e.add(new Ev(t += 1_000, ISSUE, 80_000, 16384, RW_AHEAD, 300, "RA"));
        e.add(new Ev(t += 1_000, QUEUE, 0, 4096, RW_FLUSH | RW_WRITE | RW_SYNC, 400, "FWS"));
        e.add(new Ev(t += 1_000, INSERT, 0, 4096, RW_FLUSH | RW_WRITE | RW_SYNC, 400, "FWS"));
        e.add(new Ev(t += 1_000, ISSUE, 0, 4096, RW_FLUSH | RW_WRITE | RW_SYNC, 400, "FWS"));
        e.add(new Ev(t += 4_000_000, COMPLETE, 992, 12288, RW_WRITE, 100, "W"));
        e.add(new Ev(t += 3_000_000, COMPLETE, 50_000, 4096, RW_SYNC | RW_META, 200, "RSM"));
        e.add(new Ev(t += 1_000_000, COMPLETE, 80_000, 16384, RW_AHEAD, 300, "RA"));
        e.add(new Ev(t += 9_000_000, COMPLETE, 0, 4096, RW_FLUSH | RW_WRITE | RW_SYNC, 400, "FWS"));
        e.add(new Ev(t += 1_000, QUEUE, 64, 4096, RW_WRITE | RW_SYNC | RW_META, 200, "WSM"));
        e.add(new Ev(t += 1_000, INSERT, 64, 4096, RW_WRITE | RW_SYNC | RW_META, 200, "WSM"));
        e.add(new Ev(t += 1_000, ISSUE, 64, 4096, RW_WRITE | RW_SYNC | RW_META, 200, "WSM"));
        e.add(new Ev(t += 500_000, COMPLETE, 64, 4096, RW_WRITE | RW_SYNC | RW_META, 200, "WSM"));
        return e;
    }

    private static BlktraceWriter write(Path file, List<Ev> events, int cpu) throws IOException {
        BlktraceWriter w = new BlktraceWriter(file, 8, 16);
        w.processName(100, "dd");
        w.processName(200, "kjournald");
        for (Ev e : events) w.event(e.timeNanos(), e.action(), e.sector(), e.bytes(), e.rwbs(), e.pid(), cpu);
        w.close();
        return w;
    }

    @Test
    void blkparsePrintsEveryEventWithItsActionSectorAndRwbsLetters() throws IOException {
        Blkparse.requireTools();
        List<Ev> story = story();
        Path file = BlktraceWriter.perCpuName(dir, "sim", 0);
        BlktraceWriter w = write(file, story, 0);

        Map<Character, Long> expected = new TreeMap<>();
        for (Ev e : story) expected.merge(e.action().letter(), 1L, Long::sum);
        Map<Character, Long> counts = Blkparse.actionCounts(file);
        assertEquals(expected, counts);
        assertEquals(Map.of('Q', 7L, 'M', 1L, 'F', 1L, 'I', 5L, 'D', 5L, 'C', 5L), counts);
        for (BlktraceAction a : BlktraceAction.values()) assertEquals(counts.get(a.letter()), w.events(a), a.name());

        List<Blkparse.Line> lines = Blkparse.lines(file);
        assertEquals(story.size(), lines.size());
        for (int i = 0; i < story.size(); i++) {
            Ev e = story.get(i);
            Blkparse.Line l = lines.get(i);
            String where = "event " + i + " " + e;
            assertEquals(8, l.major(), where);
            assertEquals(16, l.minor(), where);
            assertEquals(0, l.cpu(), where);
            assertEquals(i + 1, l.sequence(), where);
            assertEquals(e.pid(), l.pid(), where);
            assertEquals(String.valueOf(e.action().letter()), l.action(), where);
            assertEquals(e.letters(), l.rwbs(), where);
            String range = e.sector() + " + " + (e.bytes() / 512);
            assertTrue(l.tail().startsWith(range), where + ": " + l.tail());
            if (e.action() == COMPLETE) assertEquals(range + " [0]", l.tail(), where);
        }
        assertTrue(lines.get(0).tail().endsWith("[dd]"), lines.get(0).tail());
        assertTrue(lines.get(6).tail().endsWith("[kjournald]"), lines.get(6).tail());
        assertTrue(lines.get(8).tail().endsWith("[blockyard]"), "unnamed pids get the default name");
        // blkparse reports times relative to the first event
        assertEquals("0.000000000", lines.get(0).time());
        assertEquals("0.000001000", lines.get(1).time());
    }

    @Test
    void blkparseFileModeReadsOneFilePerCpuWithoutSkips() throws IOException {
        Blkparse.requireTools();
        List<Ev> story = story();
        List<Ev> even = new ArrayList<>();
        List<Ev> odd = new ArrayList<>();
        for (int i = 0; i < story.size(); i++) (i % 2 == 0 ? even : odd).add(story.get(i));
        write(BlktraceWriter.perCpuName(dir, "sdb", 0), even, 0);
        write(BlktraceWriter.perCpuName(dir, "sdb", 1), odd, 1);

        String out = Blkparse.fileMode(dir, "sdb");
        List<Blkparse.Line> lines = Blkparse.parseEvents(out);
        assertEquals(story.size(), lines.size());
        assertEquals(even.size(), lines.stream().filter(l -> l.cpu() == 0).count());
        assertEquals(odd.size(), lines.stream().filter(l -> l.cpu() == 1).count());
        assertTrue(out.contains("Skips: 0 forward"), out);
        assertTrue(out.contains("Events (sdb): " + story.size() + " entries"), out);
        // merged by time across the two files: back in story order
        for (int i = 0; i < story.size(); i++)
            assertEquals(String.valueOf(story.get(i).action().letter()), lines.get(i).action(), "event " + i);
    }

    @Test
    void oneFileMayMixCpusWhenReadThroughAPipe() throws IOException {
        Blkparse.requireTools();
        Path file = dir.resolve("mixed.trace");
        List<Ev> story = story();
        try (BlktraceWriter w = new BlktraceWriter(file, 253, 1)) {
            for (int i = 0; i < story.size(); i++) {
                Ev e = story.get(i);
                w.event(e.timeNanos(), e.action(), e.sector(), e.bytes(), e.rwbs(), e.pid(), i % 3);
            }
        }
        List<Blkparse.Line> lines = Blkparse.lines(file);
        assertEquals(story.size(), lines.size());
        Map<Integer, Long> lastSequence = new TreeMap<>();
        for (Blkparse.Line l : lines) {
            assertEquals(253, l.major());
            assertEquals(1, l.minor());
            long expectedNext = lastSequence.getOrDefault(l.cpu(), 0L) + 1;
            assertEquals(expectedNext, l.sequence(), "sequence numbers count per CPU, as the kernel's do");
            lastSequence.put(l.cpu(), l.sequence());
        }
        assertEquals(3, lastSequence.size());
    }

    @Test
    void bttMatchesEveryQueuedBioToItsCompletion() throws IOException {
        Blkparse.requireTools();
        Path file = BlktraceWriter.perCpuName(dir, "sim", 0);
        write(file, story(), 0);
        Map<String, Long> n = Blkparse.bttCounts(file, dir);
        assertEquals(7L, n.get("Q2C"), n.toString());
        assertEquals(2L, n.get("Q2M"), "one back and one front merge: " + n);
        assertEquals(5L, n.get("I2D"), n.toString());
    }

    @Test
    void sameEventsGiveByteIdenticalFiles() throws IOException {
        Path a = dir.resolve("a.blktrace.0");
        Path b = dir.resolve("b.blktrace.0");
        write(a, story(), 0);
        write(b, story(), 0);
        assertArrayEquals(Files.readAllBytes(a), Files.readAllBytes(b));
    }

    @Test
    void recordsAreLittleEndianVersion7With48ByteHeaders() throws IOException {
        Path file = dir.resolve("one.blktrace.0");
        try (BlktraceWriter w = new BlktraceWriter(file, 8, 3)) {
            w.event(123_456_789L, ISSUE, 2048, 8192, RW_WRITE | RW_SYNC, 42, 0);
        }
        ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(48 + 16 + 48, b.remaining(), "process notify with its 16-byte name, then the event");
        // the notify record
        assertEquals(0x65617407, b.getInt(0));
        assertEquals(0, b.getInt(4), "notify records carry no sequence");
        assertEquals(1 << 26, b.getInt(28), "BLK_TN_PROCESS");
        assertEquals(16, b.getShort(46));
        assertEquals("blockyard", new String(b.array(), 48, 9, java.nio.charset.StandardCharsets.US_ASCII));
        assertEquals(0, b.get(48 + 9));
        // the event
        int r = 64;
        assertEquals(0x07, b.get(r), "little-endian: the version byte comes first");
        assertEquals(0x65617407, b.getInt(r));
        assertEquals(1, b.getInt(r + 4));
        assertEquals(123_456_789L, b.getLong(r + 8));
        assertEquals(2048L, b.getLong(r + 16));
        assertEquals(8192, b.getInt(r + 24));
        int tc = (1 << 6) | (1 << 1) | (1 << 3) | (1 << 8); // ISSUE | WRITE | SYNC | FS
        assertEquals(7 | (tc << 16), b.getInt(r + 28));
        assertEquals(42, b.getInt(r + 32));
        assertEquals((8 << 20) | 3, b.getInt(r + 36));
        assertEquals(0, b.getInt(r + 40));
        assertEquals(0, b.getShort(r + 44));
        assertEquals(0, b.getShort(r + 46));
    }

    @Test
    void readsCarryTheReadCategoryAndQueueEventsNoFsBit() {
        assertEquals(1 | ((1 << 4) | 1) << 16, BlktraceWriter.actionWord(QUEUE, 0));
        assertEquals(8 | ((1 << 7) | (1 << 1) | (1 << 2) | (1 << 8)) << 16,
                BlktraceWriter.actionWord(COMPLETE, RW_WRITE | RW_FLUSH));
        assertEquals(12 | ((1 << 4) | 1 | (1 << 11) | (1 << 12) | (1 << 8)) << 16,
                BlktraceWriter.actionWord(INSERT, RW_AHEAD | RW_META));
        assertEquals(8 | ((1 << 7) | (1 << 1) | (1 << 3) | (1 << 15) | (1 << 8)) << 16, // BLK_TC_FUA: blkparse's WFS
                BlktraceWriter.actionWord(COMPLETE, RW_WRITE | RW_SYNC | RW_FUA));
    }

    @Test
    void rejectedEventsLeaveTheTraceUnchanged() throws IOException {
        Path file = dir.resolve("bad.blktrace.0");
        EnumMap<BlktraceAction, Long> before = new EnumMap<>(BlktraceAction.class);
        try (BlktraceWriter w = new BlktraceWriter(file, 8, 0)) {
            w.event(5_000, QUEUE, 8, 4096, 0, 1, 0);
            for (BlktraceAction a : BlktraceAction.values()) before.put(a, w.events(a));
            assertThrows(IllegalArgumentException.class, () -> w.event(4_999, QUEUE, 8, 4096, 0, 1, 0));
            assertThrows(IllegalArgumentException.class, () -> w.event(6_000, QUEUE, -1, 4096, 0, 1, 0));
            assertThrows(IllegalArgumentException.class, () -> w.event(6_000, QUEUE, 8, -4096, 0, 1, 0));
            assertThrows(IllegalArgumentException.class, () -> w.event(6_000, QUEUE, 8, 4096, 1 << 9, 1, 0));
            assertThrows(IllegalArgumentException.class, () -> w.event(6_000, QUEUE, 8, 4096, 0, -1, 0));
            assertThrows(IllegalArgumentException.class, () -> w.event(6_000, QUEUE, 8, 4096, 0, 1, -1));
            assertThrows(IllegalArgumentException.class, () -> w.event(6_000, null, 8, 4096, 0, 1, 0));
            assertThrows(IllegalStateException.class, () -> w.processName(1, "late"));
            for (BlktraceAction a : BlktraceAction.values()) assertEquals(before.get(a), w.events(a));
            w.event(6_000, COMPLETE, 8, 4096, 0, 1, 0);
        }
        assertEquals(48 + 16 + 2 * 48, Files.size(file));
        ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(2, b.getInt(64 + 48 + 4), "no sequence number was spent on a rejected event");
    }

    @Test
    void badDevicesNamesAndClosedWritersAreRefused() throws IOException {
        assertThrows(IllegalArgumentException.class, () -> new BlktraceWriter(dir.resolve("x"), 4096, 0));
        assertThrows(IllegalArgumentException.class, () -> new BlktraceWriter(dir.resolve("x"), 8, 1 << 20));
        assertThrows(IllegalArgumentException.class, () -> BlktraceWriter.perCpuName(dir, "a/b", 0));
        assertThrows(IllegalArgumentException.class, () -> BlktraceWriter.perCpuName(dir, "", 0));
        assertThrows(IllegalArgumentException.class, () -> BlktraceWriter.perCpuName(dir, "sda", -1));
        assertEquals(dir.resolve("sda.blktrace.3"), BlktraceWriter.perCpuName(dir, "sda", 3));
        BlktraceWriter w = new BlktraceWriter(dir.resolve("closed"), 8, 0);
        w.close();
        w.close();
        assertThrows(IllegalStateException.class, () -> w.event(1, QUEUE, 0, 512, 0, 1, 0));
    }
}
