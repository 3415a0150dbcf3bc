package org.blockyard.runtime.store;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

import com.typesafe.config.Config;
import org.junit.jupiter.api.Test;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.api.io.IoOp;
import org.blockyard.api.io.IoRequest;
import org.blockyard.api.io.QueueStats;
import org.blockyard.runtime.alloc.AllocatorSettings;
import org.blockyard.runtime.alloc.ReservationPolicy;
import org.blockyard.runtime.config.BlockyardConfig;
import org.blockyard.runtime.io.IoSettings;
import org.blockyard.runtime.io.MemoryDevice;

/** A file written through the allocator goes through the queue to the device, and reads back. */
class FileStoreTest {

    private static <T> T await(CompletionStage<T> s) {
        try {
            return s.toCompletableFuture().get(60, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new CompletionException(e.getCause() != null ? e.getCause() : e);
        }
    }

    @Test
    void aFileWrittenThroughTheStackLandsOnItsBlocksAndReadsBack() throws Exception {
        Config config = BlockyardConfig.load();
        Geometry g = Geometry.of(4096, 4 * 32768, 32768);
        MemoryDevice device = new MemoryDevice(g.bytes());
        try (FileStore store = FileStore.start(AllocatorSettings.of(g, ReservationPolicy.extended()),
                IoSettings.fromConfig(config), device, config)) {
            byte[] data = new byte[4 << 20];
            new Random(7).nextBytes(data);
            await(store.allocator().open("/db/segment"));
            for (int off = 0; off < data.length; off += 64 << 10)
                await(store.write("/db/segment", off, ByteBuffer.wrap(data, off, 64 << 10)));
            ByteBuffer back = await(store.read("/db/segment", 0, data.length));
            assertArrayEquals(data, back.array(), "the file reads back as written");

            // The bytes are on the device at the blocks the allocator gave the file.
            List<Extent> extents = await(store.allocator().fileExtents("/db/segment"));
            Extent first = extents.get(0);
            ByteBuffer raw = ByteBuffer.allocate(4096);
            device.perform(IoOp.READ, first.start() * 8, 8, List.of(raw));
            assertArrayEquals(java.util.Arrays.copyOf(data, 4096), raw.array());

            QueueStats stats = await(store.queue().stats());
            long sectors = 2L * data.length / IoRequest.SECTOR_BYTES; // written once, read once
            assertEquals(sectors, stats.sectorsDispatched(), "every byte went through the queue");
            assertTrue(stats.maxRequestSectors() <= 256, "requests stay within max_sectors");
            assertEquals(stats.submissions(), stats.completed());
            assertTrue(extents.size() <= 2, "a lone writer's file is contiguous: " + extents);
        }
    }

    @Test
    void holesReadAsZerosAndPartialBlocksAreRefused() {
        Config config = BlockyardConfig.load();
        Geometry g = Geometry.of(4096, 32768, 32768);
        try (FileStore store = FileStore.start(AllocatorSettings.of(g, ReservationPolicy.extended()),
                IoSettings.fromConfig(config), new MemoryDevice(g.bytes()), config)) {
            await(store.allocator().open("/f"));
            byte[] block = new byte[4096];
            java.util.Arrays.fill(block, (byte) 7);
            await(store.write("/f", 2 * 4096, ByteBuffer.wrap(block)));
            ByteBuffer back = await(store.read("/f", 0, 3 * 4096));
            for (int i = 0; i < 2 * 4096; i++) assertEquals(0, back.get(i), "hole byte " + i);
            for (int i = 2 * 4096; i < 3 * 4096; i++) assertEquals(7, back.get(i));
            CompletionException e = assertThrows(CompletionException.class,
                    () -> await(store.write("/f", 100, ByteBuffer.wrap(block))));
            assertInstanceOf(AllocationException.InvalidRequest.class, e.getCause());
            e = assertThrows(CompletionException.class, () -> await(store.write("/nope", 0, ByteBuffer.wrap(block))));
            assertInstanceOf(AllocationException.UnknownFile.class, e.getCause());
        }
    }

    @Test
    void aVolumeLargerThanItsDeviceIsRefused() {
        Config config = BlockyardConfig.load();
        Geometry g = Geometry.of(4096, 32768, 32768);
        assertThrows(IllegalArgumentException.class, () -> FileStore.start(
                AllocatorSettings.of(g, ReservationPolicy.extended()), IoSettings.fromConfig(config),
                new MemoryDevice(g.bytes() / 2), config));
        assertEquals(512, IoRequest.SECTOR_BYTES);
    }

    @Test
    void writesInFlightWhenTheStoreClosesAreAnsweredAndLaterCallsFailClosed() throws Exception {
        Config config = BlockyardConfig.load();
        Geometry g = Geometry.of(4096, 4 * 32768, 32768);
        FileStore store = FileStore.start(AllocatorSettings.of(g, ReservationPolicy.extended()),
                IoSettings.fromConfig(config), new MemoryDevice(g.bytes()), config);
        await(store.allocator().open("/f"));
        List<java.util.concurrent.CompletableFuture<Void>> writes = new java.util.ArrayList<>();
        for (int i = 0; i < 200; i++)
            writes.add(store.write("/f", (long) i * 65536, ByteBuffer.allocate(65536)).toCompletableFuture());
        store.close();
        for (var w : writes) {
            try {
                w.get(30, TimeUnit.SECONDS); // bounded: every write is answered
            } catch (java.util.concurrent.ExecutionException e) {
                assertTrue(e.getCause() instanceof AllocationException.Closed
                        || e.getCause() instanceof org.blockyard.api.io.IoException.Closed,
                        "a write in flight at close ended with " + e.getCause());
            }
        }
        var late = store.queue().submit(IoRequest.write(1, 0, 8, 1)).toCompletableFuture();
        var e = assertThrows(java.util.concurrent.ExecutionException.class, () -> late.get(5, TimeUnit.SECONDS));
        assertInstanceOf(org.blockyard.api.io.IoException.Closed.class, e.getCause());
        var lateWrite = store.write("/f", 0, ByteBuffer.allocate(4096)).toCompletableFuture();
        var w = assertThrows(java.util.concurrent.ExecutionException.class, () -> lateWrite.get(5, TimeUnit.SECONDS));
        assertInstanceOf(AllocationException.Closed.class, w.getCause());
    }

    @Test
    void truncateFreesTheWholeBlocksFromAnOffsetAndTheyReadAsZeros() {
        Config config = BlockyardConfig.load();
        Geometry g = Geometry.of(4096, 32768, 32768);
        try (FileStore store = FileStore.start(AllocatorSettings.of(g, ReservationPolicy.extended()),
                IoSettings.fromConfig(config), new MemoryDevice(g.bytes()), config)) {
            await(store.allocator().open("/t"));
            byte[] data = new byte[8 * 4096];
            java.util.Arrays.fill(data, (byte) 7);
            await(store.write("/t", 0, ByteBuffer.wrap(data)));
            long free = await(store.allocator().freeBlocks());
            // 3 blocks and a byte: the partly covered block stays, the 4 after it go.
            assertEquals(4L, await(store.truncate("/t", 3 * 4096 + 1)));
            assertEquals(free + 4, await(store.allocator().freeBlocks()));
            byte[] back = await(store.read("/t", 0, data.length)).array();
            for (int i = 0; i < back.length; i++) assertEquals(i < 4 * 4096 ? 7 : 0, back[i], "byte " + i);
            assertEquals(0L, await(store.truncate("/t", 8 * 4096)), "nothing mapped there");
        }
    }
}
