package org.blockyard.runtime.volume;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;

import org.blockyard.runtime.io.BlockDevice;
import org.blockyard.api.io.BlockRequest;
import org.blockyard.api.io.IoOp;

/**
 * The volume's switch against writing once another host has taken it (multi-mount protection,
 * {@link Mmp}): a device seen through it refuses every request from {@link #close} on, with the reason, so that
 * nothing of this process reaches the image again, a write already queued included.
 */
final class Fence {
    private volatile String reason;

    /** Why the device was fenced off, or null while it is not. */
    String reason() {
        return reason;
    }

    /** From now on every request through {@link #over} fails with {@code why}. Once; later reasons are dropped. */
    synchronized void close(String why) {
        if (reason == null) reason = why;
    }

    private void check() throws IOException {
        String r = reason;
        if (r != null) throw new IOException(r);
    }

    BlockDevice over(BlockDevice device) {
        return new BlockDevice() {
            @Override
            public String kind() {
                return device.kind();
            }

            @Override
            public long capacitySectors() {
                return device.capacitySectors();
            }

            @Override
            public boolean simulated() {
                return device.simulated();
            }

            @Override
            public long perform(IoOp op, long sector, int sectors, List<ByteBuffer> payloads) throws IOException {
                check();
                return device.perform(op, sector, sectors, payloads);
            }

            @Override
            public long performForced(long sector, int sectors, List<ByteBuffer> payloads) throws IOException {
                check();
                return device.performForced(sector, sectors, payloads);
            }

            @Override
            public long perform(BlockRequest rq, List<ByteBuffer> payloads) throws IOException {
                check();
                return device.perform(rq, payloads);
            }

            @Override
            public void close() throws IOException {
                device.close();
            }
        };
    }
}
