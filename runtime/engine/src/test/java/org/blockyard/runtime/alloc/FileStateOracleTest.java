package org.blockyard.runtime.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Extent;

/**
 * A file's extent map against a plain array of logical blocks, after random appends, allocations in holes,
 * conversions, discards and truncates: every lookup, hole length and preceding block agrees, and the map
 * keeps contiguous runs of one state merged (its extent count is the oracle's run count).
 */
class FileStateOracleTest {
    private static final int SPACE = 600;

    @Test
    void theMapAgreesWithAnArrayAfterRandomEdits() {
        Random rnd = new Random(3);
        for (int round = 0; round < 40; round++) {
            FileState f = new FileState(1, "/f", 0, 8);
            long[] phys = new long[SPACE]; // -1 = hole
            boolean[] unwritten = new boolean[SPACE];
            java.util.Arrays.fill(phys, -1);
            long nextPhysical = 10_000;
            for (int step = 0; step < 300; step++) {
                int op = rnd.nextInt(10);
                if (op < 5) { // append after the last mapped block, often continuing it physically
                    int last = SPACE - 1;
                    while (last >= 0 && phys[last] < 0) last--;
                    int at = last + 1, n = 1 + rnd.nextInt(6);
                    if (at + n > SPACE) continue;
                    if (rnd.nextInt(4) == 0) nextPhysical += 1 + rnd.nextInt(3); // a jump: a new extent
                    f.map(at, nextPhysical, n);
                    for (int i = 0; i < n; i++) {
                        phys[at + i] = nextPhysical + i;
                        unwritten[at + i] = true;
                    }
                    nextPhysical += n;
                } else if (op < 6) { // fill part of a hole somewhere
                    int at = rnd.nextInt(SPACE);
                    if (phys[at] >= 0) continue;
                    int n = 1;
                    while (n < 4 && at + n < SPACE && phys[at + n] < 0) n++;
                    nextPhysical += 5;
                    f.map(at, nextPhysical, n);
                    for (int i = 0; i < n; i++) {
                        phys[at + i] = nextPhysical + i;
                        unwritten[at + i] = true;
                    }
                    nextPhysical += n;
                } else if (op < 8) {
                    int at = rnd.nextInt(SPACE), n = 1 + rnd.nextInt(40);
                    n = Math.min(n, SPACE - at);
                    f.markWritten(at, n);
                    for (int i = at; i < at + n; i++) unwritten[i] = false;
                } else if (op < 9) {
                    int at = rnd.nextInt(SPACE), n = 1 + rnd.nextInt(20);
                    n = Math.min(n, SPACE - at);
                    f.discardUnwritten(at, n);
                    for (int i = at; i < at + n; i++) if (phys[i] >= 0 && unwritten[i]) phys[i] = -1;
                } else {
                    int at = rnd.nextInt(SPACE);
                    f.truncate(at);
                    for (int i = at; i < SPACE; i++) phys[i] = -1;
                }
                check(f, phys, unwritten, round + "/" + step);
            }
        }
    }

    private static void check(FileState f, long[] phys, boolean[] unwritten, String where) {
        int runs = 0;
        long mapped = 0;
        for (int l = 0; l < SPACE; l++) {
            BlockRun r = f.lookup(l, 1);
            if (phys[l] < 0) {
                assertEquals(null, r, where + ": block " + l + " is a hole");
                int hole = 0;
                while (l + hole < SPACE && hole < 50 && phys[l + hole] < 0) hole++;
                assertEquals(l + hole >= SPACE ? 50 : hole, f.holeLength(l, 50), where + ": hole at " + l);
                long before = -1; // asked for holes only: the last block of the run before the hole
                for (int k = l - 1; k >= 0; k--) if (phys[k] >= 0) { before = phys[k]; break; }
                assertEquals(before, f.precedingPhysical(l), where + ": block before " + l);
            } else {
                assertEquals(phys[l], r.physicalStart(), where + ": block " + l);
                assertEquals(unwritten[l], r.unwritten(), where + ": state of block " + l);
                mapped++;
                boolean continues = l > 0 && phys[l - 1] >= 0 && phys[l - 1] + 1 == phys[l] && unwritten[l - 1] == unwritten[l];
                if (!continues) runs++;
            }
        }
        assertEquals(runs, f.extentCount(), where + ": runs stay merged");
        assertEquals(mapped, f.mappedBlocks(), where + ": mapped blocks");
        List<Extent> ext = new ArrayList<>(f.extents());
        assertEquals(runs, ext.size());
    }
}
