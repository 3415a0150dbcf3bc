package org.blockyard.benches;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;

import com.typesafe.config.Config;
import org.junit.jupiter.api.Test;

import org.blockyard.runtime.config.BlockyardConfig;

/**
 * The small-file bench at a tiny size: the actor clients (one call per block, one batch per file, and one
 * whole-file message per file) and the group-locks peer's threads create the same files as the global lock's,
 * every block of every file mapped, one call per block.
 */
class SmallFilesTest {
    private static final Config CONFIG = BlockyardConfig.load();

    private static Map<String, Object> run(String policy, int clients, boolean batch, boolean whole) {
        return SmallFiles.run(new SmallFiles.Spec(600, 0.9, 32768, policy, clients, 8, 3, batch, whole), CONFIG);
    }

    @Test
    void actorClientsMapEveryBlockOfTheSameFilesAsTheLock() {
        Map<String, Object> lock = run(Tiobench.GLOBAL_LOCK, 1, false, false);
        double meanBlocks = (Double) lock.get("file_blocks_mean");
        long blocks = Math.round(meanBlocks * 600);
        assertEquals(blocks, lock.get("allocs"), "the lock's client: one call per block");
        for (int clients : new int[] {1, 3}) {
            Map<String, Object> groups = run(Tiobench.GROUP_LOCKS, clients, false, false);
            String what = "group-locks, " + clients + " clients: " + groups;
            assertEquals(meanBlocks, (Double) groups.get("file_blocks_mean"), 1e-9, what);
            assertEquals(blocks, groups.get("allocs"), what);
            assertEquals(meanBlocks, (Double) groups.get("extents_per_file_mean") * (Double) groups.get("mean_extent_blocks"),
                    1e-6, what);
            if (clients == 1)
                assertEquals(lock.get("extents_per_file_mean"), groups.get("extents_per_file_mean"),
                        "one client: the same calls in the same order lay the files out as the global lock does");
        }
        for (int clients : new int[] {1, 3}) {
            for (int mode = 0; mode < 3; mode++) {
                boolean batch = mode == 1, whole = mode == 2;
                Map<String, Object> actors = run("reservation", clients, batch, whole);
                String what = clients + " clients, batch " + batch + ", whole file " + whole + ": " + actors;
                assertEquals(meanBlocks, (Double) actors.get("file_blocks_mean"), 1e-9, what);
                // One answer per block, or per file with a batch; every file read back in at least one extent.
                assertEquals(batch || whole ? 600L : blocks, actors.get("allocs"), what);
                assertTrue((Double) actors.get("extents_per_file_mean") >= 1.0, what);
                // The extents read back after the run hold exactly the blocks asked for.
                assertEquals(meanBlocks, (Double) actors.get("extents_per_file_mean") * (Double) actors.get("mean_extent_blocks"),
                        1e-6, what);
                assertTrue((Double) actors.get("messages_per_file") > 0, what);
                assertEquals(whole, actors.get("whole_file"), what);
            }
        }
    }
}
