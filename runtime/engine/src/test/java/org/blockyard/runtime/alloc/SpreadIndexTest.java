package org.blockyard.runtime.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Random;

import org.junit.jupiter.api.Test;

import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.Geometry;

/** The index answers what the scan answers, for random volumes and after random changes. */
class SpreadIndexTest {

    /** A volume view of plain arrays, for the scan. */
    private static AllocationPolicy.Volume view(Geometry g, long[] free, int[] open) {
        return new AllocationPolicy.Volume() {
            @Override
            public Geometry geometry() {
                return g;
            }

            @Override
            public long freeBlocks(int group) {
                return free[group];
            }

            @Override
            public int openFiles(int group) {
                return open[group];
            }
        };
    }

    @Test
    void theIndexAgreesWithTheScanOnRandomVolumesAndAfterEveryChange() {
        Random rnd = new Random(11);
        for (int groups : new int[] {1, 2, 3, 5, 8, 31, 64, 100, 257, 1000}) {
            Geometry g = Geometry.of(4096, (long) groups * 1024, 1024);
            long half = (g.blocksPerGroup() - g.systemBlocksPerGroup()) / 2;
            long[] free = new long[g.groups()];
            int[] open = new int[g.groups()];
            AllocationPolicy.Volume v = view(g, free, open);
            SpreadIndex index = new SpreadIndex(g.groups(), half, new SpreadIndex.Source() {
                @Override
                public int openFiles(int group) {
                    return open[group];
                }

                @Override
                public long freeBlocks(int group) {
                    return free[group];
                }
            });
            for (int step = 0; step < 400; step++) {
                int n = 1 + rnd.nextInt(Math.min(8, g.groups()));
                for (int k = 0; k < n; k++) {
                    int x = rnd.nextInt(g.groups());
                    // Mostly idle groups, so that runs of every length occur, and now and then a full volume.
                    free[x] = rnd.nextInt(10) < 7 ? half + rnd.nextInt(100) : rnd.nextInt((int) half);
                    open[x] = rnd.nextInt(10) < 8 ? 0 : rnd.nextInt(3);
                    index.changed(x);
                }
                if (step % 97 == 0) for (int x = 0; x < g.groups(); x++) {
                    open[x] = 1 + rnd.nextInt(2);
                    free[x] = rnd.nextInt(1000);
                    index.changed(x);
                }
                assertEquals(ReservationPolicy.spreadGroup(v), index.spreadGroup(), groups + " groups, step " + step);
            }
        }
    }

    @Test
    void theVolumeKeepsItsIndexUpToDateAsGroupsFillAndFilesOpen() {
        Geometry g = Geometry.of(4096, 100L * 4096, 4096);
        VolumeState volume = new VolumeState(g);
        for (int x = 0; x < g.groups(); x++) volume.publishFree(x, g.groupBlocks(x) - g.systemBlocks(x));
        assertEquals(0, volume.spreadGroup(), "every group idle: group 0");
        volume.fileOpened(0);
        assertEquals(ReservationPolicy.spreadGroup(volume), volume.spreadGroup());
        assertEquals(50, volume.spreadGroup(), "the middle of the 99 idle groups after group 0");
        volume.publishFree(50, 10);
        assertEquals(ReservationPolicy.spreadGroup(volume), volume.spreadGroup());
        volume.fileClosed(0);
        assertEquals(ReservationPolicy.spreadGroup(volume), volume.spreadGroup());
    }
}
