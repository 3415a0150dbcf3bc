package org.blockyard.runtime.volume;

import static org.blockyard.runtime.volume.Volumes.join;
import static org.blockyard.runtime.volume.Volumes.refusal;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Extent;
import org.blockyard.runtime.alloc.FileState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The limits docs/limits.md states, each at its number and one past it: what is at the limit works and is
 * there after a reopen; what is past it is refused with a typed error and changes nothing. (The file table's
 * entries and an entry's extents have tests of their own: {@code FileTableFullTest}, {@code EntryLimitTest}.)
 */
class VolumeLimitsTest {
    @TempDir
    Path dir;

    @Test
    void theLargestVolumeTheFormatTakesWithTheDefaultGroups() {
        // 4 KiB blocks, 32,768-block groups, the default 1,024-block file table: group 0 holds the descriptors
        // of 3,931,776 groups (about 480 TiB) beside the smallest journal; one group more does not fit.
        long groups = 3_931_776L, bpg = 32_768;
        Layout at = Layout.make(4096, groups * bpg, (int) bpg, 1024,
                Layout.defaultJournalBlocks(4096, groups * bpg, (int) bpg, 1024, 1024), 0, 0);
        assertEquals(groups, at.geometry().groups());
        long past = (groups + 1) * bpg;
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Layout.make(4096, past,
                (int) bpg, 1024, Layout.defaultJournalBlocks(4096, past, (int) bpg, 1024, 1024), 0, 0));
        assertTrue(e.getMessage().startsWith("group 0 of 32768 blocks cannot hold its bitmap, 30718 descriptor blocks"),
                e.getMessage());
    }

    @Test
    void namesOfUpTo216BytesAndNotOneMore() {
        Path image = Volumes.make(dir, 4);
        String ascii = "n".repeat(Layout.MAX_NAME_BYTES), euros = "\u20ac".repeat(Layout.MAX_NAME_BYTES / 3);
        assertEquals(216, euros.getBytes(StandardCharsets.UTF_8).length);
        try (Volume v = Volumes.open(image)) {
            VolumeAllocator a = v.allocator();
            long free = join(a.freeBlocks());
            for (String name : List.of(ascii + "n", euros + "e", "\u20ac" + euros)) {
                assertInstanceOf(AllocationException.InvalidRequest.class, refusal(a.open(name)), name.length() + "");
                assertInstanceOf(AllocationException.InvalidRequest.class, refusal(a.allocate(name, 1, 1, 0, -1)));
            }
            assertEquals(List.of(), a.files(), "nothing was created");
            assertEquals(free, join(a.freeBlocks()), "nothing was allocated");
            for (String name : List.of(ascii, euros)) {
                join(a.open(name));
                join(a.getBlocks(name, 0, 1, true));
                join(a.close(name));
            }
            join(a.allocate(ascii, 3, 1, 0, -1));
        }
        try (Volume v = Volumes.open(image)) {
            assertEquals(List.of(ascii, euros).stream().sorted().toList(), v.allocator().files());
            assertEquals(1, join(v.allocator().fileExtents(euros)).size());
        }
        assertTrue(Fsck.check(image, false).clean());
    }

    @Test
    void theLastBlockOfTheLargestFileAndNotOneMore() {
        Path image = Volumes.make(dir, 4);
        long last = FileState.MAX_LOGICAL_BLOCKS - 1; // 2^48 blocks: 1 EiB with 4 KiB blocks
        try (Volume v = Volumes.open(image)) {
            VolumeAllocator a = v.allocator();
            join(a.open("big"));
            BlockRun r = join(a.getBlocks("big", last, 1, true));
            assertEquals(1, r.blocks());
            for (long[] past : new long[][] {{last + 1, 1}, {last, 2}, {Long.MAX_VALUE, 1}}) {
                AllocationException e = refusal(a.getBlocks("big", past[0], (int) past[1], true));
                assertInstanceOf(AllocationException.OutOfRange.class, e, "" + past[0]);
                assertTrue(e.getMessage().contains("largest file"), e.getMessage());
            }
            assertEquals(List.of(new Extent(r.physicalStart(), 1)), join(a.fileExtents("big")), "nothing else mapped");
            join(a.close("big"));
        }
        try (Volume v = Volumes.open(image)) {
            VolumeAllocator a = v.allocator();
            join(a.open("big"));
            BlockRun again = join(a.getBlocks("big", last, 1, false));
            assertEquals(1, again.blocks(), "the last block of the largest file is mapped after a reopen");
            join(a.close("big"));
        }
        assertTrue(Fsck.check(image, false).clean());
    }
}
