package org.blockyard.benches;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import com.typesafe.config.Config;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.runtime.alloc.ExtentAllocator;
import org.blockyard.runtime.config.BlockyardConfig;

/**
 * The figures of {@code bench extents} on every allocator it drives: the free-extent histogram accounts for
 * every free block, and the score and rate series have a point per round, in each churn shape.
 */
class ExtentChurnTest {
    private static final Config CONFIG = BlockyardConfig.load();
    private static final long VOLUME = 512L << 20; // four groups of 128 MiB

    @ParameterizedTest
    @ValueSource(strings = {Aging.BLOCKYARD, Tiobench.GLOBAL_LOCK, Tiobench.GROUP_LOCKS, Aging.DYNAMIC_FIT})
    @SuppressWarnings("unchecked")
    void theHistogramBucketsAddUpToTheFreeBlocks(String allocator) {
        Geometry g = Aging.geometry(VOLUME, 4096, CONFIG);
        try (ExtentAllocator a = Aging.open(allocator, g, CONFIG)) {
            Random rnd = new Random(7);
            List<List<Extent>> held = new ArrayList<>();
            for (int i = 0; i < 2_000; i++) held.add(a.allocate(1 + rnd.nextInt(64), 1, 0, -1));
            for (int i = 0; i < held.size(); i += 2) a.release(held.get(i));
            long[] walked = new long[2];
            a.forEachFree(e -> {
                walked[0]++;
                walked[1] += e.blocks();
            });
            Map<String, Object> h = FreeExtentHistogram.of(a, g.blockSizeBytes());
            long extents = 0, bytes = 0;
            for (Map.Entry<String, Object> bucket : h.entrySet()) {
                long from = Long.parseLong(bucket.getKey());
                Map<String, Long> b = (Map<String, Long>) bucket.getValue();
                assertTrue(b.get("extents") > 0, "no empty buckets");
                assertTrue(b.get("bytes") >= from * b.get("extents") && b.get("bytes") < 2 * from * b.get("extents"),
                        "extents of bucket " + from + " are of [" + from + ", " + 2 * from + ") bytes: " + b);
                extents += b.get("extents");
                bytes += b.get("bytes");
            }
            assertEquals(a.freeBlocks() * g.blockSizeBytes(), bytes, "the buckets hold every free byte");
            assertEquals(walked[1], a.freeBlocks());
            assertEquals(walked[0], extents, "and every free extent once");
            assertTrue(h.size() > 3, "an aged volume has free extents of several sizes: " + h.keySet());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {Aging.AGING, RandomChurn.RANDOM_2M, RandomChurn.RANDOM_64K})
    void theScoreAndTheRateHaveOnePointPerRoundAndOneForTheFirstFill(String shape) {
        int rounds = 3;
        Map<String, Object> row = shape.equals(Aging.AGING)
                ? Aging.run(Tiobench.GLOBAL_LOCK, new Aging.Spec(VOLUME, 64 << 10, 0.85, 0.65, rounds, 4L << 20, 4L << 20,
                        4L << 20, 1), CONFIG, null)
                : RandomChurn.run(Tiobench.GLOBAL_LOCK, new RandomChurn.Spec(shape, VOLUME, 4096, 0.9, 0.2, rounds, 3,
                        0, 1), CONFIG, null);
        List<?> scores = (List<?>) row.get("score_v3_by_round"), rates = (List<?>) row.get("allocs_per_s_by_round");
        assertEquals(rounds + 1, scores.size(), shape + ": " + scores);
        assertEquals(rounds + 1, rates.size(), shape + ": " + rates);
        assertEquals((Double) row.get("score_v3"), (Double) scores.get(rounds), 1e-4, "the last point is the score at the end");
        for (Object r : rates) assertTrue(((Number) r).doubleValue() > 0, "every round allocated: " + rates);
        assertEquals(0L, row.get("short_allocations"), "a 90%-full volume answers every call in full");
    }
}
