package org.blockyard.runtime.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every operation of {@link Bitmap} against a {@link BitSet} that is changed the same way, over many
 * seeds, sizes and fill patterns. Failing preconditions must throw and leave both unchanged.
 */
class BitmapOracleTest {

    enum Pattern { EMPTY, NEAR_EMPTY, RANDOM_HALF, CLUSTERED, NEAR_FULL, FULL }

    static Stream<Arguments> cases() {
        List<Arguments> cases = new ArrayList<>();
        int[] sizes = {64, 128, 192, 4096, 4928, 32768, 262208};
        for (int size : sizes) {
            for (Pattern pattern : Pattern.values()) {
                for (long seed = 1; seed <= 4; seed++) {
                    cases.add(Arguments.of(size, pattern, seed * 7919 + size, 400));
                }
            }
        }
        for (Pattern pattern : Pattern.values()) {
            cases.add(Arguments.of(1 << 20, pattern, 1_048_576L + pattern.ordinal(), 150));
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "size {0}, {1}, seed {2}")
    @MethodSource("cases")
    void everyOperationAgreesWithABitSetOracle(int size, Pattern pattern, long seed, int operations) {
        SplittableRandom rnd = new SplittableRandom(seed);
        Bitmap bitmap = new Bitmap(size);
        BitSet oracle = new BitSet(size);
        fill(bitmap, oracle, pattern, rnd);
        assertSame(bitmap, oracle);

        for (int op = 0; op < operations; op++) {
            int from = rnd.nextInt(size + 1);
            int to = from + rnd.nextInt(Math.min(size - from, rnd.nextBoolean() ? 200 : size) + 1);
            switch (rnd.nextInt(11)) {
                case 0 -> assertEquals(nextClear(oracle, from, to), bitmap.nextFree(from, to),
                        "nextFree(" + from + ", " + to + ")");
                case 1 -> assertEquals(nextSet(oracle, from, to), bitmap.nextUsed(from, to),
                        "nextUsed(" + from + ", " + to + ")");
                case 2 -> {
                    int max = rnd.nextInt(3000);
                    int expected = from < size && !oracle.get(from)
                            ? Math.min(max, Math.min(size, oracle.nextSetBit(from) < 0 ? size : oracle.nextSetBit(from)) - from)
                            : 0;
                    assertEquals(expected, bitmap.freeRunLength(from, max), "freeRunLength(" + from + ", " + max + ")");
                }
                case 3 -> {
                    assertEquals(nextSet(oracle, from, to), bitmap.firstUsedIn(from, to - from));
                    assertEquals(nextClear(oracle, from, to), bitmap.firstFreeIn(from, to - from));
                }
                case 4 -> setUsed(bitmap, oracle, from, to - from);
                case 5 -> setFree(bitmap, oracle, from, to - from);
                case 6 -> {
                    if (from < size) {
                        claimRun(bitmap, oracle, from, 1 + rnd.nextInt(300));
                    }
                }
                case 7 -> {
                    int alignment = 1 << rnd.nextInt(7);
                    int offset = rnd.nextInt(-1000, 1000);
                    int run = 1 + rnd.nextInt(40);
                    assertEquals(naiveAligned(oracle, from, to, alignment, offset, run),
                            bitmap.nextAlignedFree(from, to, alignment, offset, run),
                            "nextAlignedFree(" + from + ", " + to + ", " + alignment + ", " + offset + ", " + run + ")");
                }
                case 8 -> {
                    int alignment = 1 + rnd.nextInt(24); // not only powers of two
                    int offset = rnd.nextInt(100_000);
                    int run = 1 + rnd.nextInt(12);
                    assertEquals(naiveAligned(oracle, from, to, alignment, offset, run),
                            bitmap.nextAlignedFree(from, to, alignment, offset, run));
                }
                case 9 -> {
                    List<int[]> expected = freeRuns(oracle, from, to);
                    List<int[]> actual = new ArrayList<>();
                    bitmap.forEachFreeRun(from, to, (start, length) -> actual.add(new int[] {start, length}));
                    assertRuns(expected, actual);
                    if (expected.size() > 1) {
                        List<int[]> firstOnly = new ArrayList<>();
                        bitmap.forEachFreeRun(from, to, (start, length) -> {
                            firstOnly.add(new int[] {start, length});
                            return false;
                        });
                        assertRuns(expected.subList(0, 1), firstOnly);
                    }
                }
                default -> {
                    int bit = rnd.nextInt(size);
                    assertEquals(oracle.get(bit), bitmap.isUsed(bit), "isUsed(" + bit + ")");
                }
            }
            assertEquals(oracle.cardinality(), bitmap.usedCount());
            assertEquals(size - oracle.cardinality(), bitmap.freeCount());
        }
        assertSame(bitmap, oracle);
        bitmap.checkConsistency();
        Bitmap copy = bitmap.copy();
        assertTrue(copy.sameBits(bitmap));
        copy.checkConsistency();
        assertTrue(Bitmap.fromWords(bitmap.toWords()).sameBits(bitmap));
    }

    // ------------------------------------------------------------------ fill patterns

    private static void fill(Bitmap bitmap, BitSet oracle, Pattern pattern, SplittableRandom rnd) {
        int size = bitmap.size();
        switch (pattern) {
            case EMPTY -> { }
            case FULL -> setUsed(bitmap, oracle, 0, size);
            case NEAR_EMPTY -> {
                for (int i = 0; i < 1 + size / 4096; i++) {
                    int bit = rnd.nextInt(size);
                    if (!oracle.get(bit)) {
                        setUsed(bitmap, oracle, bit, 1);
                    }
                }
            }
            case NEAR_FULL -> {
                setUsed(bitmap, oracle, 0, size);
                for (int i = 0; i < 1 + size / 4096; i++) {
                    int bit = rnd.nextInt(size);
                    if (oracle.get(bit)) {
                        setFree(bitmap, oracle, bit, 1);
                    }
                }
            }
            case RANDOM_HALF -> {
                long[] words = new long[size / 64];
                for (int w = 0; w < words.length; w++) {
                    words[w] = rnd.nextLong();
                }
                Bitmap loaded = Bitmap.fromWords(words);
                BitSet bits = BitSet.valueOf(words);
                for (int b = bits.nextSetBit(0); b >= 0; b = bits.nextSetBit(b + 1)) {
                    setUsed(bitmap, oracle, b, 1);
                }
                assertTrue(loaded.sameBits(bitmap));
                loaded.checkConsistency();
            }
            case CLUSTERED -> {
                int p = 0;
                while (p < size) {
                    int used = Math.min(size - p, 1 + rnd.nextInt(rnd.nextBoolean() ? 8 : 5000));
                    setUsed(bitmap, oracle, p, used);
                    p += used + 1 + rnd.nextInt(rnd.nextBoolean() ? 4 : 300);
                }
            }
        }
    }

    // ------------------------------------------------------------------ mirrored changes

    private static void setUsed(Bitmap bitmap, BitSet oracle, int from, int count) {
        int firstUsed = nextSet(oracle, from, from + count);
        if (firstUsed < 0) {
            bitmap.setUsed(from, count);
            oracle.set(from, from + count);
        } else {
            Bitmap before = bitmap.copy();
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> bitmap.setUsed(from, count));
            assertTrue(e.getMessage().contains("block " + firstUsed + " "), e.getMessage());
            assertTrue(before.sameBits(bitmap));
        }
    }

