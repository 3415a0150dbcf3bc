package org.blockyard.runtime.io;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;

import org.blockyard.api.io.BlockRequest;
import org.blockyard.api.io.IoFlag;
import org.blockyard.api.io.IoOp;

/**
 * A device under a queue. {@link #perform} is called for one request at a time per device thread; a real
 * device does the I/O and answers how long it took, a simulated one only answers how long it would take.
 */
public interface BlockDevice extends Closeable {

    /** {@code mem}, {@code file} or {@code sim}. */
    String kind();

    long capacitySectors();

    /** Whether service times are modelled (virtual clock) rather than measured. */
    default boolean simulated() {
        return false;
    }

    /**
     * Executes one request of {@code sectors} at {@code sector}. {@code payloads} are the submissions'
     * buffers in sector order (empty when the data does not matter); a WRITE reads from them, a READ fills
     * them. Answers the service time in nanoseconds.
     */
    long perform(IoOp op, long sector, int sectors, List<ByteBuffer> payloads) throws IOException;

    /**
     * A WRITE with FUA: on stable storage, with everything completed before it, when this returns. By
     * default the write and then a FLUSH, as a device without native FUA does it (Linux's flush machinery).
     */
    default long performForced(long sector, int sectors, List<ByteBuffer> payloads) throws IOException {
        return perform(IoOp.WRITE, sector, sectors, payloads) + perform(IoOp.FLUSH, 0, 0, List.of());
    }

    /** Executes a request the queue issued: {@link #performForced} for a FUA write, else {@link #perform}. */
    default long perform(BlockRequest rq, List<ByteBuffer> payloads) throws IOException {
        return rq.flags().contains(IoFlag.FUA) ? performForced(rq.sector(), rq.sectors(), payloads)
                : perform(rq.op(), rq.sector(), rq.sectors(), payloads);
    }

    @Override
    default void close() throws IOException {}

    /**
     * Closes {@code device}, waiting at most {@code limitNanos}. A device with a request stuck in it (a hung
     * disk's fdatasync) may not close before that request returns: a file channel's close waits for the
     * threads inside it. A closing queue or volume must not wait with it. Answers whether it closed in time;
     * the close goes on in a thread of its own if not. A close that failed throws its error. A device is
     * closed once: the queue closes it when it stops and its owner (a volume, a file store) after that, and
     * a later call answers at once whether that first close has ended, without waiting again for one stuck.
     */
    static boolean closeWithin(BlockDevice device, long limitNanos) throws IOException {
        return DeviceClose.within(device, limitNanos);
    }
}
