package org.blockyard.runtime.volume;

import static org.blockyard.runtime.volume.Volumes.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.Extent;

/**
 * A volume whose file table is full: the file or owner that would need a slot more is refused with a typed
 * error when it is created, and nothing else is lost: the files already there go on, every acknowledged
 * allocation is found after a reopen, fsck is clean.
 */
class FileTableFullTest {
    @TempDir
    Path dir;

    @Test
    void aNewFileTheTableCannotHoldIsRefusedAndTheOthersGoOn() {
        Path image = Volumes.make(dir, 4); // 64 file-table blocks
        int opened = 0;
        AllocationException refused = null;
        try (Volume v = Volumes.open(image)) {
            VolumeAllocator a = v.allocator();
            for (int i = 0; i < 100 && refused == null; i++) {
                try {
                    join(a.open("f" + i));
                } catch (AllocationException e) {
                    refused = e;
                    continue;
                }
                join(a.getBlocks("f" + i, 0, 4, true));
                opened++;
            }
            assertNotNull(refused, "a file more than the table holds is refused");
            assertInstanceOf(AllocationException.NoSpace.class, refused);
            assertTrue(refused.getMessage().contains("file table"), refused.getMessage());
            assertTrue(opened >= 32, "the table holds files up to its reserve: " + opened);
            AllocationException again = null;
            try {
                join(a.allocate("owner-past-the-end", 8, 1, 0, -1));
            } catch (AllocationException e) {
                again = e;
            }
            assertInstanceOf(AllocationException.NoSpace.class, again, "a new extent owner needs a slot too");
            for (int i = 0; i < opened; i++) join(a.getBlocks("f" + i, 4, 4, true));
            join(a.close("f0"));
        }
        assertTrue(Fsck.check(image, false).clean(), () -> Fsck.check(image, false).report());
        try (Volume v = Volumes.open(image)) {
            for (int i = 0; i < opened; i++) {
                List<Extent> extents = join(v.allocator().fileExtents("f" + i));
                assertEquals(8, extents.stream().mapToLong(Extent::blocks).sum(), "f" + i + " after the reopen");
            }
        }
    }

    /**
     * New extent owners racing for the table's last blocks: each allocation is answered, the refused ones
     * with NoSpace and nothing of theirs kept (their blocks go back), the others held; fsck is clean.
     */
    @Test
    void ownersRacingForTheLastBlocksKeepNothingWhenRefused() throws Exception {
        Path image = Volumes.make(dir, 4);
        try (Volume v = Volumes.open(image)) {
            VolumeAllocator a = v.allocator();
            long free = join(a.freeBlocks());
            List<java.util.concurrent.CompletableFuture<List<Extent>>> calls = new java.util.ArrayList<>();
            for (int i = 0; i < 100; i++)
                calls.add(a.allocate("owner-" + i, 4, 1, 0, -1).toCompletableFuture());
            long held = 0;
            int admitted = 0, refused = 0;
            for (var c : calls) {
                try {
                    held += c.get(30, java.util.concurrent.TimeUnit.SECONDS).stream().mapToLong(Extent::blocks).sum();
                    admitted++;
                } catch (java.util.concurrent.ExecutionException e) {
                    assertInstanceOf(AllocationException.NoSpace.class, e.getCause());
                    refused++;
                }
            }
            assertTrue(admitted >= 32 && refused > 0, admitted + " admitted, " + refused + " refused");
            assertEquals(4L * admitted, held);
            assertEquals(free - held, join(a.freeBlocks()), "the refused owners' blocks went back");
        }
        assertTrue(Fsck.check(image, false).clean(), () -> Fsck.check(image, false).report());
    }
}