    private static void setFree(Bitmap bitmap, BitSet oracle, int from, int count) {
        int firstFree = nextClear(oracle, from, from + count);
        if (firstFree < 0) {
            bitmap.setFree(from, count);
            oracle.clear(from, from + count);
        } else {
            Bitmap before = bitmap.copy();
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> bitmap.setFree(from, count));
            assertTrue(e.getMessage().contains("block " + firstFree + " "), e.getMessage());
            assertTrue(before.sameBits(bitmap));
        }
    }

    private static void claimRun(Bitmap bitmap, BitSet oracle, int from, int maxCount) {
        if (oracle.get(from)) {
            Bitmap before = bitmap.copy();
            assertThrows(IllegalStateException.class, () -> bitmap.claimRun(from, maxCount));
            assertTrue(before.sameBits(bitmap));
            return;
        }
        int nextUsed = oracle.nextSetBit(from);
        int end = Math.min(Math.min(bitmap.size(), from + maxCount), nextUsed < 0 ? Integer.MAX_VALUE : nextUsed);
        assertEquals(end - from, bitmap.claimRun(from, maxCount), "claimRun(" + from + ", " + maxCount + ")");
        oracle.set(from, end);
    }

    // ------------------------------------------------------------------ oracle searches

    static int nextSet(BitSet oracle, int from, int to) {
        int b = oracle.nextSetBit(from);
        return b >= 0 && b < to ? b : -1;
    }

    static int nextClear(BitSet oracle, int from, int to) {
        int b = oracle.nextClearBit(from);
        return b < to ? b : -1;
    }

    /** Tries every aligned position in turn: the stepping search the bitmap must not do, as an oracle. */
    static int naiveAligned(BitSet oracle, int from, int to, int alignment, int offset, int run) {
        for (long p = from; p + run <= to; p++) {
            if (Math.floorMod(p + offset, (long) alignment) != 0) {
                continue;
            }
            int used = nextSet(oracle, (int) p, (int) (p + run));
            if (used < 0) {
                return (int) p;
            }
        }
        return -1;
    }

    private static List<int[]> freeRuns(BitSet oracle, int from, int to) {
        List<int[]> runs = new ArrayList<>();
        int p = from;
        while (p < to) {
            int start = nextClear(oracle, p, to);
            if (start < 0) {
                break;
            }
            int end = nextSet(oracle, start, to);
            end = end < 0 ? to : end;
            runs.add(new int[] {start, end - start});
            p = end;
        }
        return runs;
    }

    private static void assertRuns(List<int[]> expected, List<int[]> actual) {
        assertEquals(expected.size(), actual.size(), "number of free runs");
        for (int i = 0; i < expected.size(); i++) {
            assertEquals(expected.get(i)[0], actual.get(i)[0], "start of run " + i);
            assertEquals(expected.get(i)[1], actual.get(i)[1], "length of run " + i);
        }
    }

    private static void assertSame(Bitmap bitmap, BitSet oracle) {
        long[] expected = new long[bitmap.size() / 64];
        long[] fromOracle = oracle.toLongArray();
        System.arraycopy(fromOracle, 0, expected, 0, fromOracle.length);
        assertTrue(Bitmap.fromWords(expected).sameBits(bitmap), "bitmap differs from the oracle");
        assertEquals(oracle.cardinality(), bitmap.usedCount());
    }
}
