package org.blockyard.runtime.volume;

import static org.blockyard.runtime.volume.Volumes.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.io.IoOp;
import org.blockyard.runtime.io.BlockDevice;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A disk that stops taking writes under a running volume (it filled up, or it died): the calls whose changes
 * can no longer be made durable are answered with an error, none is acknowledged, a close says the volume
 * stays dirty, and the next open recovers every change acknowledged before the fault.
 */
class DeviceFaultTest {
    @TempDir
    Path dir;

    /**
     * The image's device with a fault switched on under the running volume: its writes and flushes fail once
     * {@code writesLeft} runs out (a full or dying disk: ENOSPC, EIO), or with {@code hang} never return until
     * {@code release} (a hung mount, a disk retrying a sector); its close then waits for them too, as a file
     * channel's close waits for the threads inside it.
     */
    private static final class FaultyDevice implements BlockDevice {
        final BlockDevice inner;
        final AtomicInteger writesLeft = new AtomicInteger(Integer.MAX_VALUE);
        volatile boolean hang;
        final CountDownLatch release = new CountDownLatch(1);
        final AtomicInteger faulted = new AtomicInteger();

        FaultyDevice(BlockDevice inner) {
            this.inner = inner;
        }

        @Override
        public String kind() {
            return inner.kind();
        }

        @Override
        public long capacitySectors() {
            return inner.capacitySectors();
        }

        @Override
        public long perform(IoOp op, long sector, int sectors, List<ByteBuffer> payloads) throws IOException {
            if (op != IoOp.READ && hang) {
                faulted.incrementAndGet();
                try {
                    release.await(5, TimeUnit.MINUTES);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                throw new IOException("the device came back with an error");
            }
            if (op != IoOp.READ && writesLeft.getAndDecrement() <= 0) {
                faulted.incrementAndGet();
                throw new IOException("No space left on device");
            }
            return inner.perform(op, sector, sectors, payloads);
        }

        @Override
        public void close() throws IOException {
            if (hang) {
                try {
                    release.await(5, TimeUnit.MINUTES);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            inner.close();
        }
    }

    /** Appends 8-block runs to "f" from {@code from} to {@code to}, each acknowledged; answers them. */
    private static List<BlockRun> appendAcknowledged(Volume v, int from, int to) {
        List<BlockRun> runs = new ArrayList<>();
        for (int i = from; i < to; i++) runs.add(join(v.allocator().getBlocks("f", i * 8L, 8, true)));
        return runs;
    }

    /** Each append from {@code from} to {@code to} is answered, within bounded time, with a typed error. */
    private static void appendsFail(Volume v, int from, int to, String why) {
        for (int i = from; i < to; i++) {
            CompletableFuture<BlockRun> call = v.allocator().getBlocks("f", i * 8L, 8, true).toCompletableFuture();
            ExecutionException e = assertThrows(ExecutionException.class, () -> call.get(10, TimeUnit.SECONDS),
                    "call " + i + " " + why);
            assertInstanceOf(AllocationException.Failed.class, e.getCause());
        }
    }

    /** The volume was left dirty, its next open finds every acknowledged run where it was, and fsck is clean. */
    private static void assertRecovered(Path image, List<BlockRun> acknowledged) {
        try (Volume again = Volumes.open(image)) {
            assertFalse(again.recovery().wasClean(), "the volume was left dirty");
            join(again.allocator().open("f"));
            for (BlockRun r : acknowledged) {
                BlockRun now = join(again.allocator().getBlocks("f", r.logicalStart(), r.blocks(), false));
                assertEquals(r.physicalStart(), now.physicalStart(), "acknowledged run at " + r.logicalStart());
                assertEquals(r.blocks(), now.blocks());
            }
        }
        Fsck.Result report = Fsck.check(image, false);
        assertTrue(report.clean(), report::report);
    }

    @Test
    void aDeviceThatStopsWritingFailsTheCallsAfterItAndLosesNoAcknowledgedOne() throws Exception {
        Path image = Volumes.make(dir, 4);
        FaultyDevice[] device = new FaultyDevice[1];
        List<BlockRun> acknowledged;
        Volume v = Volume.openOnDevice(image, Volumes.CONFIG, Volumes.FAST, d -> device[0] = new FaultyDevice(d));
        try {
            join(v.allocator().open("f"));
            acknowledged = appendAcknowledged(v, 0, 40);
            device[0].writesLeft.set(0);
            appendsFail(v, 40, 60, "after the device failed"); // none of them can be made durable
            assertTrue(device[0].faulted.get() >= 1, "the journal's writes reached the failing device");
            byte[] before = Files.readAllBytes(image);
            VolumeException.JournalFailed closing = assertThrows(VolumeException.JournalFailed.class, v::close);
            assertTrue(closing.getMessage().contains("dirty"), closing.getMessage());
            assertTrue(Arrays.equals(before, Files.readAllBytes(image)),
                    "a close after the fault writes nothing: not the superblock's clean state, not a checkpoint");
        } finally {
            v.abandon(); // when an assertion failed before the close; nothing once closed
        }
        assertRecovered(image, acknowledged);
    }

    /**
     * A device that stops answering holds no caller forever: the queue fails the requests it held past
     * {@code blockyard.io.device-timeout}, the journal with them, and every call is answered with an error.
     */
    @Test
    void aDeviceThatStopsAnsweringFailsTheCallsWithinTheDeviceTimeout() throws Exception {
        Path image = Volumes.make(dir, 4);
        com.typesafe.config.Config config = Volumes.CONFIG.withValue("blockyard.io.device-timeout",
                com.typesafe.config.ConfigValueFactory.fromAnyRef("2s")); // a loaded machine's fdatasync is far shorter
        FaultyDevice[] device = new FaultyDevice[1];
        List<BlockRun> acknowledged;
        Volume v = Volume.openOnDevice(image, config, Volumes.FAST, d -> device[0] = new FaultyDevice(d));
        try {
            join(v.allocator().open("f"));
            acknowledged = appendAcknowledged(v, 0, 20);
            device[0].hang = true;
            appendsFail(v, 20, 30, "while the device hangs");
            assertTrue(device[0].faulted.get() >= 1, "a journal write reached the hanging device");
            // The close does not wait for the device to close: it would wait as long as the stuck request.
            assertTimeoutPreemptively(Duration.ofSeconds(30),
                    () -> assertThrows(VolumeException.JournalFailed.class, v::close));
        } finally {
            device[0].release.countDown();
            v.abandon();
        }
        assertRecovered(image, acknowledged);
    }
}
