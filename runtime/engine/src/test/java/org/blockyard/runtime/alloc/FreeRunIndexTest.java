package org.blockyard.runtime.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;

/** The free-run index against a scan of the bitmap it is derived from. */
class FreeRunIndexTest {

    @Test
    void theIndexAgreesWithAScanOfTheBitmapAfterEveryClaimAndFree() {
        Geometry g = Geometry.of(4096, 4 * 256, 256);
        for (int seed = 0; seed < 20; seed++) {
            Random rnd = new Random(seed);
            BlockGroup group = new BlockGroup(g, 1 + rnd.nextInt(3), ReservationPolicy.of(ReservationPolicy.Mode.EXT3, 4, 32));
            if (rnd.nextBoolean()) group.fillFromStart(rnd.nextInt(100));
            check(group);
            List<Extent> owned = new ArrayList<>();
            for (int op = 0; op < 400; op++) {
                int what = rnd.nextInt(10);
                if (what < 3) {
                    long goal = group.start() + rnd.nextInt(256);
                    BlockGroup.Outcome o = group.allocate(BlockGroup.Request.of(rnd.nextInt(6), goal, 1 + rnd.nextInt(6),
                            rnd.nextInt(3), 4, rnd.nextInt(4) > 0, rnd.nextBoolean()));
                    if (o.allocated()) owned.add(new Extent(o.start(), o.blocks()));
                } else if (what < 6) {
                    int unit = rnd.nextBoolean() ? 1 : 4;
                    long hint = rnd.nextBoolean() ? -1 : group.start() + rnd.nextInt(256);
                    owned.addAll(group.claimExtents(new BlockGroup.ExtentClaim(unit * (1 + rnd.nextInt(20)), unit,
                            rnd.nextBoolean() ? 0 : unit * 4, unit, hint, rnd.nextBoolean(), rnd.nextBoolean(), rnd.nextInt(3) * 16)));
                } else if (what < 9 && !owned.isEmpty()) {
                    Extent e = owned.remove(rnd.nextInt(owned.size()));
                    // Free a piece of it sometimes, as a truncate or a returned preallocation does.
                    int cut = rnd.nextInt((int) e.blocks());
                    if (cut > 0 && rnd.nextBoolean()) {
                        owned.add(new Extent(e.start(), cut));
                        e = new Extent(e.start() + cut, e.blocks() - cut);
                    }
                    assertNull(rnd.nextBoolean() ? group.free(List.of(e)) : group.unclaim(e));
                } else {
                    group.discardWindow(rnd.nextInt(6));
                }
                check(group);
            }
        }
    }

    private static void check(BlockGroup group) {
        group.runIndex().check(group.bitmap());
        int[] longest = {0};
        group.bitmap().forEachFreeRun(0, group.bitmap().size(), (s, len) -> {
            longest[0] = Math.max(longest[0], len);
            return true;
        });
        assertEquals(longest[0], group.largestFreeRun());
    }
}
