package org.blockyard.runtime.volume;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.function.Consumer;

/** Damages closed volumes the way bugs, torn writes and bit rot would, for tests. */
final class Tamper {
    private Tamper() {}

    static void flip(Path image, long offset) {
        try (FileChannel ch = FileChannel.open(image, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            ch.read(b, offset);
            b.put(0, (byte) (b.get(0) ^ 0x5A));
            b.rewind();
            ch.write(b, offset);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static void write(Path image, long offset, byte[] bytes) {
        try (FileChannel ch = FileChannel.open(image, StandardOpenOption.WRITE)) {
            Volume.write(ch, bytes, offset);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static byte[] read(Path image, long offset, int bytes) {
        try (FileChannel ch = FileChannel.open(image, StandardOpenOption.READ)) {
            return Volume.read(ch, offset, bytes);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Changes a cleanly closed volume's metadata behind the allocator's back: {@code change} edits it, then
     * every metadata block is written home with valid checksums (as a buggy writer would leave it).
     */
    static void rewrite(Path image, Consumer<Metadata> change) {
        Metadata m = Volume.inspect(image);
        change.accept(m);
        m.dirtyAll();
        int bs = m.layout.blockSize();
        try (FileChannel ch = FileChannel.open(image, StandardOpenOption.WRITE)) {
            for (long b : m.takeCommit()) Volume.write(ch, m.image(b), b * bs);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The group holding the first block of file {@code name}. */
    static int groupOf(Path image, String name) {
        Metadata m = Volume.inspect(image);
        return m.geometry.groupOf(m.entry(name).map.runs().get(0).physical());
    }

    static String digest(Path image) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(image)));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
