package org.blockyard.runtime.volume;

import static org.blockyard.runtime.volume.Volumes.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.Extent;

/**
 * Deleting a file on a durable volume: its blocks and its file-table blocks are free once the call is
 * answered, after a reopen and after a crash; fsck is clean; a name deleted opens a new, empty file.
 */
class DeleteFileTest {
    @TempDir
    Path dir;

    private static long blocks(List<Extent> extents) {
        return extents.stream().mapToLong(Extent::blocks).sum();
    }

    private static void write(VolumeAllocator a, String file, int blocks) {
        join(a.open(file));
        for (int l = 0; l < blocks; l += 8) join(a.getBlocks(file, l, 8, true));
        join(a.markWritten(file, 0, blocks));
        join(a.close(file));
    }

    @Test
    void aDeletedFileIsGoneAfterAReopenAndItsBlocksAreFree() {
        Path image = Volumes.make(dir, 4);
        long empty;
        try (Volume v = Volumes.open(image)) {
            VolumeAllocator a = v.allocator();
            empty = join(a.freeBlocks());
            write(a, "a", 400);
            write(a, "b", 200);
            join(a.open("open"));
            AllocationException refused = assertThrows(AllocationException.class, () -> join(a.delete("open")));
            assertInstanceOf(AllocationException.InvalidRequest.class, refused);
            join(a.delete("a"));
            assertEquals(empty - 200, join(a.freeBlocks()));
            assertEquals(List.of("b", "open"), a.files());
            join(a.close("open"));
        }
        assertTrue(Fsck.check(image, false).clean(), () -> Fsck.check(image, false).report());
        try (Volume v = Volumes.open(image)) {
            VolumeAllocator a = v.allocator();
            assertEquals(List.of("b", "open"), a.files());
            assertEquals(empty - 200, join(a.freeBlocks()));
            join(a.delete("b")); // stored, never opened in this run
            join(a.delete("open"));
            assertEquals(empty, join(a.freeBlocks()));
            assertInstanceOf(AllocationException.UnknownFile.class,
                    assertThrows(AllocationException.class, () -> join(a.delete("b"))));
            join(a.open("a")); // the name again: a new, empty file
            assertEquals(List.of(), join(a.fileExtents("a")));
            join(a.getBlocks("a", 0, 8, true));
            join(a.close("a"));
        }
        assertTrue(Fsck.check(image, false).clean(), () -> Fsck.check(image, false).report());
        try (Volume v = Volumes.open(image)) {
            assertEquals(List.of("a"), v.allocator().files());
            assertEquals(8, blocks(join(v.allocator().fileExtents("a"))));
            assertEquals(empty - 8, join(v.allocator().freeBlocks()));
        }
    }

    /** The file table's blocks come back with a deleted file: many more files than it holds, in turn. */
    @Test
    void filesDeletedInTurnNeverFillTheFileTable() {
        Path image = Volumes.make(dir, 4); // 64 file-table blocks: about 60 files at once
        try (Volume v = Volumes.open(image)) {
            VolumeAllocator a = v.allocator();
            long empty = join(a.freeBlocks());
            for (int i = 0; i < 300; i++) {
                write(a, "f" + i, 16);
                if (i >= 20) join(a.delete("f" + (i - 20)));
            }
            assertEquals(20, a.files().size());
            assertEquals(empty - 20 * 16, join(a.freeBlocks()));
        }
        assertTrue(Fsck.check(image, false).clean(), () -> Fsck.check(image, false).report());
        try (Volume v = Volumes.open(image)) {
            assertEquals(20, v.allocator().files().size());
            for (int i = 280; i < 300; i++) assertEquals(16, blocks(join(v.allocator().fileExtents("f" + i))));
        }
    }

    /**
     * An acknowledged delete survives a crash (the process gone before any checkpoint or clean close). The
     * journal waits up to an hour for company, so only a caller waiting for the commit makes it go out.
     */
    @Test
    void anAcknowledgedDeleteSurvivesACrash() {
        Path image = Volumes.make(dir, 4);
        long empty;
        Volume v = Volume.open(image, Volumes.CONFIG, new Journal.Settings(TimeUnit.HOURS.toNanos(1), 256, 0.5));
        VolumeAllocator a = v.allocator();
        empty = join(a.freeBlocks());
        write(a, "kept", 64);
        write(a, "gone", 256);
        join(a.delete("gone"));
        v.abandon(); // as kill -9: nothing more reaches the disk
        try (Volume again = Volumes.open(image)) {
            assertEquals(List.of("kept"), again.allocator().files(), again.recovery().toString());
            assertEquals(empty - 64, join(again.allocator().freeBlocks()));
        }
        assertTrue(Fsck.check(image, false).clean(), () -> Fsck.check(image, false).report());
    }
}
