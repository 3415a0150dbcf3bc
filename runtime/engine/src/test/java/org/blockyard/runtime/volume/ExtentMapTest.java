package org.blockyard.runtime.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Random;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;

/**
 * The stored extent map against a model that keeps every logical block on its own: after each of thousands of
 * random changes (appends that continue the last run or not, overwrites, removes, conversions, truncates) the
 * runs map exactly the model's blocks, do not overlap, and are merged wherever two continue each other.
 */
class ExtentMapTest {

    private record Block(long physical, boolean unwritten) {}

    @Test
    void randomChangesKeepTheMapEqualToABlockByBlockModel() {
        for (long seed = 1; seed <= 20; seed++) {
            Random rnd = new Random(seed);
            ExtentMap map = new ExtentMap();
            TreeMap<Long, Block> model = new TreeMap<>();
            for (int step = 0; step < 2_000; step++) {
                int op = rnd.nextInt(10);
                long end = model.isEmpty() ? 0 : model.lastKey() + 1;
                if (op < 4) { // an append: at the end, continuing the last block physically or not
                    long logical = end + (rnd.nextInt(4) == 0 ? rnd.nextInt(5) : 0);
                    Block last = model.isEmpty() ? null : model.lastEntry().getValue();
                    long physical = last != null && rnd.nextBoolean() ? last.physical() + 1 + (logical - end) : rnd.nextInt(100_000);
                    boolean unwritten = last != null && rnd.nextInt(4) != 0 ? last.unwritten() : rnd.nextBoolean();
                    put(map, model, logical, physical, 1 + rnd.nextInt(8), unwritten);
                } else if (op < 6) { // an overwrite anywhere
                    put(map, model, rnd.nextInt((int) end + 10), rnd.nextInt(100_000), 1 + rnd.nextInt(12), rnd.nextBoolean());
                } else if (op == 6) {
                    long logical = rnd.nextInt((int) end + 10), blocks = 1 + rnd.nextInt(12);
                    boolean unwrittenOnly = rnd.nextBoolean();
                    map.remove(logical, blocks, unwrittenOnly);
                    for (long b = logical; b < logical + blocks; b++)
                        if (model.containsKey(b) && (!unwrittenOnly || model.get(b).unwritten())) model.remove(b);
                } else if (op == 7) {
                    long logical = rnd.nextInt((int) end + 10), blocks = 1 + rnd.nextInt(12);
                    map.markWritten(logical, blocks);
                    for (long b = logical; b < logical + blocks; b++)
                        if (model.containsKey(b)) model.put(b, new Block(model.get(b).physical(), false));
                } else if (op == 8 && rnd.nextInt(10) == 0) {
                    long from = rnd.nextInt((int) end + 1);
                    map.truncate(from);
                    model.tailMap(from, true).clear();
                }
                check(map, model, "seed " + seed + " step " + step);
            }
        }
    }

    /** An owner's map (each block to itself): holdsIdentity against asking every block, over random ranges. */
    @Test
    void holdsIdentityAgreesWithABlockByBlockLook() {
        Random rnd = new Random(5);
        for (int round = 0; round < 200; round++) {
            ExtentMap map = new ExtentMap();
            boolean[] held = new boolean[600];
            for (int k = 0; k < 1 + rnd.nextInt(30); k++) {
                int at = rnd.nextInt(580), len = 1 + rnd.nextInt(20);
                if (rnd.nextInt(4) == 0) {
                    map.remove(at, len, false);
                    for (int i = at; i < at + len; i++) held[i] = false;
                } else {
                    map.put(at, at, len, false);
                    for (int i = at; i < at + len; i++) held[i] = true;
                }
            }
            if (rnd.nextBoolean()) { // a run that is not the identity: mapped, not held
                map.put(590, 9_000, 5, false);
                for (int i = 590; i < 595; i++) held[i] = false;
            }
            for (int q = 0; q < 50; q++) {
                int at = rnd.nextInt(600), len = 1 + rnd.nextInt(Math.min(40, 600 - at));
                boolean want = true;
                for (int i = at; i < at + len; i++) want &= held[i];
                assertEquals(want, map.holdsIdentity(at, len), "[" + at + ", +" + len + ") of " + map.runs());
            }
        }
    }

    @Test
    void appendsThatContinueTheLastRunKeepOneRun() {
        ExtentMap map = new ExtentMap();
        for (long i = 0; i < 1_000; i++) map.put(i * 8, 5_000 + i * 8, 8, true);
        assertEquals(List.of(new ExtentMap.Run(0, 5_000, 8_000, true)), map.runs());
        map.put(8_000, 20_000, 8, true); // a jump: a second run
        map.put(8_008, 20_008, 8, false); // same place, other state: a third
        assertEquals(3, map.size());
        assertEquals(8_016, map.mappedBlocks());
    }

    private static void put(ExtentMap map, TreeMap<Long, Block> model, long logical, long physical, int blocks,
                            boolean unwritten) {
        map.put(logical, physical, blocks, unwritten);
        for (int i = 0; i < blocks; i++) model.put(logical + i, new Block(physical + i, unwritten));
    }

    private static void check(ExtentMap map, TreeMap<Long, Block> model, String where) {
        TreeMap<Long, Block> seen = new TreeMap<>();
        ExtentMap.Run prev = null;
        for (ExtentMap.Run r : map.runs()) {
            assertTrue(r.blocks() > 0, where + ": empty run " + r);
            if (prev != null) {
                assertTrue(prev.logical() + prev.blocks() <= r.logical(), where + ": overlap " + prev + " " + r);
                assertFalse(prev.logical() + prev.blocks() == r.logical() && prev.physicalEnd() == r.physical()
                        && prev.unwritten() == r.unwritten(), where + ": not merged " + prev + " " + r);
            }
            for (long i = 0; i < r.blocks(); i++) seen.put(r.logical() + i, new Block(r.physical() + i, r.unwritten()));
            prev = r;
        }
        assertEquals(model, seen, where);
    }
}
