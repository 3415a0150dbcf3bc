package org.blockyard.runtime.volume;

import static org.blockyard.runtime.volume.Volumes.join;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.blockyard.api.io.IoException;
import org.blockyard.runtime.store.FileStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** An image emptied under an open volume: a file's read fails naming the offset; it never reads back zeros. */
class TruncatedImageTest {
    @TempDir
    Path dir;

    @Test
    void aReadOfAnImageTruncatedUnderTheStoreFails() throws Exception {
        Path image = Volumes.make(dir, 2);
        byte[] data = new byte[8 * 4096];
        for (int i = 0; i < data.length; i++) data[i] = (byte) (i * 13 + 7);
        Volume v = Volumes.open(image);
        try {
            FileStore store = v.fileStore();
            join(v.allocator().open("f"));
            join(store.write("f", 0, ByteBuffer.wrap(data)));
            assertArrayEquals(data, join(store.read("f", 0, data.length)).array());
            long physical = join(v.allocator().getBlocks("f", 0, 8, false)).physicalStart();

            // Another process empties the image (truncate(1) takes no lock).
            Process p = new ProcessBuilder("truncate", "-s", "0", image.toString()).inheritIO().start();
            assertTrue(p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0, "truncate");
            assertEquals(0, Files.size(image));

            RuntimeException e = assertThrows(RuntimeException.class, () -> join(store.read("f", 0, data.length)),
                    "a read of blocks the image no longer holds");
            assertInstanceOf(IoException.DeviceError.class, e, e.toString());
            assertTrue(e.getMessage().contains("at byte " + physical * 4096), e.getMessage());
        } finally {
            v.abandon();
        }
    }
}
