package org.blockyard.runtime.alloc;

import static org.blockyard.runtime.alloc.AllocatorChecks.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;

import org.junit.jupiter.api.Test;

import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;

/**
 * Concurrent sequential writers of one directory (seed 002), each appending one block per call in
 * lock-step: the layout each policy gives them.
 */
class ConcurrentStreamsTest {

    /** Extents per file after {@code files} writers appended {@code blocks} each, one call per file per round. */
    private static List<Integer> extentsPerFile(AllocationPolicy policy, int files, int blocks, int groups) {
        Geometry g = Geometry.of(4096, (long) groups * 8192, 8192);
        try (ActorBlockAllocator a = ActorBlockAllocator.start(AllocatorSettings.of(g, policy))) {
            List<String> names = new ArrayList<>();
            for (int i = 0; i < files; i++) {
                names.add("/tiobench/file-" + i);
                await(a.open(names.get(i)));
            }
            for (int l = 0; l < blocks; l++) {
                List<CompletionStage<BlockRun>> round = new ArrayList<>();
                for (String n : names) round.add(a.getBlocks(n, l, 1, true));
                for (CompletionStage<BlockRun> r : round) assertEquals(1, await(r).blocks());
            }
            List<Integer> out = new ArrayList<>();
            List<Extent> owned = new ArrayList<>();
            for (String n : names) {
                out.add(await(a.fileExtents(n)).size());
                owned.addAll(await(a.heldExtents(n)));
            }
            AllocatorChecks.checkInvariants(a, owned);
            return out;
        }
    }

    @Test
    void extendedReservationGivesEachStreamAboutOneExtentPerGroupItFills() {
        // 8 writers of 4096 blocks on 8 groups of 8190 data blocks: ideally one extent each.
        List<Integer> extents = extentsPerFile(ReservationPolicy.extended(), 8, 4096, 8);
        double mean = extents.stream().mapToInt(Integer::intValue).average().orElseThrow();
        assertTrue(mean <= 1.25, "extents per file " + extents);
    }

    @Test
    void streamsSharingGroupsStillStartApart() {
        // 8 writers of 1024 blocks in 2 groups: four streams a group, each placed in the largest gap.
        List<Integer> extents = extentsPerFile(ReservationPolicy.extended(), 8, 1024, 2);
        double mean = extents.stream().mapToInt(Integer::intValue).average().orElseThrow();
        assertTrue(mean <= 1.25, "extents per file " + extents);
    }

    @Test
    void withoutReservationConcurrentAppendersInterleaveBlockByBlock() {
        List<Integer> extents = extentsPerFile(ReservationPolicy.noReservation(), 4, 512, 2);
        double meanExtentBlocks = 512.0 / extents.stream().mapToInt(Integer::intValue).average().orElseThrow();
        assertTrue(meanExtentBlocks <= 2, "mean extent " + meanExtentBlocks + " blocks; extents " + extents);
    }

    @Test
    void ext3WindowsCutConcurrentStreamsIntoWindowSizedPieces() {
        List<Integer> extents = extentsPerFile(ReservationPolicy.ext3(), 4, 4096, 4);
        for (int e : extents) assertTrue(e >= 2 && e <= 4096 / 8, "extents " + extents);
        double meanExtentBlocks = 4096.0 / extents.stream().mapToInt(Integer::intValue).average().orElseThrow();
        assertTrue(meanExtentBlocks >= 8 && meanExtentBlocks <= 1027 + 1, "mean extent " + meanExtentBlocks);
    }
}
