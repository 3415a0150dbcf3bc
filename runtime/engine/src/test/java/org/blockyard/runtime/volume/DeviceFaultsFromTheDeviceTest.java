package org.blockyard.runtime.volume;

import static org.blockyard.runtime.volume.Volumes.join;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.runtime.store.FileStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Faults from the device under a running volume ({@link FaultDevice} below the volume's {@link GuardedDevice}):
 * a read that fails a few times is retried and answers the data; one that keeps failing is a typed error naming
 * the block and no data; a writeback error that a user's flush saw still fails the journal's next commit, and
 * from then on the journal, though the device's next flush would succeed.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class DeviceFaultsFromTheDeviceTest {
    @TempDir
    Path dir;

    private static final int BS = 4096;

    private static ByteBuffer block(int fill) {
        byte[] b = new byte[BS];
        java.util.Arrays.fill(b, (byte) fill);
        return ByteBuffer.wrap(b);
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
    }

    /** The physical block of "f"'s logical block {@code logical}. */
    private static long physical(Volume v, long logical) {
        BlockRun r = join(v.allocator().getBlocks("f", logical, 1, false));
        return r.physicalStart();
    }

    @Test
    void aReadThatFailsTwiceIsRetriedAndAnswersTheData() throws Exception {
        Path image = Volumes.make(dir, 4);
        FaultDevice[] device = new FaultDevice[1];
        try (Volume v = Volume.openOnDevice(image, Volumes.CONFIG, Volumes.FAST, d -> device[0] = new FaultDevice(d))) {
            FileStore store = v.fileStore();
            join(v.allocator().open("f"));
            join(store.write("f", 0, block(7)));
            long b = physical(v, 0);
            device[0].failReads(b * 8, b * 8 + 8, GuardedDevice.READ_ATTEMPTS - 1);
            assertArrayEquals(bytes(block(7)), bytes(join(store.read("f", 0, BS))), "the data, after the retries");
            assertEquals(GuardedDevice.READ_ATTEMPTS - 1, device[0].readsFailed(), "both failures were met and retried");
        }
    }

    @Test
    void aReadThatKeepsFailingIsATypedErrorNamingTheBlockAndNoData() throws Exception {
        Path image = Volumes.make(dir, 4);
        FaultDevice[] device = new FaultDevice[1];
        try (Volume v = Volume.openOnDevice(image, Volumes.CONFIG, Volumes.FAST, d -> device[0] = new FaultDevice(d))) {
            FileStore store = v.fileStore();
            join(v.allocator().open("f"));
            join(store.write("f", 0, block(7)));
            join(store.write("f", BS, block(8)));
            long b = physical(v, 1);
            device[0].failReads(b * 8, b * 8 + 8, 1_000);
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> store.read("f", BS, BS).toCompletableFuture().get(30, TimeUnit.SECONDS));
            GuardedDevice.ReadFailed typed = cause(e, GuardedDevice.ReadFailed.class);
            assertNotNull(typed, "a ReadFailed in the cause chain: " + e);
            assertTrue(typed.getMessage().contains("block " + b), typed.getMessage());
            assertEquals(GuardedDevice.READ_ATTEMPTS, device[0].readsFailed(), "a bounded number of attempts");
            // The block beside it still reads.
            assertArrayEquals(bytes(block(7)), bytes(join(store.read("f", 0, BS))));
        }
    }

    /**
     * The device fails one flush and then succeeds again, as Linux reports a writeback error to a descriptor
     * once: the user's flush meets it; the journal's next commit must fail anyway (the writes before that flush
     * may be lost), every later call with it, and the close leaves the volume dirty.
     */
    @Test
    void aWritebackErrorAUserFlushSawStillFailsTheJournalsNextCommit() throws Exception {
        Path image = Volumes.make(dir, 4);
        FaultDevice[] device = new FaultDevice[1];
        Volume v = Volume.openOnDevice(image, Volumes.CONFIG, Volumes.FAST, d -> device[0] = new FaultDevice(d));
        try {
            FileStore store = v.fileStore();
            join(v.allocator().open("f"));
            join(store.write("f", 0, block(1)));
            join(store.write("f", 0, block(2))); // an overwrite: durable only at the next flush
            device[0].failFlushes(1);
            ExecutionException flush = assertThrows(ExecutionException.class,
                    () -> store.flush("f").toCompletableFuture().get(30, TimeUnit.SECONDS));
            assertEquals(1, device[0].flushesFailed(), "the user's flush met the writeback error: " + flush);
            int before = device[0].flushes();
            // A change that needs a commit: the device would take the commit's flush now, but it must not count.
            ExecutionException commit = assertThrows(ExecutionException.class,
                    () -> v.allocator().getBlocks("f", 100, 4, true).toCompletableFuture().get(30, TimeUnit.SECONDS));
            assertInstanceOf(AllocationException.Failed.class, commit.getCause(), commit.toString());
            assertEquals(before, device[0].flushes(), "the failed commit's flush never reached the device: the "
                    + "latched error failed it first");
            assertThrows(VolumeException.JournalFailed.class, v::close, "the journal failed for good");
        } finally {
            v.abandon();
        }
    }

    private static <T extends Throwable> T cause(Throwable t, Class<T> type) {
        for (Throwable c = t; c != null; c = c.getCause()) if (type.isInstance(c)) return type.cast(c);
        return null;
    }
}
