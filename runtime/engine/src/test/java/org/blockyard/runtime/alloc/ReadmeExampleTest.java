package org.blockyard.runtime.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;

/** The README's embedding example, as written there. */
class ReadmeExampleTest {

    @Test
    void theReadmeExampleRuns() {
        Geometry g = Geometry.standard(8L << 20);                        // 32 GiB of 4 KiB blocks, 32768 per group
        try (ActorBlockAllocator alloc = ActorBlockAllocator.start(AllocatorSettings.of(g, ReservationPolicy.extended()))) {
            alloc.open("/db/segment-7").toCompletableFuture().join();
            BlockRun run = alloc.getBlocks("/db/segment-7", 0, 256, true).toCompletableFuture().join(); // up to 256 contiguous blocks
            List<Extent> ext = alloc.allocate(1024, 16, 256, -1).toCompletableFuture().join();         // BlueStore style
            alloc.release(ext).toCompletableFuture().join();
            double frag = alloc.fragmentationScore().toCompletableFuture().join();                     // Ceph v3 score

            assertEquals(256, run.blocks());
            assertEquals(1024, ext.stream().mapToLong(Extent::blocks).sum());
            assertTrue(ext.stream().allMatch(e -> e.blocks() <= 256 && e.start() % 16 == 0));
            assertTrue(frag >= 0 && frag < 0.01, "one file's run leaves free space nearly whole: " + frag);
        }
    }
}
