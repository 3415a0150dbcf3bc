package org.blockyard.benches;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

import com.typesafe.config.Config;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code blockyard bench tiobench}. */
@Command(name = "tiobench", mixinStandardHelpOptions = true,
        description = "N files appended concurrently through getBlocks (seed 002); prints layout, latency and throughput.")
public final class TiobenchCommand implements Callable<Integer> {

    @Option(names = "--writers", defaultValue = "16", description = "concurrent writers, one file each (default ${DEFAULT-VALUE})")
    int writers;

    @Option(names = "--file-size", defaultValue = "256MiB", converter = Sizes.Converter.class,
            description = "bytes per file, e.g. 256MiB, 1GiB (default ${DEFAULT-VALUE})")
    long fileSize;

    @Option(names = "--policy", defaultValue = "reservation", split = ",",
            description = "reservation | mballoc | no-reservation | global-lock | group-locks, or any installed plugin's (--deploy); several, comma-separated, run one after another in this process (global-lock: the same groups, files and policy behind one lock; group-locks: behind a lock per group and per file)")
    List<String> policies;

    @Option(names = "--chunk-blocks", defaultValue = "1", description = "blocks asked for per getBlocks call (default ${DEFAULT-VALUE})")
    int chunkBlocks;

    @Option(names = "--depth", defaultValue = "1",
            description = "getBlocks calls each writer keeps in flight (default ${DEFAULT-VALUE}: a synchronous writer; global-lock and group-locks writers are threads and always use 1)")
    int depth;

    @Option(names = "--callers", defaultValue = "actors",
            description = "actors | threads: writers are actors sending messages, or plain threads calling the BlockAllocator interface as an embedder's threads do (default ${DEFAULT-VALUE}; global-lock and group-locks writers are always threads)")
    String callers;

    @Option(names = "--batch", defaultValue = "1",
            description = "getBlocks calls per message (actor writers) or per BlockAllocator call (thread writers), served in order and answered together; latency is then per batch (default ${DEFAULT-VALUE})")
    int batch;

    @Option(names = "--volume", paramLabel = "IMAGE",
            description = "also run on this durable volume (made by mkfs; the files are added to it) after the same in memory over its geometry and used blocks: durable rate, ratio, forces per allocation (global-lock and group-locks stay in memory)")
    Path volume;

    @Mixin
    PlotOption plot;

    @Mixin
    DeployOption deploy;

    @Mixin
    RunOptions run;

    @Override
    public Integer call() throws Exception {
        Config config = deploy.applyTo(run.config());
        BadOption.atLeast("--writers", writers, 1);
        long size = BadOption.atLeast("--file-size", fileSize, 1);
        BadOption.atLeast("--chunk-blocks", chunkBlocks, 1);
        BadOption.atLeast("--depth", depth, 1);
        if (batch < 1 || batch > org.blockyard.api.alloc.BlockAllocator.MAX_BATCH)
            throw new BadOption("--batch", batch, "must be from 1 to " + org.blockyard.api.alloc.BlockAllocator.MAX_BATCH);
        BadOption.oneOf("--callers", callers, List.of("actors", "threads"));
        BenchPolicies.check("--policy", policies, config, Tiobench.GLOBAL_LOCK, Tiobench.GROUP_LOCKS);
        java.nio.file.Path plots = plot.directory();
        if (volume != null) DurableSide.of("--volume", volume);
        List<Map<String, Object>> rows = run.measure(policies,
                policy -> Tiobench.run(new Tiobench.Spec(writers, size, policy, chunkBlocks, depth,
                        callers.equals("threads"), batch), config, volume));
        print(run.out(), rows);
        if (plots != null)
            run.out().println("plot: " + Plots.latencyCdf(plots, "tiobench-latency-cdf", "tiobench: getBlocks latency, "
                    + writers + " writers", "µs", rows, r -> (String) r.get("policy"), "alloc_latency_cdf_us"));
        run.writeJson(rows);
        return 0;
    }

    static void print(java.io.PrintStream out, List<Map<String, Object>> rows) {
        Report.table(out, rows, Report.columns("policy", "writers", "file_size_bytes", "chunk_blocks",
                "callers", "depth", "batch", "extents_per_file_mean", "ideal_extents_per_file", "mean_extent_blocks",
                Latency.columns("alloc_latency_us"), "allocs_per_s", "blocks_per_s", "messages", "heap_bytes_per_alloc",
                "elapsed_s", DurableSide.columns(rows, "allocs"),
                rows.stream().anyMatch(r -> r.containsKey("durable_extents_per_file_mean"))
                        ? List.of("durable_extents_per_file_mean") : List.of()));
    }
}
