package org.blockyard.runtime.io;

import java.nio.ByteBuffer;
import java.util.List;

import org.blockyard.api.io.IoOp;
import org.blockyard.runtime.io.disk.DiskModel;
import org.blockyard.runtime.io.disk.DiskProfile;

/**
 * A rotating disk that only models time ({@link DiskModel}: Ruemmler-Wilkes seeks, rotation, zoned transfer
 * rate); data is not kept. A FLUSH costs nothing: the model has no write cache to empty.
 */
public final class SimulatedDisk implements BlockDevice {
    private final DiskModel model;

    public SimulatedDisk(DiskProfile profile) {
        this.model = new DiskModel(profile);
    }

    @Override public String kind() { return "sim"; }
    @Override public long capacitySectors() { return model.capacitySectors(); }
    @Override public boolean simulated() { return true; }

    @Override
    public long perform(IoOp op, long sector, int sectors, List<ByteBuffer> payloads) {
        if (op == IoOp.FLUSH) return 0;
        return model.serviceNanos(op == IoOp.WRITE, sector, sectors);
    }

    /** Seeks so far (head moves to another cylinder that a sequential transfer would not have made). */
    public long seeks() {
        return model.seeks();
    }
}
