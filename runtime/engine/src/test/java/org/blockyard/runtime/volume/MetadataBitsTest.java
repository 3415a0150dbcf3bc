package org.blockyard.runtime.volume;

import static org.blockyard.runtime.volume.Volumes.join;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.blockyard.api.alloc.Geometry;

/**
 * The word-at-a-time bitmap walks that open, close and recovery run over every block of a volume
 * ({@link Metadata#reconcile}, {@link Metadata#ownedBitmaps}, {@link Metadata#forEachUsedDataRun}), against
 * a bit-by-bit oracle.
 */
class MetadataBitsTest {
    @TempDir
    Path dir;

    @Test
    void nextBitAndSetBitsAgreeWithABitByBitOracle() {
        Random rnd = new Random(7);
        for (int round = 0; round < 2_000; round++) {
            int bits = 1 + rnd.nextInt(700);
            long[] words = new long[(bits + 63) / 64];
            boolean[] oracle = new boolean[bits];
            for (int k = 0; k < 1 + rnd.nextInt(6); k++) {
                int from = rnd.nextInt(bits), to = from + rnd.nextInt(bits - from + 1);
                Metadata.setBits(words, from, to - from, true);
                for (int i = from; i < to; i++) oracle[i] = true;
            }
            for (int i = 0; i < bits; i++)
                assertEquals(oracle[i], (words[i >>> 6] & (1L << (i & 63))) != 0, "bit " + i + " of " + bits);
            int from = rnd.nextInt(bits), to = from + rnd.nextInt(bits - from + 1);
            for (boolean set : new boolean[] {true, false}) {
                int want = from;
                while (want < to && oracle[want] != set) want++;
                assertEquals(want, Metadata.nextBit(words, from, to, set), "next " + set + " in [" + from + ", " + to + ")");
            }
        }
    }

    /**
     * A volume whose bitmaps disagree with its owners in hundreds of runs of every length, some crossing words
     * and groups' ends: reconcile makes every data block used exactly when some file owns it, counts what it
     * changed as the bit-by-bit walk would, and the runs of used blocks it leaves are the maximal ones.
     */
    @Test
    void reconcileMakesEveryBitmapAgreeWithTheOwnersInRuns() {
        Path image = Volumes.make(dir, 4);
        try (Volume v = Volumes.open(image)) {
            for (String f : List.of("a", "b", "c")) {
                join(v.allocator().open(f));
                for (long l = 0; l < 3_000; l += 37) join(v.allocator().getBlocks(f, l, 20 + (int) (l % 17), true));
                for (long l = 0; l < 3_000; l += 40) join(v.allocator().discardUnwritten(f, l, 10)); // owned, then not
            }
        }
        Random rnd = new Random(11);
        Tamper.rewrite(image, m -> {
            Geometry g = m.geometry;
            for (int k = 0; k < 400; k++) { // leaks and owned blocks marked free
                int group = rnd.nextInt(g.groups());
                int from = g.systemBlocks(group) + rnd.nextInt(g.groupBlocks(group) - g.systemBlocks(group));
                int blocks = 1 + rnd.nextInt(Math.min(200, g.groupBlocks(group) - from));
                m.bitmapChanged(group, g.groupStart(group) + from, blocks, rnd.nextBoolean());
            }
            boolean[] owned = new boolean[(int) g.totalBlocks()];
            for (Metadata.Entry e : m.entries())
                for (ExtentMap.Run r : e.map.runs()) for (long b = r.physical(); b < r.physicalEnd(); b++) owned[(int) b] = true;
            // Where ownership changes, a free-marked owned block right beside a used-marked unowned one: one
            // run of differing bits whose two parts are changed opposite ways.
            int mixed = 0;
            for (long b = 1; b + 1 < g.totalBlocks() && mixed < 50; b++) {
                int group = g.groupOf(b);
                if (g.groupOf(b - 1) != group || b - 1 - g.groupStart(group) < g.systemBlocks(group)) continue;
                if (owned[(int) (b - 1)] == owned[(int) b]) continue;
                m.bitmapChanged(group, b - 1, 1, !owned[(int) (b - 1)]);
                m.bitmapChanged(group, b, 1, !owned[(int) b]);
                mixed++;
                b += 5;
            }
            assertEquals(50, mixed);
            long toFree = 0, toSet = 0;
            for (int group = 0; group < g.groups(); group++)
                for (int i = g.systemBlocks(group); i < g.groupBlocks(group); i++) {
                    long b = g.groupStart(group) + i;
                    if (owned[(int) b] && !m.isUsed(b)) toSet++;
                    if (!owned[(int) b] && m.isUsed(b)) toFree++;
                }
            assertTrue(toFree > 1_000 && toSet > 1_000, "the tampering made both kinds: " + toFree + ", " + toSet);

            assertArrayEquals(new long[] {toFree, toSet}, m.reconcile());
            for (int group = 0; group < g.groups(); group++) {
                List<long[]> runs = new ArrayList<>();
                m.forEachUsedDataRun(group, (start, blocks) -> runs.add(new long[] {start, blocks}));
                long expectFrom = -1;
                int next = 0;
                for (int i = g.systemBlocks(group); i <= g.groupBlocks(group); i++) {
                    long b = g.groupStart(group) + i;
                    boolean used = i < g.groupBlocks(group) && m.isUsed(b);
                    if (i < g.groupBlocks(group)) assertEquals(owned[(int) b], used, "block " + b);
                    if (used && expectFrom < 0) expectFrom = b;
                    if (!used && expectFrom >= 0) { // a maximal run ends here
                        assertTrue(next < runs.size(), "run from " + expectFrom + " reported");
                        assertArrayEquals(new long[] {expectFrom, b - expectFrom}, runs.get(next++));
                        expectFrom = -1;
                    }
                }
                assertEquals(runs.size(), next, "no other runs in group " + group);
            }
        });
        Fsck.Result after = Fsck.check(image, false);
        assertTrue(after.clean(), after.report());
    }
}
