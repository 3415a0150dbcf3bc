package org.blockyard.runtime.io;

import java.nio.ByteBuffer;
import java.util.List;

import org.blockyard.api.io.IoOp;

/** A simulated device whose every request takes the same time: order effects come from the queue alone. */
public final class ConstantLatencyDevice implements BlockDevice {
    private final long capacitySectors;
    private final long serviceNanos;

    public ConstantLatencyDevice(long capacitySectors, long serviceNanos) {
        this.capacitySectors = capacitySectors;
        this.serviceNanos = serviceNanos;
    }

    @Override public String kind() { return "sim"; }
    @Override public long capacitySectors() { return capacitySectors; }
    @Override public boolean simulated() { return true; }

    @Override
    public long perform(IoOp op, long sector, int sectors, List<ByteBuffer> payloads) {
        return serviceNanos;
    }
}
