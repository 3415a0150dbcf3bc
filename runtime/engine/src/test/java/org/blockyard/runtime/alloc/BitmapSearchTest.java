package org.blockyard.runtime.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.BitSet;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

/** Cost guarantees of the searches (counted in words read, never in time), slicing, and argument checks. */
class BitmapSearchTest {

    private static final int GROUP_BLOCKS = 32768;
    private static final int MEGA_BLOCKS = 1 << 20;

    @Test
    void nextFreeOnAFullMillionBitGroupReadsAHandfulOfWords() {
        Bitmap bitmap = new Bitmap(MEGA_BLOCKS);
        bitmap.setUsed(0, MEGA_BLOCKS - 1);
        long before = bitmap.wordsExamined();
        assertEquals(MEGA_BLOCKS - 1, bitmap.nextFree(0, MEGA_BLOCKS));
        long words = bitmap.wordsExamined() - before;
        // 16384 bitmap words under summaries of 256, 4 and 1 words: up the tree and down again.
        assertTrue(words <= 8, "read " + words + " words");

        bitmap.setUsed(MEGA_BLOCKS - 1, 1);
        before = bitmap.wordsExamined();
        assertEquals(Bitmap.NOT_FOUND, bitmap.nextFree(0, MEGA_BLOCKS));
        assertTrue(bitmap.wordsExamined() - before <= 8);
    }

    @Test
    void nextUsedOnAnEmptyMillionBitGroupReadsAHandfulOfWords() {
        Bitmap bitmap = new Bitmap(MEGA_BLOCKS);
        bitmap.setUsed(MEGA_BLOCKS - 1, 1);
        long before = bitmap.wordsExamined();
        assertEquals(MEGA_BLOCKS - 1, bitmap.nextUsed(3, MEGA_BLOCKS));
        assertEquals(MEGA_BLOCKS - 3, bitmap.freeRunLength(2, Integer.MAX_VALUE));
        assertTrue(bitmap.wordsExamined() - before <= 16);
    }

    @Test
    void everySearchStaysWithinTwoWordsPerTreeLevel() {
        SplittableRandom rnd = new SplittableRandom(42);
        Bitmap bitmap = new Bitmap(MEGA_BLOCKS);
        for (int i = 0; i < 2000; i++) {
            int from = rnd.nextInt(MEGA_BLOCKS);
            int count = Math.min(MEGA_BLOCKS - from, 1 + rnd.nextInt(5000));
            if (bitmap.firstUsedIn(from, count) < 0) {
                bitmap.setUsed(from, count);
            }
        }
        for (int i = 0; i < 2000; i++) {
            int from = rnd.nextInt(MEGA_BLOCKS);
            long before = bitmap.wordsExamined();
            bitmap.nextFree(from, MEGA_BLOCKS);
            bitmap.nextUsed(from, MEGA_BLOCKS);
            assertTrue(bitmap.wordsExamined() - before <= 2 * 8);
        }
    }

    @Test
    void slicedSearchFindsWhatTheUnslicedSearchFindsForEveryBudget() {
        SplittableRandom rnd = new SplittableRandom(2011);
        int[] sizes = {64, 4096, GROUP_BLOCKS, 262144, MEGA_BLOCKS};
        for (int size : sizes) {
            Bitmap bitmap = sparseFreeBitmap(size, rnd, 40);
            for (int q = 0; q < 60; q++) {
                int from = rnd.nextInt(size);
                int to = from + rnd.nextInt(size - from + 1);
                int expected = bitmap.nextFree(from, to);
                for (int budget = 1; budget <= 10; budget++) {
                    assertEquals(expected, slicedToCompletion(bitmap, from, to, budget),
                            "size " + size + " [" + from + ", " + to + ") budget " + budget);
                }
            }
        }
    }

    @Test
    void slicedSearchOnAFullGroupWithBudgetOneResumesUntilTheEnd() {
        Bitmap bitmap = new Bitmap(GROUP_BLOCKS);
        bitmap.setUsed(0, GROUP_BLOCKS);
        bitmap.setFree(GROUP_BLOCKS - 5, 1);
        assertEquals(GROUP_BLOCKS - 5, slicedToCompletion(bitmap, 0, GROUP_BLOCKS, 1));
        assertEquals(Bitmap.NOT_FOUND, slicedToCompletion(bitmap, 0, GROUP_BLOCKS - 5, 1));
    }

    /** Repeats a sliced search from each resume point; checks the budget and progress of every slice. */
    private static int slicedToCompletion(Bitmap bitmap, int from, int to, int budget) {
        int p = from;
        for (int slices = 0; slices <= to - from + 1; slices++) {
            long before = bitmap.wordsExamined();
            int r = bitmap.nextFreeSliced(p, to, budget);
            assertTrue(bitmap.wordsExamined() - before <= budget, "slice read more than its budget");
            if (!Bitmap.exhausted(r)) {
                return r;
            }
            int resume = Bitmap.resumeAt(r);
            assertTrue(resume > p && resume < to, "resume point " + resume + " after " + p + " in [.., " + to + ")");
            p = resume;
        }
        throw new AssertionError("sliced search did not finish");
    }

