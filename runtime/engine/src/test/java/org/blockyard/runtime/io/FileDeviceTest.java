package org.blockyard.runtime.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;

import org.blockyard.api.io.IoOp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A file device never answers bytes the file does not hold; over a borrowed channel it closes nothing. */
class FileDeviceTest {
    @TempDir
    Path dir;

    private static ByteBuffer filled(int bytes, int seed) {
        byte[] b = new byte[bytes];
        for (int i = 0; i < bytes; i++) b[i] = (byte) (i * 31 + seed);
        return ByteBuffer.wrap(b);
    }

    @Test
    void aReadPastTheEndOfATruncatedFileFailsNamingTheOffset() throws Exception {
        Path img = dir.resolve("disk.img");
        try (FileDevice d = new FileDevice(img, 1 << 20, false)) {
            assertEquals(1 << 20, Files.size(img), "a new file is sized to the device");
            ByteBuffer data = filled(4096, 5);
            d.perform(IoOp.WRITE, 16, 8, List.of(data.duplicate()));
            ByteBuffer back = ByteBuffer.allocate(4096);
            d.perform(IoOp.READ, 16, 8, List.of(back));
            assertArrayEquals(data.array(), back.array());

            try (FileChannel ch = FileChannel.open(img, StandardOpenOption.WRITE)) {
                ch.truncate(0); // the image emptied under the device
            }
            IOException e = assertThrows(IOException.class, () -> d.perform(IoOp.READ, 16, 8, List.of(ByteBuffer.allocate(4096))));
            assertTrue(e.getMessage().contains("at byte 8192"), e.getMessage());

            try (FileChannel ch = FileChannel.open(img, StandardOpenOption.WRITE)) {
                ch.write(ByteBuffer.allocate(1000), 0); // short: the read's first 1000 bytes are there, not the rest
            }
            e = assertThrows(IOException.class, () -> d.perform(IoOp.READ, 0, 8, List.of(ByteBuffer.allocate(4096))));
            assertTrue(e.getMessage().contains("at byte 1000"), e.getMessage());
        }
    }

    @Test
    void overABorrowedChannelTheDeviceClosesNothingAndRefusesRequestsAfterItsClose() throws Exception {
        Path img = dir.resolve("disk.img");
        Files.write(img, new byte[1 << 16]);
        try (FileChannel ch = FileChannel.open(img, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            FileDevice d = new FileDevice(ch, 1 << 17); // the device is larger than the file
            d.perform(IoOp.WRITE, 0, 8, List.of(filled(4096, 1)));
            IOException past = assertThrows(IOException.class,
                    () -> d.perform(IoOp.READ, 128, 8, List.of(ByteBuffer.allocate(4096))));
            assertTrue(past.getMessage().contains("at byte 65536"), past.getMessage());
            d.close();
            assertTrue(ch.isOpen(), "the owner's channel stays open");
            assertThrows(ClosedChannelException.class, () -> d.perform(IoOp.READ, 0, 8, List.of(ByteBuffer.allocate(4096))));
            ByteBuffer back = ByteBuffer.allocate(4096);
            ch.read(back, 0);
            assertArrayEquals(filled(4096, 1).array(), back.array());
        }
    }
}
