package org.blockyard.runtime.volume;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.blockyard.api.io.BlockQueue;
import org.blockyard.api.io.ElevatorSwitch;
import org.blockyard.api.io.IoCompletion;
import org.blockyard.api.io.IoException;
import org.blockyard.api.io.IoFlag;
import org.blockyard.api.io.IoOp;
import org.blockyard.api.io.IoRequest;
import org.blockyard.api.io.QueueLimits;
import org.blockyard.api.io.QueueStats;

/** The journal's writes through a queue: split to the queue's largest request, flagged, flushed, and kept when the queue closes. */
class LogWriterTest {
    @TempDir
    Path dir;

    /** A queue that writes each request into the file at once, or refuses everything once closed. */
    private static final class FileQueue implements BlockQueue {
        final FileChannel ch;
        final List<IoRequest> seen = new ArrayList<>();
        boolean closed;

        FileQueue(FileChannel ch) {
            this.ch = ch;
        }

        @Override public QueueLimits limits() { return QueueLimits.DEFAULT; }
        @Override public long capacitySectors() { return 1L << 30; }

        @Override
        public CompletionStage<IoCompletion> submit(IoRequest r) {
            if (closed) return CompletableFuture.failedFuture(new IoException.Closed("closed"));
            seen.add(r);
            try {
                if (r.op() == IoOp.WRITE) ch.write(r.payload().duplicate(), r.sector() * IoRequest.SECTOR_BYTES);
                if (r.op() == IoOp.FLUSH || r.flags().contains(IoFlag.FUA)) ch.force(false);
            } catch (java.io.IOException e) {
                return CompletableFuture.failedFuture(e);
            }
            return CompletableFuture.completedFuture(new IoCompletion(r.id(), r.op(), r.sector(), r.sectors(), 0, 0, 0, r.sectors()));
        }

        @Override public List<CompletionStage<IoCompletion>> submitAll(List<IoRequest> rs) { return rs.stream().map(this::submit).toList(); }
        @Override public CompletionStage<List<String>> elevators() { return CompletableFuture.completedFuture(List.of()); }
        @Override public CompletionStage<String> activeElevator() { return CompletableFuture.completedFuture("noop"); }
        @Override public CompletionStage<ElevatorSwitch> setElevator(String n) { throw new UnsupportedOperationException(); }
        @Override public CompletionStage<String> schedulerListing() { return CompletableFuture.completedFuture(""); }
        @Override public CompletionStage<QueueStats> stats() { throw new UnsupportedOperationException(); }
    }

    private static byte[] pattern(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) b[i] = (byte) (i * 31 + seed);
        return b;
    }

    private static byte[] read(FileChannel ch, long pos, int n) throws Exception {
        ByteBuffer b = ByteBuffer.allocate(n);
        while (b.hasRemaining()) ch.read(b, pos + b.position());
        return b.array();
    }

    @Test
    void aLongWriteIsSplitToTheQueuesLargestRequestFlaggedAndClosedByAFlush() throws Exception {
        try (FileChannel ch = FileChannel.open(dir.resolve("img"), StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            FileQueue q = new FileQueue(ch);
            LogWriter w = LogWriter.queued(q, 128 * 1024, ch, -2, true);
            byte[] log = pattern(300 * 1024, 1), home = pattern(4096, 7);
            w.submit(List.of(new LogWriter.Write(ByteBuffer.wrap(log), 8192, false),
                    new LogWriter.Write(ByteBuffer.wrap(home), 1 << 20, true))).await();
            assertArrayEquals(log, read(ch, 8192, log.length));
            assertArrayEquals(home, read(ch, 1 << 20, home.length));
            List<IoRequest> writes = q.seen.stream().filter(r -> r.op() == IoOp.WRITE).toList();
            assertEquals(4, writes.size(), "300 KiB in requests of at most 128 KiB, and the home block: " + writes);
            assertTrue(writes.stream().allMatch(r -> r.sectors() <= 256));
            assertEquals(3, writes.stream().filter(r -> r.flags().contains(IoFlag.SYNC)).count(), "the log is SYNC");
            assertTrue(writes.get(3).flags().contains(IoFlag.META), "a checkpoint is META");
            assertEquals(IoOp.FLUSH, q.seen.get(q.seen.size() - 1).op(), "the force is a FLUSH after the writes");
        }
    }

    @Test
    void aCommitWithoutCheckpointWritesGoesAsFuaWritesAndNoFlush() throws Exception {
        try (FileChannel ch = FileChannel.open(dir.resolve("img3"), StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            byte[] log = pattern(300 * 1024, 5);
            FileQueue q = new FileQueue(ch);
            LogWriter.Barrier b = LogWriter.queued(q, 128 * 1024, ch, -2, true)
                    .submit(List.of(new LogWriter.Write(ByteBuffer.wrap(log), 8192, false)));
            b.await();
            assertTrue(b.succeeded());
            assertArrayEquals(log, read(ch, 8192, log.length));
            assertEquals(3, q.seen.size(), "three writes and no FLUSH: " + q.seen);
            assertTrue(q.seen.stream().allMatch(r -> r.op() == IoOp.WRITE && r.flags().contains(IoFlag.SYNC)),
                    "each SYNC: " + q.seen);
            assertEquals(List.of(false, false, true), q.seen.stream().map(r -> r.flags().contains(IoFlag.FUA)).toList(),
                    "the last one FUA, which forces the others with it");

            FileQueue plain = new FileQueue(ch);
            LogWriter.queued(plain, 128 * 1024, ch, -2, false)
                    .submit(List.of(new LogWriter.Write(ByteBuffer.wrap(log), 8192, false))).await();
            assertEquals(IoOp.FLUSH, plain.seen.get(plain.seen.size() - 1).op(), "without forced commits: a FLUSH");
            assertTrue(plain.seen.stream().noneMatch(r -> r.flags().contains(IoFlag.FUA)));
        }
    }

    @Test
    void whatAClosedQueueRefusesIsWrittenDirectly() throws Exception {
        try (FileChannel ch = FileChannel.open(dir.resolve("img2"), StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            FileQueue q = new FileQueue(ch);
            LogWriter w = LogWriter.queued(q, 128 * 1024, ch, -2, true);
            q.closed = true; // the volume is closing
            byte[] log = pattern(64 * 1024, 3);
            w.submit(List.of(new LogWriter.Write(ByteBuffer.wrap(log), 4096, false))).await();
            assertArrayEquals(log, read(ch, 4096, log.length), "the journal's last writes land all the same");
            byte[] more = pattern(4096, 9);
            w.submit(List.of(new LogWriter.Write(ByteBuffer.wrap(more), 1 << 20, true))).await();
            assertArrayEquals(more, read(ch, 1 << 20, more.length));
        }
    }
}
