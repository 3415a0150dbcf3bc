package org.blockyard.runtime.volume;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.blockyard.api.io.BlockQueue;
import org.blockyard.api.io.IoCompletion;
import org.blockyard.api.io.IoException;
import org.blockyard.api.io.IoFlag;
import org.blockyard.api.io.IoOp;
import org.blockyard.api.io.IoRequest;

/**
 * How the journal's blocks reach the image. Log writes are {@code SYNC} (a committer waits for them) and
 * checkpoint writes, the metadata going home, are {@code META}, as JBD's are. {@link #submit} hands over the
 * writes of a commit (and whatever checkpoint writes go with it) followed by a barrier; the answer's
 * {@link Barrier#await} returns once all of them are on stable storage. The buffers must not change until
 * then: they are sent as they are, not copied.
 *
 * <p>{@link #direct} writes and forces through the image's channel before {@code submit} returns (used while a
 * volume opens, recovers and closes). {@link #queued} hands everything to the volume's block-I/O queue in one
 * {@code submitAll}, the barrier being a {@code FLUSH} request, which the queue issues only once everything
 * before it has completed and before anything after it (ordered drain); {@code submit} returns at once, so the
 * journal prepares its next transaction while the device works. A queue that closes under the journal (the
 * volume is closing) no longer takes requests: {@code await} writes what it refused directly, so the journal's
 * last commits and checkpoints still land.
 */
abstract class LogWriter {

    /** Whole blocks at a byte position of the image; {@code home}: a checkpoint write (META), else the log (SYNC). */
    record Write(ByteBuffer data, long bytePosition, boolean home) {}

    /** What one {@link #submit} started. */
    abstract static class Barrier {
        /** Completes (normally, whatever the outcome) once {@link #await} would not block. */
        abstract CompletionStage<?> done();

        /** Returns once every write of the submission is durable; the device's error otherwise. */
        abstract void await() throws IOException;

        /** True when {@link #await} would return at once with every write durable, nothing left to redo. */
        abstract boolean succeeded();

        /** How long the force itself took, from its issue to the device to its completion (after {@link #await}). */
        abstract long flushNanos();
    }

    /** Starts {@code writes} and a barrier behind them (a barrier alone when {@code writes} is empty). */
    Barrier submit(List<Write> writes) {
        return submit(writes, false);
    }

    /**
     * As {@link #submit(List)}; with {@code preflush}, a FLUSH goes first, so every write completed before this
     * call is durable before any of {@code writes} can be (REQ_PREFLUSH).
     */
    abstract Barrier submit(List<Write> writes, boolean preflush);

    static LogWriter direct(FileChannel channel) {
        return new Direct(channel);
    }

    /**
     * Through {@code queue}, falling back to {@code channel} for what a closed queue refuses. With {@code
     * forced}, a submission of log writes only has no FLUSH behind it: its last write is FUA (JBD2's commit
     * block with REQ_FUA), durable when it completes with the writes before it, one trip to the device
     * instead of two. Submissions with checkpoint writes keep their FLUSH, which makes the home writes durable
     * too.
     */
    static LogWriter queued(BlockQueue queue, int maxRequestBytes, FileChannel channel, long owner, boolean forced) {
        return new Queued(queue, maxRequestBytes, new Direct(channel), owner, forced);
    }

    private static final class Direct extends LogWriter {
        private final FileChannel channel;

        Direct(FileChannel channel) {
            this.channel = channel;
        }

        void write(ByteBuffer data, long pos) throws IOException {
            ByteBuffer b = data.duplicate();
            while (b.hasRemaining()) pos += channel.write(b, pos);
        }

        void force() throws IOException {
            channel.force(false);
        }

        @Override
        Barrier submit(List<Write> writes, boolean preflush) {
            IOException error = null;
            long forceNanos = 0;
            try {
                if (preflush) force();
                for (Write w : writes) write(w.data(), w.bytePosition());
                long t0 = System.nanoTime();
                force();
                forceNanos = System.nanoTime() - t0;
            } catch (IOException e) {
                error = e;
            }
            IOException failed = error;
            long flushed = forceNanos;
            return new Barrier() {
                @Override
                CompletionStage<?> done() {
                    return CompletableFuture.completedFuture(null);
                }

                @Override
                void await() throws IOException {
                    if (failed != null) throw failed;
                }

                @Override
                boolean succeeded() {
                    return failed == null;
                }

                @Override
                long flushNanos() {
                    return flushed;
                }
            };
        }
    }

    private static final class Queued extends LogWriter {
        private static final long WAIT_SECONDS = 120;
        private final BlockQueue queue;
        private final int maxBytes; // the queue's max_sectors: a longer write goes as several requests
        private final Direct fallback;
        private final long owner;
        private final boolean forced;
        private long nextId = 1;
        private volatile boolean queueClosed;

        Queued(BlockQueue queue, int maxRequestBytes, Direct fallback, long owner, boolean forced) {
            this.queue = queue;
            this.maxBytes = maxRequestBytes / IoRequest.SECTOR_BYTES * IoRequest.SECTOR_BYTES;
            this.fallback = fallback;
            this.owner = owner;
            this.forced = forced;
        }

