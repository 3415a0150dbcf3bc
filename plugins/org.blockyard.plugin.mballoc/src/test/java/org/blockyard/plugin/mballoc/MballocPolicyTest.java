package org.blockyard.plugin.mballoc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;

/** The decisions themselves, on fake volume and group views. */
class MballocPolicyTest {

    private static final Geometry G = Geometry.standard(16L * 32768);
    private static final MballocPolicy P = (MballocPolicy) new MballocPolicyFactory().create(G,
            MballocPolicyFactory.DESCRIPTOR.resolve(Map.of()));

    private record Vol(long[] free, int[] open) implements AllocationPolicy.Volume {
        @Override public Geometry geometry() { return G; }
        @Override public long freeBlocks(int group) { return free[group]; }
        @Override public int openFiles(int group) { return open[group]; }
    }

    private record View(int group, List<Extent> windows) implements AllocationPolicy.GroupView {
        @Override public long firstDataBlock() { return G.groupStart(group) + G.systemBlocks(group); }
        @Override public long end() { return G.groupStart(group) + G.groupBlocks(group); }
        @Override public long freeBlocks() { return 1000; }
    }

    private static Vol empty() {
        long[] free = new long[G.groups()];
        java.util.Arrays.fill(free, 32000);
        return new Vol(free, new int[G.groups()]);
    }

    @Test
    void windowsAreNormalisedPowersOfTwoFrom16KiBTo8MiB() {
        assertEquals(4, P.initialWindowBlocks());
        assertEquals(8, P.nextWindowBlocks(4, 3, 4, 1, 32766), "more than half used: the file doubled");
        assertEquals(4, P.nextWindowBlocks(4, 1, 4, 1, 32766), "half or less used: same size");
        assertEquals(8, P.nextWindowBlocks(4, 0, 0, 5, 32766), "at least the request, rounded up to a power of two");
        assertEquals(2048, P.nextWindowBlocks(2048, 2048, 2048, 1, 32766), "8 MiB cap");
        assertEquals(3000, P.nextWindowBlocks(4, 0, 0, 3000, 32766), "a request above 8 MiB is taken as it is");
        assertEquals(100, P.nextWindowBlocks(64, 64, 64, 1, 100), "never more than the group");
    }

    @Test
    void concurrentWritersOfOneDirectoryGetTheirOwnGroupsNearIt() {
        Vol v = empty();
        int a = P.homeGroup("/d/a", v);
        assertEquals(MballocPolicy.directoryGroup("/d/x", G.groups()), a, "an idle directory's group is its home");
        v.open()[a]++;
        int b = P.homeGroup("/d/b", v);
        assertEquals((a + 1) % G.groups(), b, "the next writer takes the next group");
        v.open()[a]--;
        v.free()[a] = 100; // below the average now: Orlov passes it over
        assertEquals((a + 1) % G.groups(), P.homeGroup("/d/c", v));
    }

    @Test
    void aStreamLeavesAFullGroupForTheEmptiestSmallFilesStay() {
        Vol v = empty();
        for (int i = 0; i < G.groups(); i++) v.free()[i] = 1000;
        v.free()[3] = 100;
        v.free()[9] = 32700;
        v.free()[14] = 32000;
        long goal = G.groupStart(3) + 500;
        // Scanned from halfway along (groups 12, 13, ...): 14 has at least 7/8 of the most free.
        assertEquals(G.groupStart(14) + G.systemBlocks(14), P.goal(64, 63, goal - 1, goal - 1, 3, v));
        assertEquals(goal, P.goal(5, 4, goal - 1, goal - 1, 3, v), "a small file stays in its locality group");
        v.free()[3] = 5000;
        assertEquals(goal, P.goal(64, 63, goal - 1, goal - 1, 3, v), "enough room: keep appending");
    }

    @Test
    void searchStarts() {
        View g = new View(2, List.of(new Extent(G.groupStart(2) + 100, 4), new Extent(G.groupStart(2) + 20000, 2048)));
        assertEquals(G.groupStart(2) + 7000, P.windowSearchStart(G.groupStart(2) + 7000, 64, g), "a continuing goal");
        assertEquals(G.groupStart(2) + 104, P.windowSearchStart(-1, 4, g), "small files behind the last small one");
        // Largest room: the second half of [104, 20000), from 10052 (more than the second half of
        // [22048, 32768)), aligned up to a multiple of 1024.
        long s = P.windowSearchStart(g.firstDataBlock(), 1024, g);
        assertEquals(G.groupStart(2) + 10240, s);
        assertEquals(0, s % 1024);
        assertEquals(G.groupStart(5) + 64, P.windowSearchStart(-1, 64, new View(5, List.of())),
                "an empty group: the first multiple of the window after the system zone");
    }
}
