package org.blockyard.runtime.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

class FragmentationScoreTest {

    private static final int BLOCK = 4096;

    @Test
    void oneFreeExtentScoresZeroAtEverySize() {
        long[] lengths = {2, 3, 7, 255, 256, 257, 32768, 1_000_003, (1L << 28) - 1, 1L << 28};
        for (long blocks : lengths) {
            assertEquals(0.0, FragmentationScore.of(BLOCK, blocks), "one extent of " + blocks + " blocks");
        }
        // 2^40 bytes in one extent, and in two halves of 2^39 (past 128 MiB splitting costs nothing).
        assertEquals(0.0, FragmentationScore.of(BLOCK, 1L << 28));
        assertEquals(0.0, FragmentationScore.of(BLOCK, 1L << 27, 1L << 27), 1e-12);
    }

    @Test
    void freeSpaceInSingleBlocksScoresOne() {
        for (int count : new int[] {2, 3, 1000, 65537}) {
            FragmentationScore score = new FragmentationScore(BLOCK);
            for (int i = 0; i < count; i++) {
                score.addFreeExtent(1);
            }
            assertEquals(1.0, score.score(), count + " single blocks");
            assertEquals(count, score.freeBlocks());
        }
        assertEquals(1.0, FragmentationScore.of(1, 1, 1, 1));
        assertEquals(1.0, FragmentationScore.of(1 << 16, 1, 1));
    }

    @Test
    void noFreeSpaceOrOneFreeBlockScoresZero() {
        assertEquals(0.0, new FragmentationScore(BLOCK).score());
        assertEquals(0.0, FragmentationScore.of(BLOCK, 1));
    }

    @Test
    void mixedExtentsMatchTheHandComputedValue() {
        // Bytes as units: W = 1, 1.2, 1.44. score(4) = 5.76, score(1) = 1, score(3) = 1.2 + 2.88.
        assertEquals((5.76 - 5.08) / (5.76 - 4), FragmentationScore.of(1, 1, 3), 1e-12);
        // 4096-byte blocks {1, 2}: with w = W[12], ideal = 4096 w (1.2 + 2 * 1.44), sum = 4096 w (1 + 2.4),
        // terrible = 3 * 4096 w.
        assertEquals(0.68 / 1.08, FragmentationScore.of(BLOCK, 1, 2), 1e-12);
        // 1 MiB blocks {1, 2}: m21 = 41/35, m22 = 8/7 (the 1.2 -> 1.0 ramp), frag = 31/52.
        assertEquals(31.0 / 52.0, FragmentationScore.of(1 << 20, 1, 2), 1e-12);
    }

    @Test
    void weightsRampFromOnePointTwoToOneBetweenOneAndOneHundredTwentyEightMebibytes() {
        assertEquals(1.0, FragmentationScore.weight(0));
        assertEquals(Math.pow(1.2, 20), FragmentationScore.weight(20), 1e-9);
        assertEquals(1.2, FragmentationScore.multiplier(20));
        assertEquals(41.0 / 35.0, FragmentationScore.multiplier(21), 1e-15);
        assertEquals(36.0 / 35.0, FragmentationScore.multiplier(26), 1e-15);
        assertEquals(1.0, FragmentationScore.multiplier(27));
        assertEquals(FragmentationScore.weight(27), FragmentationScore.weight(40));
        // Interpolation between powers of two: 3 bytes = half way between 2 * 1.2 and 4 * 1.44.
        assertEquals(4.08, FragmentationScore.extentScore(3), 1e-12);
        assertEquals(1L << 40, FragmentationScore.extentScore(1L << 40) / FragmentationScore.weight(40), 1.0);
    }

    @Test
    void splittingAnExtentNeverLowersTheScore() {
        SplittableRandom rnd = new SplittableRandom(7);
        for (int trial = 0; trial < 200; trial++) {
            List<Long> extents = new ArrayList<>();
            int n = 1 + rnd.nextInt(20);
            for (int i = 0; i < n; i++) {
                extents.add(2 + (long) rnd.nextInt(rnd.nextBoolean() ? 64 : 1 << 20));
            }
            double before = FragmentationScore.of(BLOCK, toArray(extents));
            int victim = rnd.nextInt(n);
            long length = extents.get(victim);
            long left = 1 + rnd.nextLong(length - 1);
            extents.set(victim, left);
            extents.add(length - left);
            double after = FragmentationScore.of(BLOCK, toArray(extents));
            assertTrue(after >= before - 1e-12, before + " -> " + after);
            if (length <= 256) {
                // Extents below 1 MiB: every doubling is worth 20% more, so a split strictly costs.
                assertTrue(after > before, before + " -> " + after + " splitting " + length);
            }
            assertTrue(after >= 0.0 && after <= 1.0);
        }
    }

    @Test
    void removingAnExtentRestoresTheEarlierScoreExactly() {
        FragmentationScore score = new FragmentationScore(BLOCK);
        score.addFreeExtent(100);
        score.addFreeExtent(7);
        double before = score.score();
        score.addFreeExtent(12345);
        score.removeFreeExtent(12345);
        assertEquals(before, score.score());
        assertEquals(107, score.freeBlocks());
        assertEquals(2, score.freeExtents());
        score.removeFreeExtent(7);
        assertEquals(0.0, score.score());
    }

    @Test
    void badExtentsAreRejectedWithoutChangingTheScore() {
        assertThrows(IllegalArgumentException.class, () -> new FragmentationScore(0));
        assertThrows(IllegalArgumentException.class, () -> new FragmentationScore(3000));
        FragmentationScore score = new FragmentationScore(BLOCK);
        score.addFreeExtent(5);
        assertThrows(IllegalArgumentException.class, () -> score.addFreeExtent(0));
        assertThrows(IllegalArgumentException.class, () -> score.addFreeExtent(-3));
        assertThrows(IllegalArgumentException.class, () -> score.addFreeExtent(Long.MAX_VALUE / 2));
        assertThrows(IllegalStateException.class, () -> score.removeFreeExtent(6));
        assertThrows(IllegalArgumentException.class, () -> FragmentationScore.extentScore(0));
        assertEquals(5, score.freeBlocks());
        assertEquals(1, score.freeExtents());
    }

    private static long[] toArray(List<Long> list) {
        return list.stream().mapToLong(Long::longValue).toArray();
    }
}