    @Test
    void resumeEncodingRoundTrips() {
        for (int p : new int[] {0, 1, 63, 64, 1 << 20, Integer.MAX_VALUE - 64}) {
            int r = -(p + 2);
            assertTrue(Bitmap.exhausted(r));
            assertEquals(p, Bitmap.resumeAt(r));
        }
        assertFalse(Bitmap.exhausted(Bitmap.NOT_FOUND));
        assertFalse(Bitmap.exhausted(0));
        assertThrows(IllegalArgumentException.class, () -> Bitmap.resumeAt(Bitmap.NOT_FOUND));
    }

    /**
     * Seed 001: with a one-block stripe, ext4_mb_scan_aligned stepped one stripe at a time from the start
     * of the group, 328,215,171 iterations where find_next_zero_bit needed 25,055. Here an aged, mostly full
     * group is filled up by repeated aligned requests; every answer must equal the stepping search's, and
     * the words read must be a small fraction of the stepping search's iterations.
     */
    @Test
    void alignedSearchWithAOneBlockStripeReadsFarFewerWordsThanSteppingOneStripeAtATime() {
        long[] counts = fillByAlignedRequests(1, 0, 1);
        long stepping = counts[0];
        long words = counts[1];
        assertTrue(stepping >= 200 * words, "stepping " + stepping + " iterations vs " + words + " words");
    }

    @Test
    void alignedSearchWithASixteenBlockStripeReadsFewerWordsThanSteppingOneStripeAtATime() {
        // Absolute alignment: the group starts at block 3 * 32768 + 5 of the volume.
        long[] counts = fillByAlignedRequests(16, 3 * GROUP_BLOCKS + 5, 16);
        long stepping = counts[0];
        long words = counts[1];
        assertTrue(stepping >= 10 * words, "stepping " + stepping + " iterations vs " + words + " words");
    }

    /**
     * Ages a group (used extents of 16 to 2048 blocks between holes of 1 to 24 blocks, free space at the
     * end), then allocates {@code runLength} aligned blocks from the group start until nothing fits,
     * comparing each answer with ext4_mb_scan_aligned's stepping loop.
     *
     * @return {stepping loop iterations, words read by the bitmap}
     */
    private static long[] fillByAlignedRequests(int alignment, int alignOffset, int runLength) {
        SplittableRandom rnd = new SplittableRandom(1);
        Bitmap bitmap = new Bitmap(GROUP_BLOCKS);
        BitSet oracle = new BitSet(GROUP_BLOCKS);
        int p = 0;
        while (p < GROUP_BLOCKS * 9 / 10) {
            int used = Math.min(GROUP_BLOCKS - p, 16 + rnd.nextInt(2033));
            bitmap.setUsed(p, used);
            oracle.set(p, p + used);
            p += used + 1 + rnd.nextInt(24);
        }
        long stepping = 0;
        long words = 0;
        for (int request = 0; ; request++) {
            long before = bitmap.wordsExamined();
            int found = bitmap.nextAlignedFree(0, GROUP_BLOCKS, alignment, alignOffset, runLength);
            words += bitmap.wordsExamined() - before;
            long[] steps = new long[1];
            int expected = steppingScan(oracle, alignment, alignOffset, runLength, steps);
            stepping += steps[0];
            assertEquals(expected, found, "request " + request);
            if (found < 0) {
                break;
            }
            bitmap.setUsed(found, runLength);
            oracle.set(found, found + runLength);
        }
        assertTrue(bitmap.freeCount() < GROUP_BLOCKS / 10);
        return new long[] {stepping, words};
    }

    /** ext4_mb_scan_aligned: from the first aligned block, test each stripe-aligned block in turn. */
    private static int steppingScan(BitSet bits, int stripe, int groupFirstBlock, int runLength, long[] iterations) {
        int i = (int) (Math.floorMod(-(long) groupFirstBlock, (long) stripe));
        while (i + runLength <= GROUP_BLOCKS) {
            iterations[0]++;
            if (!bits.get(i)) {
                int used = bits.nextSetBit(i);
                if (used < 0 || used >= i + runLength) {
                    return i;
                }
            }
            i += stripe;
        }
        return -1;
    }

