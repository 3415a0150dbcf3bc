package org.blockyard.runtime.volume;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * A volume image in memory, as a power-loss harness builds its crash states: a base image (the bytes mkfs
 * wrote) and, over it, the blocks written since, copy-on-write, so a copy costs a map of references and not the
 * image. It opens through the same recovery as an image file ({@link #recover}: the journal's replay, the
 * checks, the reconcile of an unclean volume, all written into this image through a {@link FileChannel} view of
 * it), and fsck reads it through that view ({@link #fsck}).
 *
 * <p>Not thread-safe: one harness thread builds, recovers and checks a state.
 */
public final class CrashImage {
    private final byte[] base;
    private final int blockSize;
    /** Blocks written over the base; never changed in place (a write replaces the block), so copies share them. */
    private final HashMap<Long, byte[]> blocks;

    /** An image holding {@code base} ({@code blockSize}-byte blocks), nothing written over it yet. */
    public CrashImage(byte[] base, int blockSize) {
        if (base.length % blockSize != 0)
            throw new IllegalArgumentException("an image of " + base.length + " bytes is not whole " + blockSize + "-byte blocks");
        this.base = base;
        this.blockSize = blockSize;
        this.blocks = new HashMap<>();
    }

    private CrashImage(CrashImage of) {
        this.base = of.base;
        this.blockSize = of.blockSize;
        this.blocks = new HashMap<>(of.blocks);
    }

    /** A copy: writes to either are not seen by the other. */
    public CrashImage copy() {
        return new CrashImage(this);
    }

    /** The image's size in bytes. */
    public long size() {
        return base.length;
    }

    /** The whole image, as a file of it would hold it. */
    public byte[] toByteArray() {
        byte[] all = base.clone();
        for (Map.Entry<Long, byte[]> e : blocks.entrySet())
            System.arraycopy(e.getValue(), 0, all, (int) (e.getKey() * blockSize), blockSize);
        return all;
    }

    /** Writes {@code length} bytes of {@code bytes} from its start at byte {@code position} of the image. */
    public void write(long position, byte[] bytes, int length) {
        if (position < 0 || position + length > base.length)
            throw new IllegalArgumentException("a write of " + length + " bytes at byte " + position
                    + " lies outside an image of " + base.length);
        int done = 0;
        while (done < length) {
            long at = position + done;
            long block = at / blockSize;
            int off = (int) (at % blockSize);
            int n = Math.min(blockSize - off, length - done);
            byte[] b = block(block).clone();
            System.arraycopy(bytes, done, b, off, n);
            blocks.put(block, b);
            done += n;
        }
    }

    /** The image's block {@code block} as it stands; not to be changed. */
    private byte[] block(long block) {
        byte[] b = blocks.get(block);
        if (b != null) return b;
        b = new byte[blockSize];
        System.arraycopy(base, (int) (block * blockSize), b, 0, blockSize);
        return b;
    }

    /** A copy of block {@code block}. */
    public byte[] read(long block) {
        return block(block).clone();
    }

    /** A CRC32C of the blocks written over the base (in block order) and where they are: equal images, equal digests. */
    public long digest() {
        CRC32C c = new CRC32C();
        byte[] at = new byte[8];
        for (long b : new java.util.TreeSet<>(blocks.keySet())) {
            ByteBuffer.wrap(at).putLong(b);
            c.update(at);
            c.update(blocks.get(b));
        }
        return c.getValue();
    }

    /** What the recovery of an image in memory left: the volume's metadata, as an open would hand it to the allocator. */
    public record Recovered(Metadata meta, boolean wasClean, int transactionsReplayed, int blocksReplayed,
                            long leaksFreed) {}

    /**
     * Recovers this image in place as {@code Volume.open} does before its allocator starts (the same code,
     * through a channel over this image): the journal replayed, the result checked, written home, the bitmaps
     * reconciled with the owners, the log emptied, the volume marked dirty. A volume that would not open throws
     * what the open throws ({@link VolumeException.JournalDamaged}, {@link VolumeException.Corrupt}, ...).
     */
    public Recovered recover(Journal.Settings settings) {
        try {
            Volume.Recovered r = Volume.recover(NAME, new View(), settings);
            r.journal().shutdownAcks();
            return new Recovered(r.meta(), r.wasClean(), r.replay().transactions(), r.replay().blocks().size(),
                    r.fixed()[0]);
        } catch (IOException e) {
            throw new UncheckedIOException("recover an image in memory: " + e.getMessage(), e);
        }
    }

    /** fsck of this image, read only. */
    public Fsck.Result fsck() {
        try {
            return Fsck.check(NAME, new View());
        } catch (IOException e) {
            throw new UncheckedIOException("fsck of an image in memory: " + e.getMessage(), e);
        }
    }

    /** The name an image in memory goes by in messages: no file of that name is looked at. */
    private static final Path NAME = Path.of("<crash state in memory>");

    /** This image as a channel: reads and writes at positions, forces that do nothing (memory is all there is). */
    private final class View extends FileChannel {
        @Override
        public int read(ByteBuffer dst, long position) {
            if (position >= base.length) return -1;
            int n = (int) Math.min(dst.remaining(), base.length - position);
            int done = 0;
            while (done < n) {
                long at = position + done;
                int off = (int) (at % blockSize);
                int k = Math.min(blockSize - off, n - done);
                byte[] b = blocks.get(at / blockSize);
                if (b != null) dst.put(b, off, k);
                else dst.put(base, (int) at, k);
                done += k;
            }
            return n;
        }

        @Override
        public int write(ByteBuffer src, long position) {
            int n = src.remaining();
            byte[] b = new byte[n];
            src.get(b);
            CrashImage.this.write(position, b, n);
            return n;
        }

        @Override
        public void force(boolean metaData) {
            // nothing is volatile here
        }

        @Override
        public long size() {
            return base.length;
        }

        @Override
        public int read(ByteBuffer dst) throws IOException {
            throw new IOException("an image in memory is read at positions");
        }

        @Override
        public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
            throw new IOException("an image in memory is read at positions");
        }

        @Override
        public int write(ByteBuffer src) throws IOException {
            throw new IOException("an image in memory is written at positions");
        }

        @Override
        public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
            throw new IOException("an image in memory is written at positions");
        }

        @Override
        public long position() {
            return 0;
        }

        @Override
        public FileChannel position(long newPosition) throws IOException {
            throw new IOException("an image in memory is read and written at positions");
        }

        @Override
        public FileChannel truncate(long size) throws IOException {
            throw new IOException("an image in memory is not truncated");
        }

        @Override
        public long transferTo(long position, long count, WritableByteChannel target) throws IOException {
            throw new IOException("an image in memory is not transferred");
        }

        @Override
        public long transferFrom(ReadableByteChannel src, long position, long count) throws IOException {
            throw new IOException("an image in memory is not transferred");
        }

        @Override
        public MappedByteBuffer map(MapMode mode, long position, long size) throws IOException {
            throw new IOException("an image in memory is not mapped");
        }

        @Override
        public FileLock lock(long position, long size, boolean shared) throws IOException {
            throw new IOException("an image in memory is not locked");
        }

        @Override
        public FileLock tryLock(long position, long size, boolean shared) throws IOException {
            throw new IOException("an image in memory is not locked");
        }

        @Override
        protected void implCloseChannel() {
            // nothing to give back
        }
    }

    /** Blocks written over the base so far. */
    public int writtenBlocks() {
        return blocks.size();
    }
}
