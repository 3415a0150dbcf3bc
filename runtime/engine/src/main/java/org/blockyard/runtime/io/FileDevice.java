package org.blockyard.runtime.io;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import org.blockyard.api.io.IoOp;
import org.blockyard.api.io.IoRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An image file accessed with positional I/O through one {@link FileChannel}. With {@code direct} it asks for
 * O_DIRECT ({@code com.sun.nio.file.ExtendedOpenOption.DIRECT}); file systems that refuse it (tmpfs) fall
 * back to buffered I/O, which {@link #direct()} then reports. O_DIRECT needs buffers aligned to the file
 * system block, so direct requests are copied through an aligned bounce buffer. FLUSH is {@code force(false)}
 * (fdatasync).
 *
 * <p>Over a path it opens a channel of its own and closes it with the device. Over a channel its owner keeps
 * (a volume's: {@link #FileDevice(FileChannel, long)}) it opens no descriptor and closes none: on Linux closing
 * any descriptor of a file drops every fcntl lock the process holds on it, the owner's lock on the image too.
 *
 * <p>A read past the end of the file (an image truncated under the device) fails with an IOException naming
 * the byte offset; it never answers zeros the file does not hold.
 */
public final class FileDevice implements BlockDevice {
    private static final Logger LOG = LoggerFactory.getLogger(FileDevice.class);

    private final FileChannel channel;
    private final long capacitySectors;
    private final boolean direct;
    private final int alignBytes;
    private ByteBuffer bounce;
    /** The channel is its owner's: {@link #close} leaves it open, and refuses requests from then on. */
    private final boolean borrowed;
    /** Guards {@link #closed} against a request in flight, for a borrowed channel. */
    private final Object performing = new Object();
    private boolean closed;

    /**
     * Opens {@code file} (created when missing) as a device of {@code capacityBytes}. A regular file shorter than
     * that is extended to it (sparse: its new blocks read as zeros, as a fresh disk's do).
     */
    public FileDevice(Path file, long capacityBytes, boolean wantDirect) throws IOException {
        this.capacitySectors = sectors(capacityBytes);
        this.borrowed = false;
        Set<OpenOption> base = Set.of(StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
        if (!java.nio.file.Files.exists(file) || java.nio.file.Files.isRegularFile(file)) {
            try (FileChannel sizing = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
                if (sizing.size() < capacityBytes) writeFully(sizing, ByteBuffer.allocate(1), capacityBytes - 1);
            }
        }
        FileChannel ch = null;
        boolean d = false;
        int align = IoRequest.SECTOR_BYTES;
        if (wantDirect) {
            try {
                List<OpenOption> opts = new ArrayList<>(base);
                opts.add(com.sun.nio.file.ExtendedOpenOption.DIRECT);
                ch = FileChannel.open(file, opts.toArray(new OpenOption[0]));
                align = (int) java.nio.file.Files.getFileStore(file).getBlockSize();
                d = true;
            } catch (IOException | UnsupportedOperationException e) {
                LOG.warn("O_DIRECT refused for {} ({}); using buffered I/O", file, e.getMessage());
            }
        }
        if (ch == null) ch = FileChannel.open(file, base.toArray(new OpenOption[0]));
        this.channel = ch;
        this.direct = d;
        this.alignBytes = align;
    }

    /**
     * A device of {@code capacityBytes} over {@code channel} (read and write, buffered I/O), which its owner opened
     * and closes: {@link #close} closes nothing, and the device refuses requests after it.
     */
    public FileDevice(FileChannel channel, long capacityBytes) {
        this.capacitySectors = sectors(capacityBytes);
        this.channel = java.util.Objects.requireNonNull(channel, "channel");
        this.borrowed = true;
        this.direct = false;
        this.alignBytes = IoRequest.SECTOR_BYTES;
    }

    private static long sectors(long capacityBytes) {
        if (capacityBytes < IoRequest.SECTOR_BYTES || capacityBytes % IoRequest.SECTOR_BYTES != 0)
            throw new IllegalArgumentException("file device of " + capacityBytes + " bytes");
        return capacityBytes / IoRequest.SECTOR_BYTES;
    }

    @Override public String kind() { return "file"; }
    @Override public long capacitySectors() { return capacitySectors; }

    public boolean direct() {
        return direct;
    }

    @Override
    public long perform(IoOp op, long sector, int sectors, List<ByteBuffer> payloads) throws IOException {
        if (!borrowed) return performOn(op, sector, sectors, payloads); // a closed channel refuses by itself
        synchronized (performing) { // a close waits for the request in flight, as a channel's close would
            if (closed) throw new java.nio.channels.ClosedChannelException();
            return performOn(op, sector, sectors, payloads);
        }
    }

    private long performOn(IoOp op, long sector, int sectors, List<ByteBuffer> payloads) throws IOException {
        long start = System.nanoTime();
        long pos = sector * IoRequest.SECTOR_BYTES;
        if (op == IoOp.FLUSH) {
            channel.force(false);
        } else if (direct) {
            performDirect(op, pos, sectors, payloads);
        } else if (op == IoOp.WRITE) {
            if (payloads.isEmpty()) writeFully(ByteBuffer.allocate(sectors * IoRequest.SECTOR_BYTES), pos);
            else gatherWrite(payloads, pos);
        } else {
            if (payloads.isEmpty()) readFully(ByteBuffer.allocate(sectors * IoRequest.SECTOR_BYTES), pos);
            for (ByteBuffer b : payloads) pos += readFully(b.duplicate(), pos);
        }
        return System.nanoTime() - start;
    }

    private void performDirect(IoOp op, long pos, int sectors, List<ByteBuffer> payloads) throws IOException {
        int bytes = sectors * IoRequest.SECTOR_BYTES;
        if (pos % alignBytes != 0 || bytes % alignBytes != 0)
            throw new IOException("O_DIRECT request at byte " + pos + " of " + bytes
                    + " bytes is not aligned to " + alignBytes);
        if (bounce == null || bounce.capacity() < bytes + alignBytes)
            bounce = ByteBuffer.allocateDirect(bytes + alignBytes);
        ByteBuffer buf = bounce.clear().alignedSlice(alignBytes).limit(bytes);
        if (op == IoOp.WRITE) {
            for (ByteBuffer b : payloads) buf.put(b.duplicate());
            buf.clear().limit(bytes);
            writeFully(buf, pos);
        } else {
            readFully(buf, pos);
            buf.flip();
            for (ByteBuffer b : payloads) {
                ByteBuffer dst = b.duplicate();
                ByteBuffer part = buf.slice().limit(dst.remaining());
                dst.put(part);
                buf.position(buf.position() + part.limit());
            }
        }
    }

    /**
     * One gathering write (writev) for the whole merged request: the point of merging is that the device
     * sees one large I/O instead of many small ones. The channel position is ours alone: one device thread, and
     * the owner of a borrowed channel reads and writes it at explicit positions only (pread, pwrite).
     */
    private void gatherWrite(List<ByteBuffer> payloads, long pos) throws IOException {
        ByteBuffer[] srcs = new ByteBuffer[payloads.size()];
        long left = 0;
        for (int i = 0; i < srcs.length; i++) {
            srcs[i] = payloads.get(i).duplicate();
            left += srcs[i].remaining();
        }
        channel.position(pos);
        while (left > 0) left -= channel.write(srcs);
    }

    private int writeFully(ByteBuffer b, long pos) throws IOException {
        return writeFully(channel, b, pos);
    }

    private static int writeFully(FileChannel channel, ByteBuffer b, long pos) throws IOException {
        int n = b.remaining();
        while (b.hasRemaining()) pos += channel.write(b, pos);
        return n;
    }

    /** Reads {@code b} full from {@code pos}; the file's end before that is an error, never zeros. */
    private int readFully(ByteBuffer b, long pos) throws IOException {
        int n = b.remaining();
        while (b.hasRemaining()) {
            int r = channel.read(b, pos);
            if (r < 0)
                throw new java.io.EOFException("read past the end of the file at byte " + pos + " (" + b.remaining()
                        + " of " + n + " bytes missing; the file holds " + channel.size() + " bytes, the device "
                        + capacitySectors * IoRequest.SECTOR_BYTES + "): was it truncated?");
            pos += r;
        }
        return n;
    }

    @Override
    public void close() throws IOException {
        if (!borrowed) {
            channel.close();
            return;
        }
        synchronized (performing) {
            closed = true;
        }
    }
}
