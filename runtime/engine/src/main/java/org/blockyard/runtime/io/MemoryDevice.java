package org.blockyard.runtime.io;

import java.nio.ByteBuffer;
import java.util.List;

import org.blockyard.api.io.IoOp;
import org.blockyard.api.io.IoRequest;

/** A device in memory, 1 MiB chunks allocated on first write; unwritten sectors read as zeros. */
public final class MemoryDevice implements BlockDevice {
    private static final int CHUNK_BYTES = 1 << 20;
    private final long capacitySectors;
    private final byte[][] chunks;

    public MemoryDevice(long capacityBytes) {
        if (capacityBytes < IoRequest.SECTOR_BYTES || capacityBytes % IoRequest.SECTOR_BYTES != 0)
            throw new IllegalArgumentException("memory device of " + capacityBytes + " bytes");
        this.capacitySectors = capacityBytes / IoRequest.SECTOR_BYTES;
        this.chunks = new byte[(int) ((capacityBytes + CHUNK_BYTES - 1) / CHUNK_BYTES)][];
    }

    @Override public String kind() { return "mem"; }
    @Override public long capacitySectors() { return capacitySectors; }

    @Override
    public long perform(IoOp op, long sector, int sectors, List<ByteBuffer> payloads) {
        long start = System.nanoTime();
        long pos = sector * IoRequest.SECTOR_BYTES;
        for (ByteBuffer b : payloads) {
            ByteBuffer buf = b.duplicate();
            while (buf.hasRemaining()) {
                int c = (int) (pos / CHUNK_BYTES);
                int off = (int) (pos % CHUNK_BYTES);
                int n = Math.min(buf.remaining(), CHUNK_BYTES - off);
                if (op == IoOp.WRITE) {
                    if (chunks[c] == null) chunks[c] = new byte[CHUNK_BYTES];
                    buf.get(chunks[c], off, n);
                } else if (op == IoOp.READ) {
                    if (chunks[c] == null) buf.put(new byte[n]);
                    else buf.put(chunks[c], off, n);
                }
                pos += n;
            }
        }
        return System.nanoTime() - start;
    }
}
