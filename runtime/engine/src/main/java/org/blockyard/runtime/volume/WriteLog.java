package org.blockyard.runtime.volume;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The stream of writes and flushes a volume sends to its image, in the order they completed, as dm-log-writes
 * records a block device's: what a power-loss harness builds crash states from. Attached to an image path before
 * the volume opens it ({@link #attach}), every channel this process opens on that image for writing records into
 * it until {@link #detach}.
 *
 * <p>What an event means: a {@link Write} is recorded once the write call returned (the bytes reached the
 * image's page cache); a {@link Flush} is recorded when {@code force} is called, so it covers every write
 * recorded before it, and none recorded after (a write that completes while the flush runs is not promised
 * by it). A power cut after a flush returned keeps every write before it; of the writes after it, any subset
 * may have reached the disk, in any order, and the last one may be torn.
 *
 * <p>Memory: every written byte is copied; a harness keeps its loads small.
 */
public final class WriteLog {
    /** One event of the stream. */
    public sealed interface Event permits Write, Flush {}

    /** {@code bytes} written at byte {@code position} of the image. */
    public record Write(long position, byte[] bytes) implements Event {}

    /** A flush (fdatasync) of the image: every write before it is durable once it returns. */
    public record Flush() implements Event {}

    private static final Map<Path, WriteLog> ATTACHED = new ConcurrentHashMap<>();

    private final Path image;
    private final List<Event> events = new ArrayList<>();
    private volatile boolean recording = true;

    private WriteLog(Path image) {
        this.image = image;
    }

    /** Records the writes and flushes of channels opened on {@code image} from now on, until {@link #detach}. */
    public static WriteLog attach(Path image) {
        WriteLog log = new WriteLog(image);
        if (ATTACHED.putIfAbsent(key(image), log) != null)
            throw new IllegalStateException(image + " is recorded already");
        return log;
    }

    /** Stops recording: later writes reach the image unrecorded. */
    public void detach() {
        recording = false;
        ATTACHED.remove(key(image), this);
    }

    /** How many events were recorded so far: a point in the stream, for whatever is acknowledged now. */
    public synchronized int size() {
        return events.size();
    }

    /** The events recorded so far, oldest first. */
    public synchronized List<Event> events() {
        return List.copyOf(events);
    }

    private synchronized void add(Event e) {
        if (recording) events.add(e);
    }

    /** The channel to use for {@code image}: {@code ch} itself, or one that records into the attached log. */
    static FileChannel wrap(Path image, FileChannel ch) {
        WriteLog log = ATTACHED.get(key(image));
        return log == null ? ch : new Recording(ch, log);
    }

    private static Path key(Path image) {
        return image.toAbsolutePath().normalize();
    }

    /** A channel that hands every call to the image's channel and records the writes and flushes. */
    private static final class Recording extends FileChannel {
        private final FileChannel ch;
        private final WriteLog log;

        Recording(FileChannel ch, WriteLog log) {
            this.ch = ch;
            this.log = log;
        }

        private void recordWrite(long position, ByteBuffer src, int from, int n) {
            if (n <= 0) return;
            byte[] copy = new byte[n];
            src.duplicate().position(from).get(copy);
            log.add(new Write(position, copy));
        }

        @Override
        public int write(ByteBuffer src, long position) throws IOException {
            int from = src.position();
            int n = ch.write(src, position);
            recordWrite(position, src, from, n);
            return n;
        }

        @Override
        public synchronized int write(ByteBuffer src) throws IOException {
            long at = ch.position();
            int from = src.position();
            int n = ch.write(src);
            recordWrite(at, src, from, n);
            return n;
        }

        @Override
        public synchronized long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
            long total = 0;
            for (int i = offset; i < offset + length; i++) total += write(srcs[i]);
            return total;
        }

        @Override
        public void force(boolean metaData) throws IOException {
            log.add(new Flush());
            ch.force(metaData);
        }

        @Override
        public int read(ByteBuffer dst) throws IOException {
            return ch.read(dst);
        }

        @Override
        public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
            return ch.read(dsts, offset, length);
        }

        @Override
        public int read(ByteBuffer dst, long position) throws IOException {
            return ch.read(dst, position);
        }

        @Override
        public long position() throws IOException {
            return ch.position();
        }

        @Override
        public FileChannel position(long newPosition) throws IOException {
            ch.position(newPosition);
            return this;
        }

        @Override
        public long size() throws IOException {
            return ch.size();
        }

        @Override
        public FileChannel truncate(long size) throws IOException {
            throw new IOException("a recorded image is not truncated");
        }

        @Override
        public long transferTo(long position, long count, WritableByteChannel target) throws IOException {
            return ch.transferTo(position, count, target);
        }

        @Override
        public long transferFrom(ReadableByteChannel src, long position, long count) throws IOException {
            throw new IOException("a recorded image is written with write() only");
        }

        @Override
        public MappedByteBuffer map(MapMode mode, long position, long size) throws IOException {
            if (mode != MapMode.READ_ONLY) throw new IOException("a recorded image is not mapped for writing");
            return ch.map(mode, position, size);
        }

        @Override
        public FileLock lock(long position, long size, boolean shared) throws IOException {
            return ch.lock(position, size, shared);
        }

        @Override
        public FileLock tryLock(long position, long size, boolean shared) throws IOException {
            return ch.tryLock(position, size, shared);
        }

        @Override
        protected void implCloseChannel() throws IOException {
            ch.close();
        }
    }
}
