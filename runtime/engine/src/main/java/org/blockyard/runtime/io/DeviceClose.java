package org.blockyard.runtime.io;

import java.io.IOException;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** {@link BlockDevice#closeWithin}: each device's close runs once, in a thread of its own. */
final class DeviceClose {

    /** The closes begun, by device (weakly: a device gone is forgotten). */
    private static final Map<BlockDevice, CompletableFuture<Void>> DEVICES = new WeakHashMap<>();

    private DeviceClose() {}

    static boolean within(BlockDevice device, long limitNanos) throws IOException {
        CompletableFuture<Void> closed;
        boolean first;
        synchronized (DEVICES) {
            closed = DEVICES.get(device);
            first = closed == null;
            if (first) DEVICES.put(device, closed = new CompletableFuture<>());
        }
        if (!first) {
            // Closed, failed or stuck since its first close, whose caller waited for it and reported it.
            return closed.isDone();
        }
        CompletableFuture<Void> done = closed;
        Thread t = new Thread(() -> {
            try {
                device.close();
                done.complete(null);
            } catch (Throwable e) {
                done.completeExceptionally(e);
            }
        }, "blockyard-device-close");
        t.setDaemon(true);
        t.start();
        try {
            closed.get(limitNanos, TimeUnit.NANOSECONDS);
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IOException io) throw io;
            if (e.getCause() instanceof RuntimeException r) throw r;
            throw new IOException("closing the " + device.kind() + " device failed: " + e.getCause(), e.getCause());
        }
    }
}
