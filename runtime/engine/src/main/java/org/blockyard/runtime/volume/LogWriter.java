package org.blockyard.runtime.volume;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.blockyard.api.io.BlockQueue;
import org.blockyard.api.io.IoException;
import org.blockyard.api.io.IoFlag;
import org.blockyard.api.io.IoOp;
import org.blockyard.api.io.IoRequest;

/**
 * How the journal's blocks reach the image. Journal writes are {@code SYNC} (a committer waits for them)
 * and checkpoint writes, the metadata going home, are {@code META}, as JBD's are; {@link #force} is the
 * barrier a commit needs: every write before it is on stable storage when it returns.
 *
 * <p>{@link #direct} writes through the image's channel (used while a volume opens and recovers, before its
 * I/O queue runs). {@link #queued} submits each write to the volume's block-I/O queue, so the journal goes
 * through the same elevator as the files' data and shows in its traces, and forces with a {@code FLUSH}
 * request, which the queue issues only once everything before it has completed (ordered drain). A queue
 * that closes under the journal (the volume is closing) no longer takes requests: what it refused is
 * written directly, so the journal's last commits and checkpoints still land.
 */
abstract class LogWriter {

    abstract void write(ByteBuffer block, long bytePosition, boolean home) throws IOException;

    /** Every write before this is durable when it returns. */
    abstract void force() throws IOException;

    static LogWriter direct(FileChannel channel) {
        return new LogWriter() {
            @Override
            void write(ByteBuffer b, long pos, boolean home) throws IOException {
                while (b.hasRemaining()) pos += channel.write(b, pos);
            }

            @Override
            void force() throws IOException {
                channel.force(false);
            }
        };
    }

    /** Through {@code queue}, falling back to {@code channel} for what a closed queue refuses. */
    static LogWriter queued(BlockQueue queue, int maxRequestBytes, FileChannel channel, long owner) {
        return new Queued(queue, maxRequestBytes, direct(channel), owner);
    }

    private static final class Queued extends LogWriter {
        private static final long WAIT_SECONDS = 120;
        private final BlockQueue queue;
        private final int maxBytes; // the queue's max_sectors: a longer write goes as several requests
        private final LogWriter fallback;
        private final long owner;
        /** A write submitted and not yet known to be done: its bytes are kept for a closed queue's refusal. */
        private record Pending(CompletableFuture<?> done, ByteBuffer data, long at) {}

        private final List<Pending> pending = new ArrayList<>();
        private long nextId = 1;
        private boolean queueClosed;

        Queued(BlockQueue queue, int maxRequestBytes, LogWriter fallback, long owner) {
            this.queue = queue;
            this.maxBytes = maxRequestBytes / IoRequest.SECTOR_BYTES * IoRequest.SECTOR_BYTES;
            this.fallback = fallback;
            this.owner = owner;
        }

        @Override
        void write(ByteBuffer b, long pos, boolean home) throws IOException {
            if (queueClosed || b.remaining() % IoRequest.SECTOR_BYTES != 0 || pos % IoRequest.SECTOR_BYTES != 0) {
                fallback.write(b, pos, home);
                return;
            }
            while (b.hasRemaining()) {
                int n = Math.min(b.remaining(), maxBytes);
                ByteBuffer copy = ByteBuffer.allocate(n).put(b.slice(b.position(), n)).flip();
                b.position(b.position() + n);
                IoRequest r = new IoRequest(nextId++, pos / IoRequest.SECTOR_BYTES, n / IoRequest.SECTOR_BYTES,
                        IoOp.WRITE, EnumSet.of(home ? IoFlag.META : IoFlag.SYNC), owner, copy);
                pending.add(new Pending(queue.submit(r).toCompletableFuture(), copy.duplicate(), pos));
                pos += n;
            }
        }

        @Override
        void force() throws IOException {
            CompletableFuture<?> flush = queueClosed ? null
                    : queue.submit(new IoRequest(nextId++, 0, 0, IoOp.FLUSH, EnumSet.noneOf(IoFlag.class), owner, null))
                            .toCompletableFuture();
            boolean redone = false;
            for (Pending p : pending) {
                if (await(p.done())) continue;
                fallback.write(p.data(), p.at(), false); // the queue closed before it: write it here
                redone = true;
            }
            pending.clear();
            if (flush == null || !await(flush) || redone) fallback.force();
        }

        /** True when the request completed; false when the queue refused it as closed; else the device's error. */
        private boolean await(CompletableFuture<?> f) throws IOException {
            try {
                f.get(WAIT_SECONDS, TimeUnit.SECONDS);
                return true;
            } catch (ExecutionException e) {
                if (e.getCause() instanceof IoException.Closed) {
                    queueClosed = true;
                    return false;
                }
                throw new IOException("journal write failed: " + e.getCause(), e.getCause());
            } catch (TimeoutException e) {
                throw new IOException("journal write not answered within " + WAIT_SECONDS + " s");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while the journal waited for its writes");
            }
        }
    }
}