        @Override
        Barrier submit(List<Write> writes, boolean preflush) {
            if (queueClosed) return fallback.submit(writes, preflush);
            boolean fua = forced && !writes.isEmpty() && writes.stream().noneMatch(Write::home);
            List<IoRequest> requests = new ArrayList<>(writes.size() + 2);
            // Nothing submitted after a FLUSH is issued before it completes (RequestQueue): the data written
            // before this submission is durable before the log writes start.
            CompletionStage<IoCompletion> before = preflush ? queue.submitAll(List.of(new IoRequest(nextId++, 0, 0,
                    IoOp.FLUSH, EnumSet.noneOf(IoFlag.class), owner, null))).get(0) : null;
            List<Write> parts = new ArrayList<>(writes.size());
            for (Write w : writes) {
                ByteBuffer b = w.data();
                if (b.remaining() % IoRequest.SECTOR_BYTES != 0 || w.bytePosition() % IoRequest.SECTOR_BYTES != 0)
                    throw new IllegalArgumentException("journal write of " + b.remaining() + " bytes at byte "
                            + w.bytePosition() + " is not in whole sectors");
                for (int off = 0; off < b.remaining(); off += maxBytes) {
                    int n = Math.min(b.remaining() - off, maxBytes);
                    ByteBuffer part = b.slice(b.position() + off, n);
                    long pos = w.bytePosition() + off;
                    requests.add(new IoRequest(nextId++, pos / IoRequest.SECTOR_BYTES, n / IoRequest.SECTOR_BYTES,
                            IoOp.WRITE, EnumSet.of(w.home() ? IoFlag.META : IoFlag.SYNC), owner, part));
                    parts.add(new Write(part, pos, w.home()));
                }
            }
            // The last part carries FUA and makes the others durable too: SYNC requests leave the queue in the
            // order they came (its own FIFO lane, ahead of the elevator), and a device performs requests in the
            // order issued, one at a time (BlockDevice), so each other part is written before the last one's
            // flush. One flush per commit, however many parts max_sectors cut it into.
            if (fua) requests.set(requests.size() - 1, requests.get(requests.size() - 1).with(IoFlag.FUA));
            else requests.add(new IoRequest(nextId++, 0, 0, IoOp.FLUSH, EnumSet.noneOf(IoFlag.class), owner, null));
            List<CompletionStage<IoCompletion>> answers = queue.submitAll(requests);
            if (before != null) { // a preflush the queue refused, or that failed, fails the barrier too
                List<CompletionStage<IoCompletion>> all = new ArrayList<>(answers);
                CompletionStage<IoCompletion> last = all.get(all.size() - 1);
                all.set(all.size() - 1, before.thenCombine(last, (x, y) -> y));
                answers = all;
            }
            return new QueuedBarrier(parts, answers, !fua);
        }

        private final class QueuedBarrier extends Barrier {
            private final List<Write> parts;
            private final List<CompletionStage<IoCompletion>> answers; // one per part, then the FLUSH's if any
            private final boolean flushed; // a FLUSH closes it; else its last part is a FUA write
            private final CompletableFuture<?> done;

            QueuedBarrier(List<Write> parts, List<CompletionStage<IoCompletion>> answers, boolean flushed) {
                this.parts = parts;
                this.answers = answers;
                this.flushed = flushed;
                // The FLUSH completes after everything before it; without one, every part is waited for.
                this.done = flushed ? answers.get(answers.size() - 1).toCompletableFuture().handle((c, e) -> null)
                        : CompletableFuture.allOf(answers.stream().map(a -> a.toCompletableFuture()
                                .handle((c, e) -> null)).toArray(CompletableFuture[]::new));
            }

            @Override
            CompletionStage<?> done() {
                return done;
            }

            @Override
            void await() throws IOException {
                boolean redone = false;
                for (int i = 0; i < parts.size(); i++) {
                    if (completed(answers.get(i))) continue;
                    fallback.write(parts.get(i).data(), parts.get(i).bytePosition()); // the queue closed before it
                    redone = true;
                }
                if (flushed ? !completed(answers.get(parts.size())) || redone : redone) fallback.force();
            }

            @Override
            boolean succeeded() {
                for (CompletionStage<IoCompletion> a : answers) {
                    CompletableFuture<IoCompletion> f = a.toCompletableFuture();
                    if (!f.isDone() || f.isCompletedExceptionally()) return false;
                }
                return true;
            }

            /** The FLUSH's time on the device; without one, the last part's (its write and its flush). */
            @Override
            long flushNanos() {
                CompletableFuture<IoCompletion> f = answers.get(answers.size() - 1).toCompletableFuture();
                if (!f.isDone() || f.isCompletedExceptionally()) return 0; // a closed queue's: forced directly
                IoCompletion c = f.join();
                return c.completedNanos() - c.issuedNanos();
            }
        }

        /** True when the request completed; false when the queue refused it as closed; else the device's error. */
        private boolean completed(CompletionStage<?> s) throws IOException {
            try {
                s.toCompletableFuture().get(WAIT_SECONDS, TimeUnit.SECONDS);
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
