package org.blockyard.runtime.volume;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.function.Supplier;

import org.blockyard.api.io.IoOp;
import org.blockyard.runtime.io.BlockDevice;

/**
 * What a volume puts between its block-I/O queue and the image's device, so that faults of the device reach the
 * callers as they must:
 *
 * <ul>
 *   <li><b>Reads</b> that fail are retried, at most {@value #READ_ATTEMPTS} attempts in all (a transient error: a
 *       cable, a path of a multipath device, a controller reset); then the read fails with
 *       {@link ReadFailed}, which names the blocks. A failed read's buffer is never handed on as data.</li>
 *   <li><b>Writeback errors latch.</b> Data and journal share one descriptor, and a flush that fails reports
 *       the error once (Linux reports a writeback error to each descriptor once, then forgets it): a user's
 *       FLUSH that saw it would leave the journal's next FLUSH to succeed over writes that never reached the
 *       disk. Here the first failed FLUSH (or FUA write) is kept, and every FLUSH and FUA write after it fails
 *       with it, whoever sends it: the journal's next commit fails, and a failed commit fails the journal for
 *       good, as PostgreSQL decided in 2018 that a failed fsync must not be retried.</li>
 * </ul>
 */
final class GuardedDevice implements BlockDevice {
    /** Attempts of a read, the first one included, before it fails. */
    static final int READ_ATTEMPTS = 3;

    /** A read of the image that failed every attempt: names the blocks, and the device's last error. */
    static final class ReadFailed extends IOException {
        ReadFailed(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private final BlockDevice inner;
    private final int blockSectors;
    private volatile IOException writeback;
    /** Why no request may reach the image any more, or null while any may. */
    private final Supplier<String> fence;

    GuardedDevice(BlockDevice inner, int blockSize, Supplier<String> fence) {
        this.inner = inner;
        this.blockSectors = Math.max(1, blockSize / 512);
        this.fence = fence;
    }

    private void fenced() throws IOException {
        String why = fence.get();
        if (why != null) throw new IOException(why);
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
    public boolean simulated() {
        return inner.simulated();
    }

    @Override
    public long perform(IoOp op, long sector, int sectors, List<ByteBuffer> payloads) throws IOException {
        fenced();
        if (op == IoOp.READ) return read(sector, sectors, payloads);
        if (op == IoOp.FLUSH) {
            latched();
            try {
                return inner.perform(op, sector, sectors, payloads);
            } catch (IOException e) {
                throw latch(e);
            }
        }
        return inner.perform(op, sector, sectors, payloads);
    }

    @Override
    public long performForced(long sector, int sectors, List<ByteBuffer> payloads) throws IOException {
        fenced();
        latched();
        try {
            return inner.performForced(sector, sectors, payloads);
        } catch (IOException e) {
            throw latch(e);
        }
    }

    private long read(long sector, int sectors, List<ByteBuffer> payloads) throws IOException {
        int[] at = new int[payloads.size()];
        for (int i = 0; i < at.length; i++) at[i] = payloads.get(i).position();
        IOException last = null;
        for (int attempt = 1; attempt <= READ_ATTEMPTS; attempt++) {
            try {
                return inner.perform(IoOp.READ, sector, sectors, payloads);
            } catch (IOException e) {
                last = e;
                for (int i = 0; i < at.length; i++) payloads.get(i).position(at[i]); // what it filled is not data
            }
        }
        long first = sector / blockSectors, end = (sector + sectors + blockSectors - 1) / blockSectors;
        throw new ReadFailed("read of block" + (end - first == 1 ? " " + first : "s " + first + ".." + (end - 1))
                + " of the image failed " + READ_ATTEMPTS + " times: " + last.getMessage(), last);
    }

    /** Throws the latched writeback error, if a flush failed before. */
    private void latched() throws IOException {
        IOException e = writeback;
        if (e != null) throw new IOException("an earlier flush of the image failed (" + e.getMessage() + "): writes "
                + "before it may not be on the disk, so no flush after it succeeds", e);
    }

    private IOException latch(IOException e) {
        synchronized (this) {
            if (writeback == null) writeback = e;
        }
        return e;
    }

    @Override
    public void close() throws IOException {
        inner.close();
    }
}
