package org.blockyard.runtime.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;

/**
 * A claim of many whole pieces of one length, served in one best-fit walk, places them where as many claims of
 * one piece each, every one hinted right after the last, would.
 */
class CarveTest {

    @Test
    void oneWalkForManyPiecesPlacesThemAsOneClaimPerPieceWould() {
        Geometry g = Geometry.of(4096, 4 * 4096, 4096);
        for (int seed = 0; seed < 30; seed++) {
            Random rnd = new Random(seed);
            BlockGroup batch = new BlockGroup(g, 1, ReservationPolicy.of(ReservationPolicy.Mode.EXT3, 4, 32));
            BlockGroup single = new BlockGroup(g, 1, ReservationPolicy.of(ReservationPolicy.Mode.EXT3, 4, 32));
            // The same random holes in both: runs of many lengths.
            for (long at = batch.start(); at < batch.start() + 4000; ) {
                long len = 1 + rnd.nextInt(40);
                if (rnd.nextBoolean()) {
                    Extent e = new Extent(at, Math.min(len, batch.start() + 4096 - at));
                    batch.claimExtents(new BlockGroup.ExtentClaim(e.blocks(), 1, 0, 1, e.start(), false));
                    single.claimExtents(new BlockGroup.ExtentClaim(e.blocks(), 1, 0, 1, e.start(), false));
                }
                at += len;
            }
            assertEquals(single.freeBlocks(), batch.freeBlocks());
            long piece = 1L << rnd.nextInt(5);
            int count = 1 + rnd.nextInt(60);
            List<Extent> together = batch.claimExtents(
                    new BlockGroup.ExtentClaim(piece * count, 1, piece, 1, -1, true, true, 0));
            List<Extent> oneByOne = new ArrayList<>();
            long hint = -1;
            for (int i = 0; i < count; i++) {
                List<Extent> got = single.claimExtents(new BlockGroup.ExtentClaim(piece, 1, piece, 1, hint, true, true, 0));
                if (got.isEmpty()) break;
                oneByOne.addAll(got);
                hint = got.get(got.size() - 1).end();
            }
            assertEquals(oneByOne, together, "seed " + seed + ", " + count + " pieces of " + piece);
            batch.runIndex().check(batch.bitmap());
        }
    }
}
