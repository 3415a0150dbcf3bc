package org.blockyard.runtime.volume;

import static org.blockyard.runtime.volume.Volumes.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
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

    /** The image's device, whose writes and flushes fail once {@code writesLeft} runs out, as ENOSPC or EIO. */
    private static final class FailingDevice implements BlockDevice {
        final BlockDevice inner;
        final AtomicInteger writesLeft = new AtomicInteger(Integer.MAX_VALUE);
        final AtomicInteger refused = new AtomicInteger();

        FailingDevice(BlockDevice inner) {
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
            if (op != IoOp.READ && writesLeft.getAndDecrement() <= 0) {
                refused.incrementAndGet();
                throw new IOException("No space left on device");
            }
            return inner.perform(op, sector, sectors, payloads);
        }

        @Override
        public void close() throws IOException {
            inner.close();
        }
    }

    @Test
    void aDeviceThatStopsWritingFailsTheCallsAfterItAndLosesNoAcknowledgedOne() throws Exception {
        Path image = Volumes.make(dir, 4);
        FailingDevice[] device = new FailingDevice[1];
        List<BlockRun> acknowledged = new ArrayList<>();
        Volume v = Volume.openOnDevice(image, Volumes.CONFIG, Volumes.FAST, d -> device[0] = new FailingDevice(d));
        try {
            join(v.allocator().open("f"));
            for (int i = 0; i < 40; i++) acknowledged.add(join(v.allocator().getBlocks("f", i * 8L, 8, true)));
            device[0].writesLeft.set(0);
            // Each call is answered within bounded time, with a typed error: none of them can be made durable.
            for (int i = 40; i < 60; i++) {
                CompletableFuture<BlockRun> call = v.allocator().getBlocks("f", i * 8L, 8, true).toCompletableFuture();
                ExecutionException e = assertThrows(ExecutionException.class, () -> call.get(30, TimeUnit.SECONDS),
                        "call " + i + " after the device failed");
                assertInstanceOf(AllocationException.Failed.class, e.getCause());
            }
            assertTrue(device[0].refused.get() >= 1, "the journal's writes reached the failing device");
            byte[] before = Files.readAllBytes(image);
            VolumeException.JournalFailed closing = assertThrows(VolumeException.JournalFailed.class, v::close);
            assertTrue(closing.getMessage().contains("dirty"), closing.getMessage());
            assertTrue(Arrays.equals(before, Files.readAllBytes(image)),
                    "a close after the fault writes nothing: not the superblock's clean state, not a checkpoint");
        } finally {
            v.abandon(); // when an assertion failed before the close; nothing once closed
        }
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

    /** The image's device, whose writes and flushes never return once {@code hang} is set, until released. */
    private static final class HangingDevice implements BlockDevice {
        final BlockDevice inner;
        volatile boolean hang;
        final CountDownLatch release = new CountDownLatch(1);
        final AtomicInteger held = new AtomicInteger();

        HangingDevice(BlockDevice inner) {
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
            if (hang && op != IoOp.READ) {
                held.incrementAndGet();
                try {
                    release.await(5, TimeUnit.MINUTES);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                throw new IOException("the device came back with an error");
            }
            return inner.perform(op, sector, sectors, payloads);
        }

        @Override
        public void close() throws IOException {
            inner.close();
        }
    }

    /**
     * A device that stops answering (a hung mount, a disk retrying a sector) holds no caller forever: the queue
     * fails the requests it held past {@code blockyard.io.device-timeout}, the journal with them, and every call
     * is answered with an error; the acknowledged runs are found at the next open.
     */
    @Test
    void aDeviceThatStopsAnsweringFailsTheCallsWithinTheDeviceTimeout() throws Exception {
        Path image = Volumes.make(dir, 4);
        com.typesafe.config.Config config = Volumes.CONFIG.withValue("blockyard.io.device-timeout",
                com.typesafe.config.ConfigValueFactory.fromAnyRef("300ms"));
        HangingDevice[] device = new HangingDevice[1];
        List<BlockRun> acknowledged = new ArrayList<>();
        Volume v = Volume.openOnDevice(image, config, Volumes.FAST, d -> device[0] = new HangingDevice(d));
        try {
            join(v.allocator().open("f"));
            for (int i = 0; i < 20; i++) acknowledged.add(join(v.allocator().getBlocks("f", i * 8L, 8, true)));
            device[0].hang = true;
            for (int i = 20; i < 30; i++) {
                CompletableFuture<BlockRun> call = v.allocator().getBlocks("f", i * 8L, 8, true).toCompletableFuture();
                ExecutionException e = assertThrows(ExecutionException.class, () -> call.get(10, TimeUnit.SECONDS),
                        "call " + i + " while the device hangs");
                assertInstanceOf(AllocationException.Failed.class, e.getCause());
            }
            assertTrue(device[0].held.get() >= 1, "a journal write reached the hanging device");
            assertThrows(VolumeException.JournalFailed.class, v::close);
        } finally {
            device[0].release.countDown();
            v.abandon();
        }
        try (Volume again = Volumes.open(image)) {
            join(again.allocator().open("f"));
            for (BlockRun r : acknowledged) {
                BlockRun now = join(again.allocator().getBlocks("f", r.logicalStart(), r.blocks(), false));
                assertEquals(r.physicalStart(), now.physicalStart(), "acknowledged run at " + r.logicalStart());
            }
        }
        Fsck.Result report = Fsck.check(image, false);
        assertTrue(report.clean(), report::report);
    }
}
