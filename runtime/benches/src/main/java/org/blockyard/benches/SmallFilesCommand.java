package org.blockyard.benches;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

import com.typesafe.config.Config;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code blockyard bench smallfiles}. */
@Command(name = "smallfiles", mixinStandardHelpOptions = true,
        description = "Many small files created in groups already filled to F (seed 000's tar xf case); prints latency and layout.")
public final class SmallFilesCommand implements Callable<Integer> {

    @Option(names = "--files", defaultValue = "20000", description = "files to create (default ${DEFAULT-VALUE})")
    int files;

    @Option(names = "--fill", defaultValue = "0.95", description = "fraction of each group used before the run, from its start (default ${DEFAULT-VALUE})")
    double fill;

    @Option(names = "--blocks-per-group", paramLabel = "N", description = "blocks per group (default: blockyard.volume.blocks-per-group)")
    Integer blocksPerGroup;

    @Option(names = "--policy", defaultValue = "reservation,global-lock,group-locks", split = ",",
            description = "reservation | mballoc | no-reservation | global-lock | group-locks, or any installed plugin's (--deploy), comma-separated (global-lock: the same groups, files and policy behind one lock; group-locks: behind a lock per group and per file; both called on the clients' threads) (default ${DEFAULT-VALUE})")
    List<String> policies;

    @Option(names = "--clients", defaultValue = "1",
            description = "concurrent clients (default ${DEFAULT-VALUE}: one tar process, as in seed 000; more clients on 2 cores measure queueing more than the allocator)")
    int clients;

    @Option(names = "--max-file-blocks", defaultValue = "8", description = "files are 1..N blocks (default ${DEFAULT-VALUE})")
    int maxFileBlocks;

    @Option(names = "--seed", defaultValue = "1", description = "seed for the file sizes (default ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--batch", description = "actor clients hand each file's calls over in one message (GetBlocksBatch); latency is then per file")
    boolean batch;

    @Option(names = "--whole-file", description = "actor clients write each file with one message (WriteFile: open, the file's calls, close, as BlockAllocator.writeFile); latency is then per file; the lock peers' clients make the same calls one by one")
    boolean wholeFile;

    @Option(names = "--volume", paramLabel = "IMAGE",
            description = "also run on this durable volume (made by mkfs; its geometry replaces --blocks-per-group, the files are added to it, the fill is in memory only) after the same in memory over its geometry and used blocks: durable rate, ratio, forces per allocation and per file (global-lock and group-locks stay in memory)")
    Path volume;

    @Mixin
    DeployOption deploy;

    @Mixin
    RunOptions run;

    @Override
    public Integer call() throws Exception {
        Config config = deploy.applyTo(run.config());
        int bpg = blocksPerGroup != null ? blocksPerGroup : config.getInt("blockyard.volume.blocks-per-group");
        BadOption.atLeast("--files", files, 1);
        BadOption.between("--fill", fill, 0, 1, false);
        if (bpg < 64 || bpg % 64 != 0) throw new BadOption("--blocks-per-group", bpg, "must be a positive multiple of 64");
        BadOption.atLeast("--clients", clients, 1);
        BadOption.atLeast("--max-file-blocks", maxFileBlocks, 1);
        BenchPolicies.check("--policy", policies, config, Tiobench.GLOBAL_LOCK, Tiobench.GROUP_LOCKS);
        if (batch && wholeFile)
            throw new BadOption("--whole-file", "with --batch",
                    "a file's calls go in one batch or in one whole-file message, not both");
        if (volume != null) {
            if (blocksPerGroup != null)
                throw new BadOption("--blocks-per-group", blocksPerGroup, "is the volume's with --volume");
            DurableSide.of("--volume", volume);
        }
        List<Map<String, Object>> rows = run.measure(policies, policy ->
                SmallFiles.run(new SmallFiles.Spec(files, fill, bpg, policy, clients, maxFileBlocks, seed, batch, wholeFile),
                        config, volume));
        Report.table(run.out(), rows, Report.columns("policy", "files", "fill", "blocks_per_group", "clients", "batch", "whole_file",
                "extents_per_file_mean", Latency.columns("alloc_latency_us"), "allocs_per_s", "files_per_s",
                "messages_per_file", "heap_bytes_per_file", "elapsed_s", DurableSide.columns(rows, "allocs"),
                rows.stream().anyMatch(r -> r.containsKey("forces_per_file")) ? List.of("durable_files_per_s",
                        "forces_per_file") : List.of()));
        run.writeJson(rows);
        return 0;
    }
}
