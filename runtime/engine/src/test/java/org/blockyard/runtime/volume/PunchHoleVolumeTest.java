package org.blockyard.runtime.volume;

import static org.blockyard.runtime.volume.Volumes.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.blockyard.api.alloc.Extent;

/**
 * A hole punched in the middle of a file on a durable volume is journalled as a discard is: after a clean
 * reopen and after a crash the file's map has the hole, its blocks are free, and fsck is clean.
 */
class PunchHoleVolumeTest {
    /** Without preallocation, whose blocks a punch gives back too: the free count moves only by the punch. */
    private static final Config NO_PREALLOC =
            ConfigFactory.parseString("blockyard.alloc.prealloc-min-window-blocks = 0").withFallback(Volumes.CONFIG);

    @TempDir
    Path dir;

    private static long blocks(List<Extent> extents) {
        return extents.stream().mapToLong(Extent::blocks).sum();
    }

    private static void write(VolumeAllocator a, String file, int blocks) {
        for (int l = 0; l < blocks; l += 8) join(a.getBlocks(file, l, 8, true));
        join(a.markWritten(file, 0, blocks));
    }

    private static void checkHole(VolumeAllocator a, String file, long free) {
        assertEquals(free, join(a.freeBlocks()));
        assertEquals(256 - 64, blocks(join(a.fileExtents(file))));
        join(a.open(file));
        assertTrue(join(a.getBlocks(file, 96, 64, false)).isHole());
        assertTrue(join(a.getBlocks(file, 159, 1, false)).isHole());
        assertEquals(96, join(a.getBlocks(file, 0, 256, false)).blocks());
        assertEquals(96, join(a.getBlocks(file, 160, 256, false)).blocks());
        join(a.close(file));
    }

    @Test
    void aPunchedHoleStaysAfterAReopen() {
        Path image = Volumes.make(dir, 4);
        long free;
        try (Volume v = Volume.open(image, NO_PREALLOC, Volumes.FAST)) {
            VolumeAllocator a = v.allocator();
            join(a.open("f"));
            write(a, "f", 256);
            long before = join(a.freeBlocks());
            assertEquals(64L, join(a.punchHole("f", 96, 64)));
            free = join(a.freeBlocks());
            assertEquals(before + 64, free);
            join(a.close("f"));
        }
        assertTrue(Fsck.check(image, false).clean(), () -> Fsck.check(image, false).report());
        try (Volume v = Volumes.open(image)) {
            checkHole(v.allocator(), "f", free);
        }
        assertTrue(Fsck.check(image, false).clean(), () -> Fsck.check(image, false).report());
    }

    /** The journal waits up to an hour for company, so only the punch's caller waiting for it makes it go out. */
    @Test
    void anAcknowledgedPunchSurvivesACrash() {
        Path image = Volumes.make(dir, 4);
        Volume v = Volume.open(image, NO_PREALLOC, new Journal.Settings(TimeUnit.HOURS.toNanos(1), 256, 0.5));
        VolumeAllocator a = v.allocator();
        join(a.open("f"));
        write(a, "f", 256);
        long before = join(a.freeBlocks());
        assertEquals(64L, join(a.punchHole("f", 96, 64)));
        assertEquals(0L, join(a.punchHole("f", 100, 8)), "a second punch frees nothing more");
        long free = join(a.freeBlocks());
        assertEquals(before + 64, free);
        v.abandon(); // as kill -9, the file still open: nothing more reaches the disk
        try (Volume again = Volumes.open(image)) {
            checkHole(again.allocator(), "f", free);
        }
        assertTrue(Fsck.check(image, false).clean(), () -> Fsck.check(image, false).report());
    }
}
