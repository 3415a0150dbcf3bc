package org.blockyard.benches;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import com.typesafe.config.Config;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.blockyard.runtime.config.BlockyardConfig;

/**
 * The lock peers in the benchmarks that run them beside the actors: tiobench's writers on the group-locks peer
 * (single calls through its handles, and batches through the interface) allocate every block of every file, and
 * stall's ratios name each lock peer that ran.
 */
// Calls are answered on the caller's thread: the deadline of a test that makes them there is this.
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class LockPeersTest {
    private static final Config CONFIG = BlockyardConfig.load();

    @Test
    void tiobenchWritersOnTheGroupLocksMapEveryBlockOfEveryFile() {
        for (int batch : new int[] {1, 16}) {
            Map<String, Object> row = Tiobench.run(new Tiobench.Spec(3, 8L << 20, Tiobench.GROUP_LOCKS, 4, 1, false, batch),
                    CONFIG);
            String what = "batch " + batch + ": " + row;
            long fileBlocks = (8L << 20) / 4096;
            assertEquals(3 * fileBlocks / 4, row.get("allocs"), what);
            assertEquals(fileBlocks, Math.round((Double) row.get("extents_per_file_mean") * (Double) row.get("mean_extent_blocks")),
                    what);
            assertEquals("threads", row.get("callers"), what);
            assertTrue(((String) row.get("policy_detail")).startsWith("group-locks over "), what);
        }
    }

    @Test
    void stallRatiosNameEachLockPeerThatRan() {
        Map<String, Object> actors = Map.of("allocator", Stall.ACTORS, "client_calls_per_s", 100.0);
        Map<String, Object> lock = Map.of("allocator", Stall.GLOBAL_LOCK, "client_calls_per_s", 50.0);
        Map<String, Object> groups = Map.of("allocator", Stall.GROUP_LOCKS, "client_calls_per_s", 400.0);
        Map<String, Object> r = StallCommand.ratios(List.of(actors, lock, groups));
        assertEquals(2.0, r.get("throughput_actors_over_lock"));
        assertEquals(0.25, r.get("throughput_actors_over_group_locks"));
        assertEquals(Map.of(), StallCommand.ratios(List.of(lock, groups)), "no ratio without the actors");
    }
}
