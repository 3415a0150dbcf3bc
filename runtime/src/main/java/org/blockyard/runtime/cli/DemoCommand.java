package org.blockyard.runtime.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

import com.typesafe.config.Config;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import org.blockyard.runtime.bench.Report;
import org.blockyard.runtime.bench.Sizes;
import org.blockyard.runtime.bench.Tiobench;
import org.blockyard.runtime.config.BlockyardConfig;

/**
 * {@code blockyard demo}: the tiobench comparison of the three allocation designs on an in-memory volume,
 * as one table, in well under a minute.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = "Concurrent sequential writers on an in-memory volume: reservation vs no-reservation vs global-lock.")
public final class DemoCommand implements Callable<Integer> {

    @Option(names = "--writers", defaultValue = "16", description = "concurrent writers (default ${DEFAULT-VALUE})")
    int writers;

    @Option(names = "--file-size", defaultValue = "256MiB", description = "bytes per file (default ${DEFAULT-VALUE})")
    String fileSize;

    @Override
    public Integer call() {
        Config config = BlockyardConfig.load();
        long size = Sizes.parse(fileSize);
        System.out.printf("Blockyard demo: %d writers append %s each, one block per getBlocks call, concurrently,%n"
                + "on an in-memory volume twice their size (4 KiB blocks, 32768 per group).%n%n", writers, Sizes.format(size));
        List<Map<String, Object>> rows = new ArrayList<>();
        for (String policy : List.of("reservation", "no-reservation", Tiobench.GLOBAL_LOCK)) {
            Tiobench.Spec spec = new Tiobench.Spec(writers, size, policy, 1, 1);
            Tiobench.run(spec, config); // warm-up, unmeasured
            rows.add(Tiobench.run(spec, config));
        }
        Report.table(System.out, rows, List.of("policy", "extents_per_file_mean", "ideal_extents_per_file",
                "mean_extent_blocks", "alloc_latency_us.p50", "alloc_latency_us.p99", "alloc_latency_us.p999",
                "allocs_per_s", "messages", "elapsed_s"));
        Map<String, Object> r = rows.get(0), n = rows.get(1), g = rows.get(2);
        System.out.printf("%nreservation: %.2f extents per file against an ideal of %s (one per group the file spans).%n",
                r.get("extents_per_file_mean"), r.get("ideal_extents_per_file"));
        System.out.printf("no-reservation: the writers interleave, %.2f blocks per extent on average (seed 002: ~1).%n",
                n.get("mean_extent_blocks"));
        System.out.printf("global-lock: the same algorithm behind one lock, called on the writers' threads: %,.0f allocations/s.%n",
                g.get("allocs_per_s"));
        System.out.printf("%nMore: ./blockyard bench tiobench --help, ./blockyard bench smallfiles --help%n");
        return 0;
    }
}
