package org.blockyard.runtime.volume;

import static org.blockyard.runtime.volume.Volumes.join;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import akka.actor.typed.ActorRef;
import akka.actor.typed.javadsl.Behaviors;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.io.IoCompletion;
import org.blockyard.api.io.IoFlag;
import org.blockyard.api.io.IoOp;
import org.blockyard.api.io.IoRequest;
import org.blockyard.runtime.config.BlockyardConfig;
import org.blockyard.runtime.store.FileStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class VolumeLifecycleTest {
    @TempDir
    Path dir;

    @Test
    void aFreshVolumeOpensCleanWithOnlyTheSystemZoneUsed() {
        Path image = Volumes.make(dir, 4);
        try (Volume v = Volumes.open(image)) {
            assertTrue(v.recovery().wasClean());
            assertEquals(v.geometry().dataBlocks(), join(v.allocator().freeBlocks()));
        }
        assertTrue(Fsck.check(image, false).clean());
    }

    @Test
    void theJournalWritesThroughTheVolumesBlockQueue() {
        Path image = Volumes.make(dir, 4);
        try (Volume v = Volumes.open(image)) {
            long before = join(v.queue().stats()).submissions();
            join(v.allocator().open("q"));
            join(v.allocator().getBlocks("q", 0, 8, true)); // acknowledged: its transaction is durable
            org.blockyard.api.io.QueueStats after = join(v.queue().stats());
            // At least a descriptor, a logged block and a commit block (24 sectors), closed by a FLUSH (or, with
            // journal.forced-commits, the last of them FUA).
            assertTrue(after.submissions() - before >= 1 && after.sectorsDispatched() >= 24,
                    "journal requests through the queue: " + after);
            assertTrue(after.completed() >= after.submissions() - 1, "and they completed: " + after);
            assertEquals(Volumes.CONFIG.getInt("blockyard.volume.queue-depth"), v.queue().limits().queueDepth(),
                    "the image's queue keeps the volume's depth, not the simulated disk's");
        }
        assertTrue(Fsck.check(image, false).clean());
    }

    /**
     * The volume's block queue runs on a thread of its own: a commit's writes and FLUSH complete while every
     * worker of the allocator's dispatcher is busy (on the shared pool they waited until one came free).
     */
    @Test
    void theBlockQueueAnswersWhileEveryAllocatorWorkerIsBusy() throws Exception {
        Path image = Volumes.make(dir, 4);
        try (Volume v = Volumes.open(image)) {
            // The default dispatcher's workers, as Akka sizes the pool: processors times the factor, clamped.
            com.typesafe.config.Config fj =
                    Volumes.CONFIG.getConfig("akka.actor.default-dispatcher.fork-join-executor");
            int workers = (int) Math.max(fj.getInt("parallelism-min"), Math.min(fj.getInt("parallelism-max"),
                    Math.ceil(Runtime.getRuntime().availableProcessors() * fj.getDouble("parallelism-factor"))));
            CountDownLatch busy = new CountDownLatch(workers), release = new CountDownLatch(1);
            try {
                for (int i = 0; i < workers; i++) {
                    ActorRef<String> blocker = v.actors().spawn(Behaviors.receiveMessage(m -> {
                        busy.countDown();
                        release.await(60, TimeUnit.SECONDS);
                        return Behaviors.same();
                    }), "blocker-" + i);
                    blocker.tell("hold");
                }
                assertTrue(busy.await(30, TimeUnit.SECONDS), "every worker took a blocker");
                long block = v.geometry().totalBlocks() - 1; // a free block of the last group
                byte[] data = new byte[v.geometry().blockSizeBytes()];
                java.util.Arrays.fill(data, (byte) 0x5A);
                IoRequest write = new IoRequest(1, block * v.geometry().blockSizeBytes() / IoRequest.SECTOR_BYTES,
                        v.geometry().blockSizeBytes() / IoRequest.SECTOR_BYTES, IoOp.WRITE, EnumSet.of(IoFlag.SYNC), 7,
                        ByteBuffer.wrap(data));
                IoRequest flush = new IoRequest(2, 0, 0, IoOp.FLUSH, EnumSet.noneOf(IoFlag.class), 7, null);
                for (CompletionStage<IoCompletion> c : v.queue().submitAll(List.of(write, flush)))
                    c.toCompletableFuture().get(10, TimeUnit.SECONDS);
            } finally {
                release.countDown();
            }
        }
    }

    /** With journal.forced-commits the commits end in FUA writes instead of FLUSH requests, and all lands. */
    @Test
    void forcedCommitsNeedNoFlushAndLandTheSame() {
        Path image = Volumes.make(dir, 4);
        com.typesafe.config.Config forced = Volumes.CONFIG.withValue("blockyard.volume.journal.forced-commits",
                com.typesafe.config.ConfigValueFactory.fromAnyRef(true));
        List<Extent> extents;
        try (Volume v = Volume.open(image, forced, Volumes.FAST)) {
            VolumeAllocator a = v.allocator();
            join(a.open("f"));
            long before = join(v.queue().stats()).submissions();
            for (int i = 0; i < 20; i++) join(a.getBlocks("f", i * 8L, 8, true)); // twenty commits, one at a time
            org.blockyard.api.io.QueueStats after = join(v.queue().stats());
            long requests = after.submissions() - before;
            // A FLUSH per commit would make it 40 or more: a write and a FLUSH each.
            assertTrue(requests >= 20 && requests < 30, "one write per commit, no FLUSH: " + requests + ", " + after);
            extents = join(a.fileExtents("f"));
        }
        assertTrue(Fsck.check(image, false).clean(), () -> Fsck.check(image, false).report());
        try (Volume v = Volumes.open(image)) {
            assertEquals(extents, join(v.allocator().fileExtents("f")));
        }
    }

    @Test
    void filesAndExtentsSurviveACleanCloseAndReopen() {
        Path image = Volumes.make(dir, 4);
        List<Extent> fileExtents, owned;
        long free;
        try (Volume v = Volumes.open(image)) {
            VolumeAllocator a = v.allocator();
            join(a.open("a"));
            BlockRun r = join(a.getBlocks("a", 0, 100, true));
            join(a.getBlocks("a", r.blocks(), 50, true));
            join(a.markWritten("a", 0, 20));
            join(a.close("a"));
            owned = join(a.allocate(64, 1, 0, -1));
            fileExtents = join(a.fileExtents("a"));
            free = join(a.freeBlocks());
        }
        assertTrue(Fsck.check(image, false).clean(), () -> Fsck.check(image, false).report());
        try (Volume v = Volumes.open(image)) {
            assertTrue(v.recovery().wasClean());
            VolumeAllocator a = v.allocator();
            assertEquals(fileExtents, join(a.fileExtents("a")));
            assertEquals(free, join(a.freeBlocks()));
            join(a.open("a"));
            BlockRun first = join(a.getBlocks("a", 0, 200, false));
            assertFalse(first.unwritten());
            assertEquals(20, first.blocks());
            assertTrue(join(a.getBlocks("a", 20, 10, false)).unwritten());
            // The owner holds its extents across the restart: it may free them, no one else may.
            AllocationException refused = assertThrows(AllocationException.class,
                    () -> join(a.release("someone-else", owned)));
            assertTrue(refused instanceof AllocationException.InvalidRequest);
            join(a.release(owned));
            assertEquals(free + 64, join(a.freeBlocks()));
        }
    }

    @Test
    void aFileWrittenBeforeCloseIsReadBackAfterReopenThroughTheFileStore() {
        Path image = Volumes.make(dir, 4);
        byte[] data = new byte[4096 * 40];
        for (int i = 0; i < data.length; i++) data[i] = (byte) (i * 31 + 7);
        try (Volume v = Volumes.open(image)) {
            FileStore store = v.fileStore();
            join(v.allocator().open("log"));
            join(store.write("log", 0, ByteBuffer.wrap(data)));
        }
        try (Volume v = Volumes.open(image)) {
            assertEquals(List.of("log"), v.allocator().files());
            FileStore store = v.fileStore();
            join(v.allocator().open("log"));
            ByteBuffer back = join(store.read("log", 0, data.length));
            assertArrayEquals(data, back.array());
        }
    }

    @Test
    void anOpenVolumeCannotBeOpenedOrCheckedTwice() {
        Path image = Volumes.make(dir, 2);
        try (Volume v = Volumes.open(image)) {
            assertThrows(VolumeException.InUse.class, () -> Volumes.open(image));
            assertThrows(VolumeException.InUse.class, () -> Fsck.check(image, true));
        }
        assertTrue(Fsck.check(image, true).clean());
    }

    @Test
    void theReadmeExampleRunsAsWritten() throws Exception {
        Path image = dir.resolve("vol.img");
        Volume.mkfs(image, Layout.make(4096, 262144, 32768, 1024, 1024, 0, 0));  // block size, blocks, per group, table, journal, stride, stripe
        byte[] bytes = new byte[16 * 4096];
        try (Volume v = Volume.open(image, BlockyardConfig.load())) {
            v.allocator().open("log").toCompletableFuture().join();
            v.fileStore().write("log", 0, ByteBuffer.wrap(bytes)).toCompletableFuture().join();   // durable once it completes
        }
        try (Volume v = Volume.open(image, BlockyardConfig.load())) {              // after a restart, or a crash
            v.allocator().open("log").toCompletableFuture().join();
            ByteBuffer back = v.fileStore().read("log", 0, bytes.length).toCompletableFuture().join();
            assertArrayEquals(bytes, back.array());
        }
    }
}
