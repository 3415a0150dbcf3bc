package org.blockyard.runtime.volume;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.blockyard.api.io.IoOp;
import org.blockyard.runtime.io.BlockDevice;

/**
 * A device that injects the faults of a real one, for tests ({@code Volume.openOnDevice}): reads of a range
 * of sectors that fail a number of times (a transient error) or every time (a bad sector); a flush that fails
 * once and then succeeds again, as a writeback error is reported to a descriptor once. Lost and torn writes are
 * the power-loss harness's (a crash state keeps any subset of the unflushed writes and may tear the last).
 */
public final class FaultDevice implements BlockDevice {
    private final BlockDevice inner;
    private volatile long badFrom = -1, badTo = -1;
    private final AtomicInteger readFailuresLeft = new AtomicInteger();
    private final AtomicInteger flushFailuresLeft = new AtomicInteger();
    private final AtomicInteger readsFailed = new AtomicInteger(), flushesFailed = new AtomicInteger();
    private final AtomicInteger flushes = new AtomicInteger();

    public FaultDevice(BlockDevice inner) {
        this.inner = inner;
    }

    /** The next {@code times} reads that touch sectors [{@code from}, {@code to}) fail with EIO. */
    public void failReads(long from, long to, int times) {
        badFrom = from;
        badTo = to;
        readFailuresLeft.set(times);
    }

    /** The next {@code times} flushes (FLUSH, or the flush of a FUA write) fail with EIO; the ones after succeed. */
    public void failFlushes(int times) {
        flushFailuresLeft.set(times);
    }

    public int readsFailed() {
        return readsFailed.get();
    }

    public int flushesFailed() {
        return flushesFailed.get();
    }

    /** Flushes that reached this device, failed or not. */
    public int flushes() {
        return flushes.get();
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
        if (op == IoOp.READ && sector < badTo && sector + sectors > badFrom
                && readFailuresLeft.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            readsFailed.incrementAndGet();
            // A failing read may leave part of the buffer filled: what a caller must never take for data.
            for (ByteBuffer b : payloads) while (b.hasRemaining()) b.put((byte) 0x5A);
            throw new IOException("Input/output error (injected) reading sectors " + sector + "+" + sectors);
        }
        if (op == IoOp.FLUSH) {
            flushes.incrementAndGet();
            if (flushFailuresLeft.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                flushesFailed.incrementAndGet();
                throw new IOException("Input/output error (injected writeback error at a flush)");
            }
        }
        return inner.perform(op, sector, sectors, payloads);
    }

    @Override
    public void close() throws IOException {
        inner.close();
    }
}
