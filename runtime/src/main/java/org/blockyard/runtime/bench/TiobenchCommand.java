package org.blockyard.runtime.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

import com.typesafe.config.Config;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import org.blockyard.runtime.config.BlockyardConfig;

/** {@code blockyard bench tiobench}. */
@Command(name = "tiobench", mixinStandardHelpOptions = true,
        description = "N files appended concurrently through getBlocks (seed 002); prints layout, latency and throughput.")
public final class TiobenchCommand implements Callable<Integer> {

    @Option(names = "--writers", defaultValue = "16", description = "concurrent writers, one file each (default ${DEFAULT-VALUE})")
    int writers;

    @Option(names = "--file-size", defaultValue = "256MiB", description = "bytes per file, e.g. 256MiB, 1GiB (default ${DEFAULT-VALUE})")
    String fileSize;

    @Option(names = "--policy", defaultValue = "reservation", split = ",",
            description = "reservation | no-reservation | global-lock; several, comma-separated, run one after another in this process")
    List<String> policies;

    @Option(names = "--chunk-blocks", defaultValue = "1", description = "blocks asked for per getBlocks call (default ${DEFAULT-VALUE})")
    int chunkBlocks;

    @Option(names = "--depth", defaultValue = "1",
            description = "getBlocks calls each writer keeps in flight (default ${DEFAULT-VALUE}: a synchronous writer; global-lock writers are threads and always use 1)")
    int depth;

    @Option(names = "--warmup", defaultValue = "true", negatable = true, fallbackValue = "true",
            description = "run each policy once first, unmeasured, so the JIT has compiled the hot paths (default on)")
    boolean warmup;

    @Option(names = "--runs", defaultValue = "1",
            description = "measured runs per policy; with more than one, each policy's row is the median of every figure (default ${DEFAULT-VALUE})")
    int runs;

    @Option(names = "--config", description = "a HOCON file layered over config/blockyard.conf")
    Path configFile;

    @Option(names = "--json", description = "write the figures to this file")
    Path json;

    @Override
    public Integer call() throws Exception {
        Config config = BlockyardConfig.load(configFile);
        long size = Sizes.parse(fileSize);
        List<Map<String, Object>> rows = new ArrayList<>();
        for (String p : policies) {
            Tiobench.Spec spec = new Tiobench.Spec(writers, size, p.trim(), chunkBlocks, depth);
            if (warmup) Tiobench.run(spec, config);
            rows.add(measure(() -> Tiobench.run(spec, config), runs));
        }
        print(rows);
        if (json != null) Report.writeJson(json, rows.size() == 1 ? rows.get(0) : rows);
        return 0;
    }

    /** One measured run, or the median of {@code runs} of them. */
    static Map<String, Object> measure(java.util.function.Supplier<Map<String, Object>> run, int runs) {
        if (runs < 1) throw new IllegalArgumentException("--runs must be at least 1");
        List<Map<String, Object>> all = new ArrayList<>();
        for (int i = 0; i < runs; i++) all.add(run.get());
        return runs == 1 ? all.get(0) : Report.median(all);
    }

    static void print(List<Map<String, Object>> rows) {
        Report.table(System.out, rows, List.of("policy", "writers", "file_size_bytes", "chunk_blocks",
                "depth", "extents_per_file_mean", "ideal_extents_per_file", "mean_extent_blocks", "alloc_latency_us.p50",
                "alloc_latency_us.p99", "alloc_latency_us.p999", "alloc_latency_us.max", "allocs_per_s",
                "blocks_per_s", "messages", "elapsed_s"));
    }
}