    @Test
    void badArgumentsAreRejectedWithoutChangingAnything() {
        Bitmap bitmap = new Bitmap(4096);
        bitmap.setUsed(100, 10);
        Bitmap before = bitmap.copy();
        assertThrows(IllegalArgumentException.class, () -> new Bitmap(0));
        assertThrows(IllegalArgumentException.class, () -> new Bitmap(100));
        assertThrows(IllegalArgumentException.class, () -> new Bitmap(-64));
        assertThrows(IllegalArgumentException.class, () -> bitmap.isUsed(4096));
        assertThrows(IllegalArgumentException.class, () -> bitmap.isUsed(-1));
        assertThrows(IllegalArgumentException.class, () -> bitmap.nextFree(-1, 10));
        assertThrows(IllegalArgumentException.class, () -> bitmap.nextFree(10, 4097));
        assertThrows(IllegalArgumentException.class, () -> bitmap.nextUsed(20, 10));
        assertThrows(IllegalArgumentException.class, () -> bitmap.nextFreeSliced(0, 10, 0));
        assertThrows(IllegalArgumentException.class, () -> bitmap.freeRunLength(0, -1));
        assertThrows(IllegalArgumentException.class, () -> bitmap.freeRunLength(4097, 1));
        assertThrows(IllegalArgumentException.class, () -> bitmap.claimRun(0, 0));
        assertThrows(IllegalArgumentException.class, () -> bitmap.claimRun(4096, 1));
        assertThrows(IllegalArgumentException.class, () -> bitmap.setUsed(0, -1));
        assertThrows(IllegalArgumentException.class, () -> bitmap.setUsed(4000, 97));
        assertThrows(IllegalArgumentException.class, () -> bitmap.setFree(Integer.MAX_VALUE, 2));
        assertThrows(IllegalArgumentException.class, () -> bitmap.firstUsedIn(4095, 2));
        assertThrows(IllegalArgumentException.class, () -> bitmap.nextAlignedFree(0, 10, 0, 0, 1));
        assertThrows(IllegalArgumentException.class, () -> bitmap.nextAlignedFree(0, 10, 8, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> bitmap.forEachFreeRun(0, 10, null));
        assertThrows(IllegalArgumentException.class, () -> Bitmap.fromWords(new long[0]));
        IllegalStateException used = assertThrows(IllegalStateException.class, () -> bitmap.setUsed(90, 20));
        assertTrue(used.getMessage().contains("block 100 "), used.getMessage());
        IllegalStateException free = assertThrows(IllegalStateException.class, () -> bitmap.setFree(105, 10));
        assertTrue(free.getMessage().contains("block 110 "), free.getMessage());
        assertThrows(IllegalStateException.class, () -> bitmap.claimRun(100, 5));
        assertTrue(before.sameBits(bitmap));
        bitmap.checkConsistency();
    }

    @Test
    void claimRunStopsAtTheFirstUsedBlockAndNeverSkipsAHole() {
        Bitmap bitmap = new Bitmap(256);
        bitmap.setUsed(70, 1);
        assertEquals(6, bitmap.claimRun(64, 100));
        assertTrue(bitmap.isUsed(69));
        assertEquals(Bitmap.NOT_FOUND, bitmap.firstFreeIn(64, 7));
        assertEquals(10, bitmap.claimRun(71, 10));
        assertEquals(175, bitmap.claimRun(81, 1000));
        assertEquals(256 - 6 - 1 - 10 - 175, bitmap.freeCount());
    }

    @Test
    void emptyRangesFindNothing() {
        Bitmap bitmap = new Bitmap(128);
        assertEquals(Bitmap.NOT_FOUND, bitmap.nextFree(128, 128));
        assertEquals(Bitmap.NOT_FOUND, bitmap.nextUsed(5, 5));
        assertEquals(0, bitmap.freeRunLength(128, 10));
        assertEquals(Bitmap.NOT_FOUND, bitmap.nextAlignedFree(1, 128, 64, 0, 65));
        assertEquals(64, bitmap.nextAlignedFree(1, 128, 64, 0, 64));
        bitmap.setUsed(0, 0);
        bitmap.setFree(128, 0);
        assertEquals(0, bitmap.usedCount());
    }

    /** A bitmap with about {@code freePerMille} free blocks per thousand, in short holes. */
    private static Bitmap sparseFreeBitmap(int size, SplittableRandom rnd, int freePerMille) {
        Bitmap bitmap = new Bitmap(size);
        bitmap.setUsed(0, size);
        int holes = Math.max(1, size * freePerMille / 1000 / 4);
        for (int i = 0; i < holes; i++) {
            int start = rnd.nextInt(size);
            int len = Math.min(size - start, 1 + rnd.nextInt(7));
            if (bitmap.firstFreeIn(start, len) < 0) {
                bitmap.setFree(start, len);
            }
        }
        // Long free and long used stretches, so the summaries skip in both directions.
        if (size >= 4096) {
            int start = size / 3;
            int len = size / 8;
            int used = bitmap.nextUsed(start, start + len);
            while (used >= 0) {
                int end = bitmap.nextFree(used, start + len);
                int n = (end < 0 ? start + len : end) - used;
                bitmap.setFree(used, n);
                used = bitmap.nextUsed(used + n, start + len);
            }
        }
        return bitmap;
    }
}
