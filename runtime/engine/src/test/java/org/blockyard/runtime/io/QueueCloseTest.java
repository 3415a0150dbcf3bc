package org.blockyard.runtime.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import org.blockyard.api.io.IoCompletion;
import org.blockyard.api.io.IoException;
import org.blockyard.api.io.IoOp;
import org.blockyard.api.io.IoRequest;

/** A queue that closes answers every submission it holds, and every one after, with {@code Closed}. */
class QueueCloseTest {

    /** A device whose every request waits until the test lets it go: requests stay in flight. */
    private static final class StuckDevice implements BlockDevice {
        final CountDownLatch release = new CountDownLatch(1);

        @Override public String kind() { return "memory"; }
        @Override public long capacitySectors() { return 1 << 20; }
        @Override public boolean simulated() { return false; }

        @Override
        public long perform(IoOp op, long sector, int sectors, List<ByteBuffer> payloads) {
            try {
                release.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return 0;
        }

        @Override public void close() {}
    }

    @Test
    void submissionsQueuedOrInFlightWhenTheQueueClosesFailWithClosedAndLaterOnesAtOnce() throws Exception {
        StuckDevice device = new StuckDevice();
        try {
            ActorQueueHarness.run(QueueSetup.defaults(), device, queue -> {
                List<CompletableFuture<IoCompletion>> calls = new ArrayList<>();
                for (int i = 0; i < 500; i++)
                    calls.add(queue.submit(IoRequest.write(i, (long) i * 64, 8, 1)).toCompletableFuture());
                queue.close();
                for (CompletableFuture<IoCompletion> c : calls) {
                    ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                            () -> c.get(10, TimeUnit.SECONDS), "a submission held by the closed queue was answered");
                    assertInstanceOf(IoException.Closed.class, e.getCause());
                }
                CompletableFuture<IoCompletion> late = queue.submit(IoRequest.write(1000, 0, 8, 1)).toCompletableFuture();
                assertTrue(late.isCompletedExceptionally(), "a submission after close is refused at once");
                var batch = queue.submitAll(List.of(IoRequest.read(1001, 0, 8, 1)));
                assertEquals(1, batch.size());
                assertTrue(batch.get(0).toCompletableFuture().isCompletedExceptionally());
            });
        } finally {
            device.release.countDown();
        }
    }
}
