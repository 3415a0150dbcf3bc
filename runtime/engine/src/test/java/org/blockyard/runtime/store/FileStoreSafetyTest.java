package org.blockyard.runtime.store;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

import com.typesafe.config.Config;
import org.junit.jupiter.api.Test;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.api.io.IoOp;
import org.blockyard.runtime.alloc.AllocatorSettings;
import org.blockyard.runtime.alloc.ReservationPolicy;
import org.blockyard.runtime.config.BlockyardConfig;
import org.blockyard.runtime.io.BlockDevice;
import org.blockyard.runtime.io.IoSettings;
import org.blockyard.runtime.io.MemoryDevice;

/** FileStore never shows a file bytes it did not write, and a write that fails leaves the file as it was. */
class FileStoreSafetyTest {
    private static final int BLOCK = 4096;
    private final Config config = BlockyardConfig.load();

    private static <T> T await(CompletionStage<T> s) {
        try {
            return s.toCompletableFuture().get(60, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new CompletionException(e.getCause() != null ? e.getCause() : e);
        }
    }

    private FileStore start(Geometry g, BlockDevice device) {
        return FileStore.start(AllocatorSettings.of(g, ReservationPolicy.extended()), IoSettings.fromConfig(config),
                device, config);
    }

    private static ByteBuffer filled(int blocks, int value) {
        byte[] b = new byte[blocks * BLOCK];
        Arrays.fill(b, (byte) value);
        return ByteBuffer.wrap(b);
    }

    private static boolean allZero(ByteBuffer b) {
        for (int i = 0; i < b.capacity(); i++) if (b.get(i) != 0) return false;
        return true;
    }

    @Test
    void aWriteThatRunsOutOfSpaceLeavesTheVictimWithoutTheSecretsOldBytes() {
        Geometry g = Geometry.of(BLOCK, 4096, 4096); // one group
        try (FileStore store = start(g, new MemoryDevice(g.bytes()))) {
            await(store.allocator().open("/secret"));
            await(store.write("/secret", 0, filled(2048, 0x5e)));
            await(store.allocator().truncate("/secret", 0));
            await(store.allocator().close("/secret"));

            long free = await(store.allocator().freeBlocks());
            await(store.allocator().open("/victim"));
            CompletionException e = assertThrows(CompletionException.class,
                    () -> await(store.write("/victim", 0, filled((int) free + 16, 0x11))));
            assertInstanceOf(AllocationException.NoSpace.class, e.getCause());

            assertEquals(List.of(), await(store.allocator().fileExtents("/victim")), "the failed write maps nothing");
            assertEquals(free, await(store.allocator().freeBlocks()), "and gave back every block it took");
            assertTrue(allZero(await(store.read("/victim", 0, 2048 * BLOCK))), "the victim reads zeros");
        }
    }

    @Test
    void blocksAllocatedButNotWrittenReadAsZerosUntilMarkedWritten() {
        Geometry g = Geometry.of(BLOCK, 4096, 4096);
        try (FileStore store = start(g, new MemoryDevice(g.bytes()))) {
            await(store.allocator().open("/secret"));
            await(store.write("/secret", 0, filled(64, 0x5e)));
            await(store.allocator().truncate("/secret", 0));

            // A raw getBlocks caller allocates the secret's old blocks and has not written them yet.
            await(store.allocator().open("/raw"));
            BlockRun run = await(store.allocator().getBlocks("/raw", 0, 64, true));
            assertTrue(run.unwritten(), "a fresh run is unwritten: " + run);
            assertTrue(await(store.allocator().getBlocks("/raw", 0, 64, false)).unwritten(), "and a lookup says so");
            assertTrue(allZero(await(store.read("/raw", 0, run.blocks() * BLOCK))), "it reads as zeros");

            await(store.allocator().markWritten("/raw", 0, run.blocks()));
            assertTrue(!await(store.allocator().getBlocks("/raw", 0, 64, false)).unwritten(), "converted");
        }
    }

    /** A memory device whose writes fail while {@code failing} is set. */
    private static final class FailingDevice implements BlockDevice {
        final MemoryDevice inner;
        volatile boolean failing;

        FailingDevice(long bytes) {
            inner = new MemoryDevice(bytes);
        }

        @Override public String kind() { return "mem"; }
        @Override public long capacitySectors() { return inner.capacitySectors(); }

        @Override
        public long perform(IoOp op, long sector, int sectors, List<ByteBuffer> payloads) throws IOException {
            if (failing && op == IoOp.WRITE) throw new IOException("medium error at sector " + sector);
            return inner.perform(op, sector, sectors, payloads);
        }
    }

    @Test
    void aWriteTheDeviceFailsLeavesTheFileAsItWasAndFreesItsBlocks() {
        Geometry g = Geometry.of(BLOCK, 4096, 4096);
        FailingDevice device = new FailingDevice(g.bytes());
        try (FileStore store = start(g, device)) {
            await(store.allocator().open("/f"));
            await(store.write("/f", 0, filled(100, 0x22)));
            List<Extent> before = await(store.allocator().fileExtents("/f"));
            long freeBefore = await(store.allocator().freeBlocks());

            device.failing = true;
            CompletionException e = assertThrows(CompletionException.class,
                    () -> await(store.write("/f", 100 * BLOCK, filled(300, 0x33))));
            assertTrue(e.getCause().getMessage().contains("medium error"), "the device's error: " + e.getCause());
            device.failing = false;

            assertEquals(before, await(store.allocator().fileExtents("/f")), "the file maps what it mapped before");
            assertEquals(freeBefore, await(store.allocator().freeBlocks()), "the blocks it took are free again");
            ByteBuffer back = await(store.read("/f", 0, 400 * BLOCK));
            assertArrayEquals(filled(100, 0x22).array(), Arrays.copyOf(back.array(), 100 * BLOCK));
            assertTrue(allZero(back.slice(100 * BLOCK, 300 * BLOCK)), "past the old end it is a hole");
        }
    }

    @Test
    void aNearlyFullVolumeOfOneHundredThousandGroupsServesWritesAndAnswersNoSpaceWithoutAskingEveryGroup() {
        Geometry g = Geometry.of(BLOCK, 100_000L * 256, 256); // 254 data blocks per group
        // Every group full but the last two blocks of every hundredth group.
        try (FileStore store = FileStore.start(AllocatorSettings.of(g, ReservationPolicy.extended()),
                IoSettings.fromConfig(config), new MemoryDevice(g.bytes()), config,
                group -> group.fillFromStart((int) group.dataBlocks() - (group.group() % 100 == 0 ? 2 : 0)))) {
            long free = store.allocator().volume().totalFreeBlocks(); // published counts: no 100k-message census
            assertEquals(2_000, free);
            await(store.allocator().open("/f"));
            // 1,000 runs of 2 blocks in as many groups: one write, no recursion per run.
            await(store.write("/f", 0, filled((int) free, 0x44)));
            assertEquals(1_000, await(store.allocator().fileExtents("/f")).size());
            ByteBuffer back = await(store.read("/f", 0, (int) free * BLOCK));
            assertArrayEquals(filled((int) free, 0x44).array(), back.array());

            long messages = store.allocator().volume().messages();
            CompletionException e = assertThrows(CompletionException.class,
                    () -> await(store.write("/f", free * BLOCK, filled(1, 0x55))));
            assertInstanceOf(AllocationException.NoSpace.class, e.getCause());
            long used = store.allocator().volume().messages() - messages;
            assertTrue(used < 100, "the full volume's free counts answered; " + used + " actor messages");
        }
    }
}
