package org.blockyard.runtime.volume;

import static org.blockyard.runtime.volume.Volumes.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Leaks in more groups than one transaction can log: the reconcile after an unclean shutdown (and at close)
 * commits in steps, each within the journal's largest transaction, instead of failing the open.
 */
class ReconcileInStepsTest {
    @TempDir
    Path dir;

    @Test
    void leaksInEveryGroupOfAVolumeWithASmallJournalAreFreedInSteps() {
        Path image = dir.resolve("vol.img");
        int groups = 96;
        Layout layout = Layout.make(4096, 1024L * groups, 1024, 16, 32, 0, 0); // 31 log blocks
        Volume.mkfs(image, layout);
        long free;
        try (Volume v = Volumes.open(image)) {
            free = join(v.allocator().freeBlocks());
        }
        // A used run no one owns in every group (what a crash leaves of preallocations), on a dirty volume.
        Tamper.rewrite(image, m -> {
            for (int g = 0; g < groups; g++) m.bitmapChanged(g, layout.geometry().groupStart(g) + 900, 7, true);
        });
        Superblock sb = Superblock.decode(Tamper.read(image, 0, Superblock.BYTES), 0, "t");
        Tamper.write(image, 0, sb.withState(false, sb.mounts()).encode());

        try (Volume v = Volumes.open(image)) {
            assertEquals(7L * groups, v.recovery().leaksFreed(), v.recovery().toString());
            assertEquals(free, (long) join(v.allocator().freeBlocks()));
        }
        Fsck.Result r = Fsck.check(image, false);
        assertTrue(r.clean(), r::report);
    }
}
