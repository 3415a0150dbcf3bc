package org.blockyard.runtime.alloc;

import static org.blockyard.runtime.alloc.AllocatorChecks.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;

/** The extent interface serves a request in one extent whenever a free run holds it. */
class ExtentFitTest {

    /** Claims every data block, then frees the given holes. */
    private static void leaveHoles(ActorBlockAllocator a, Extent... holes) {
        List<Extent> all = await(a.allocate(a.geometry().dataBlocks(), 1, 0, -1));
        assertEquals(a.geometry().dataBlocks(), all.stream().mapToLong(Extent::blocks).sum());
        for (Extent hole : holes) {
            List<Extent> mine = new ArrayList<>();
            for (Extent e : all) {
                long s = Math.max(e.start(), hole.start()), t = Math.min(e.end(), hole.end());
                if (s < t) mine.add(new Extent(s, t - s));
            }
            await(a.release(mine));
        }
    }

    @Test
    void aRequestIsServedInOneExtentEvenWhenTheFirstRunAfterTheHintIsTooSmall() {
        Geometry g = Geometry.of(4096, 4096, 4096);
        try (ActorBlockAllocator a = ActorBlockAllocator.start(AllocatorSettings.of(g, ReservationPolicy.extended()))) {
            leaveHoles(a, new Extent(100, 8), new Extent(500, 16), new Extent(2000, 40), new Extent(3000, 32));
            List<Extent> got = await(a.allocate(32, 1, 0, 100));
            assertEquals(List.of(new Extent(3000, 32)), got, "the smallest run that holds the request");
        }
    }

    @Test
    void aRunBigEnoughInALaterGroupIsFoundBeforeTheRequestIsSplit() {
        Geometry g = Geometry.of(4096, 4 * 1024, 1024);
        try (ActorBlockAllocator a = ActorBlockAllocator.start(AllocatorSettings.of(g, ReservationPolicy.extended()))) {
            List<Extent> holes = new ArrayList<>();
            for (int i = 0; i < 10; i++) holes.add(new Extent(100 + 50L * i, 10)); // group 0: 100 blocks in pieces
            holes.add(new Extent(3 * 1024 + 500, 64));                            // group 3: one run
            leaveHoles(a, holes.toArray(Extent[]::new));
            List<Extent> got = await(a.allocate(48, 1, 0, 100));
            assertEquals(List.of(new Extent(3 * 1024 + 500, 48)), got);
        }
    }

    @Test
    void theWalkAsksOnlyTheGroupWhoseLongestRunHoldsThePieceBeforeSplitting() {
        Geometry g = Geometry.of(4096, 100_000L * 256, 256);
        VolumeState volume = new VolumeState(g);
        for (int i = 0; i < g.groups(); i++) {
            volume.publishFree(i, 100);
            volume.publishRuns(i, 10, 1 << 3); // many short runs everywhere...
        }
        volume.publishRuns(77_777, 200, 1 << 7 | 1 << 3); // ...and one that holds the request
        ExtentWalk walk = new ExtentWalk(volume, 64, 1, 0, g.groupStart(5), -1);
        assertEquals(77_777, walk.next());
        BlockGroup.ExtentClaim claim = walk.claimFor(77_777);
        assertEquals(true, claim.wholeOnly());
        walk.took(List.of());
        assertEquals(5, walk.next(), "with no whole fit left, the splitting pass starts at the hint's group");
        assertEquals(false, walk.claimFor(5).wholeOnly());
    }

    @Test
    void withoutARunThatHoldsItTheRequestTakesTheLongestRunsFirst() {
        Geometry g = Geometry.of(4096, 4096, 4096);
        try (ActorBlockAllocator a = ActorBlockAllocator.start(AllocatorSettings.of(g, ReservationPolicy.extended()))) {
            leaveHoles(a, new Extent(100, 8), new Extent(200, 8), new Extent(1000, 30), new Extent(2000, 20));
            List<Extent> got = await(a.allocate(45, 1, 0, 100));
            assertEquals(List.of(new Extent(1000, 30), new Extent(2000, 15)), got);
        }
    }

    @Test
    void theIncrementalScoreEqualsTheScoreOfAllFreeExtentsEnumerated() {
        Geometry g = Geometry.of(4096, 8 * 512, 512);
        try (ActorBlockAllocator a = ActorBlockAllocator.start(AllocatorSettings.of(g, ReservationPolicy.extended()))) {
            Random rnd = new Random(7);
            List<List<Extent>> owned = new ArrayList<>();
            List<String> files = new ArrayList<>();
            for (int op = 0; op < 600; op++) {
                int what = rnd.nextInt(10);
                if (what < 5) {
                    int unit = rnd.nextBoolean() ? 1 : 8;
                    long hint = rnd.nextBoolean() ? -1 : rnd.nextInt((int) g.totalBlocks());
                    try {
                        owned.add(await(a.allocate(unit * (1 + rnd.nextInt(24)), unit, rnd.nextBoolean() ? 0 : unit * 8, hint)));
                    } catch (org.blockyard.api.alloc.AllocationException.NoSpace full) {
                        // a full volume is part of the scenario
                    }
                } else if (what < 8 && !owned.isEmpty()) {
                    await(a.release(owned.remove(rnd.nextInt(owned.size()))));
                } else if (what == 8) {
                    String f = "/d/f" + op;
                    await(a.open(f));
                    await(a.getBlocks(f, 0, 1 + rnd.nextInt(40), true));
                    files.add(f);
                } else if (!files.isEmpty()) {
                    String f = files.remove(rnd.nextInt(files.size()));
                    await(a.truncate(f, 0));
                    await(a.close(f));
                }
                if (op % 50 == 49) assertEquals(enumerated(a), a.volume().fragmentationScore(), 1e-12, "after op " + op);
            }
            assertEquals(enumerated(a), await(a.fragmentationScore()), 1e-12);
        }
    }

    private static double enumerated(ActorBlockAllocator a) {
        FragmentationScore score = new FragmentationScore(a.geometry().blockSizeBytes());
        for (Extent e : await(a.freeExtents(0, a.geometry().totalBlocks(), Integer.MAX_VALUE)).extents())
            score.addFreeExtent(e.blocks());
        return score.score();
    }
}
