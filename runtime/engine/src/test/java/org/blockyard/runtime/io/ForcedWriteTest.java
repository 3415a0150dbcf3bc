package org.blockyard.runtime.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import org.blockyard.api.io.IoFlag;
import org.blockyard.api.io.IoOp;
import org.blockyard.api.io.IoRequest;

/**
 * FUA writes (Linux REQ_FUA): only a WRITE carries the flag; the device writes and then flushes before the
 * request completes; a FUA write never merges with a write without it.
 */
class ForcedWriteTest {

    /** A device that records what it was asked to do, in order. */
    private static final class RecordingDevice implements BlockDevice {
        final List<String> done = new ArrayList<>();

        @Override public String kind() { return "memory"; }
        @Override public long capacitySectors() { return 1 << 20; }

        @Override
        public synchronized long perform(IoOp op, long sector, int sectors, List<ByteBuffer> payloads) {
            done.add(op == IoOp.FLUSH ? "FLUSH" : op + " " + sector + "+" + sectors);
            return 0;
        }
    }

    @Test
    void onlyAWriteCanBeForced() {
        assertThrows(IllegalArgumentException.class,
                () -> new IoRequest(1, 0, 8, IoOp.READ, EnumSet.of(IoFlag.FUA), 1, null));
        assertThrows(IllegalArgumentException.class,
                () -> new IoRequest(1, 0, 0, IoOp.FLUSH, EnumSet.of(IoFlag.FUA), 1, null));
    }

    @Test
    void aForcedWriteIsWrittenThenFlushedAndMergesWithNoPlainWrite() {
        RecordingDevice device = new RecordingDevice();
        ActorQueueHarness.run(QueueSetup.defaults(), device, queue -> {
            // Three adjacent writes, the middle one forced: plain ones around it would merge with each other
            // through it if the flag did not keep them apart.
            var answers = queue.submitAll(List.of(
                    new IoRequest(1, 0, 8, IoOp.WRITE, null, 1, null),
                    new IoRequest(2, 8, 8, IoOp.WRITE, EnumSet.of(IoFlag.FUA), 1, null),
                    new IoRequest(3, 16, 8, IoOp.WRITE, null, 1, null)));
            for (var a : answers) {
                try {
                    a.toCompletableFuture().get(10, TimeUnit.SECONDS);
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            }
        });
        List<String> done;
        synchronized (device) {
            done = List.copyOf(device.done);
        }
        int forced = done.indexOf("WRITE 8+8");
        assertEquals("FLUSH", done.get(forced + 1), "the forced write, then its flush: " + done);
        assertEquals(1, done.stream().filter("FLUSH"::equals).count(), "one flush, for the forced write: " + done);
        assertEquals(4, done.size(), "the forced write merged with neither neighbour: " + done);
    }
}
