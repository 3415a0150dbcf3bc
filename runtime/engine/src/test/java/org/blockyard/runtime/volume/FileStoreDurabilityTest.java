package org.blockyard.runtime.volume;

import static org.blockyard.runtime.volume.Volumes.join;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.io.IoOp;
import org.blockyard.runtime.io.BlockDevice;
import org.blockyard.runtime.store.FileStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a volume's FileStore makes durable when, as its class comment and the README say, seen from the device:
 * a write that allocates completes after a FLUSH that followed its data; an overwrite completes without one,
 * and {@link FileStore#flush} issues it. Bad arguments are failed stages, not exceptions.
 */
class FileStoreDurabilityTest {
    @TempDir
    Path dir;

    /** The device's requests as they returned, in order: WRITE of the data blocks, FLUSH, and the journal's. */
    private static final class Recorder implements BlockDevice {
        final BlockDevice device;
        final List<String> done = new ArrayList<>();
        final long dataFrom; // the first sector of file data: what lies below is metadata and journal

        Recorder(BlockDevice device, long dataFrom) {
            this.device = device;
            this.dataFrom = dataFrom;
        }

        @Override public String kind() { return device.kind(); }
        @Override public long capacitySectors() { return device.capacitySectors(); }
        @Override public void close() throws IOException { device.close(); }

        @Override
        public long perform(IoOp op, long sector, int sectors, List<ByteBuffer> payloads) throws IOException {
            long t = device.perform(op, sector, sectors, payloads);
            synchronized (done) {
                if (op == IoOp.FLUSH) done.add("FLUSH");
                else if (op == IoOp.WRITE && sector >= dataFrom) done.add("DATA");
            }
            return t;
        }

        int mark() {
            synchronized (done) {
                return done.size();
            }
        }

        List<String> since(int mark) {
            synchronized (done) {
                return List.copyOf(done.subList(mark, done.size()));
            }
        }
    }

    private static byte[] bytes(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) b[i] = (byte) (i * 7 + seed);
        return b;
    }

    private static <T> T within(CompletionStage<T> s) throws Exception {
        return s.toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    @Test
    void aWriteThatAllocatesIsFlushedBeforeItCompletesAnOverwriteOnlyByFlush() throws Exception {
        Path image = Volumes.make(dir, 2);
        Layout layout = Volumes.layout(2);
        long dataFrom = (layout.journalStart() + layout.journalBlocks()) * (4096L / 512);
        Recorder[] rec = new Recorder[1];
        try (Volume v = Volume.openOnDevice(image, Volumes.CONFIG, Volumes.FAST, d -> rec[0] = new Recorder(d, dataFrom))) {
            FileStore store = v.fileStore();
            join(v.allocator().open("f"));

            int mark = rec[0].mark();
            within(store.write("f", 0, ByteBuffer.wrap(bytes(8 * 4096, 1))));
            List<String> fresh = rec[0].since(mark);
            int data = fresh.indexOf("DATA");
            assertTrue(data >= 0 && fresh.subList(data, fresh.size()).contains("FLUSH"),
                    "a write that allocates completes after a FLUSH that followed its data: " + fresh);

            mark = rec[0].mark();
            within(store.write("f", 0, ByteBuffer.wrap(bytes(8 * 4096, 2))));
            assertEquals(List.of("DATA"), rec[0].since(mark), "an overwrite changes no metadata: its data, no flush");

            mark = rec[0].mark();
            within(store.flush("f"));
            assertEquals(List.of("FLUSH"), rec[0].since(mark), "flush: one FLUSH, done before it completes");
            assertArrayEquals(bytes(8 * 4096, 2), within(store.read("f", 0, 8 * 4096)).array());
        }
    }

    @Test
    void nullArgumentsAreFailedStagesNotExceptions() throws Exception {
        Path image = Volumes.make(dir, 2);
        try (Volume v = Volumes.open(image)) {
            FileStore store = v.fileStore();
            join(v.allocator().open("f"));
            List<CompletionStage<?>> calls = List.of(store.write("f", 0, null), store.write(null, 0, ByteBuffer.allocate(4096)),
                    store.read(null, 0, 4096), store.flush(null));
            for (CompletionStage<?> c : calls) {
                Exception e = assertThrows(Exception.class, () -> within(c));
                assertInstanceOf(AllocationException.InvalidRequest.class, e.getCause(), e.toString());
            }
            assertThrows(IllegalArgumentException.class, () -> store.registerElevator(null));
            assertThrows(IllegalArgumentException.class, () -> store.unregisterElevator(null));
            within(store.write("f", 0, ByteBuffer.wrap(bytes(4096, 3))));
            assertArrayEquals(bytes(4096, 3), within(store.read("f", 0, 4096)).array(), "the store goes on");
        }
    }
}
