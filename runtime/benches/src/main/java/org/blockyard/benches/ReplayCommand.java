package org.blockyard.benches;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

import com.typesafe.config.Config;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code blockyard bench replay}: ceph_test_alloc_replay's replay_alloc over the extent interface. */
@Command(name = "replay", mixinStandardHelpOptions = true,
        description = "Replays allocation requests (want unit [max] [hint], bytes) against the free space of a BlueStore "
                + "allocator dump (ceph daemon osd.N bluestore allocator dump block); prints per-request fragments and "
                + "duration with --per-request, and the split fraction, extents per split allocation, latency, the "
                + "fragmentation score and the free-extent histogram after the replay.")
public final class ReplayCommand implements Callable<Integer> {

    @Option(names = "--dump", paramLabel = "FILE", description = "the allocator dump (JSON: capacity, alloc_unit, extents as hex offset/length)")
    Path dump;

    @Option(names = "--requests", paramLabel = "FILE", description = "one request a line: want unit [max] [hint], in bytes (decimal or 0x hex)")
    Path requests;

    @Option(names = "--allocator", defaultValue = "actors,global-lock,group-locks", split = ",",
            description = "actors | global-lock | group-locks, comma-separated (default ${DEFAULT-VALUE})")
    List<String> allocators;

    @Option(names = "--per-request", description = "print each request's fragments, bytes and duration (standard error)")
    boolean perRequest;

    @Option(names = "--make-sample", paramLabel = "DIR",
            description = "write sample-dump.json and sample-requests.txt made by this project (an aged volume) into DIR, and stop")
    Path makeSample;

    @Option(names = "--sample-size", defaultValue = "256MiB", converter = Sizes.Converter.class,
            description = "volume size of --make-sample (default ${DEFAULT-VALUE})")
    long sampleSize;

    @Option(names = "--seed", defaultValue = "1", description = "seed of --make-sample (default ${DEFAULT-VALUE})")
    long seed;

    @Mixin
    RunOptions run;

    @Override
    public Integer call() throws Exception {
        if (makeSample != null) {
            if (sampleSize < 8192L * 4096) // AllocReplay.makeSample: groups of 8192 blocks of 4 KiB
                throw new BadOption("--sample-size", sampleSize, "must hold at least one group of 8192 blocks of 4 KiB (32 MiB)");
            BadOption.outputDirectory("--make-sample", makeSample);
            try {
                AllocReplay.makeSample(makeSample.resolve("sample-dump.json"), makeSample.resolve("sample-requests.txt"),
                        sampleSize, 0.9, 400, seed);
            } catch (java.io.IOException e) {
                throw BadOption.failed(makeSample, e);
            }
            if (!run.quiet)
                System.err.println("wrote " + makeSample.resolve("sample-dump.json") + " and " + makeSample.resolve("sample-requests.txt"));
            return 0;
        }
        if (dump == null) throw new BadOption("--dump", "", "an allocator dump is needed (or --make-sample DIR)");
        if (requests == null) throw new BadOption("--requests", "", "a file of requests is needed (or --make-sample DIR)");
        BadOption.allOf("--allocator", allocators, List.of("actors", Tiobench.GLOBAL_LOCK, Tiobench.GROUP_LOCKS));
        AllocReplay.Dump d = AllocReplay.readDump(dump);
        List<AllocReplay.Request> reqs = AllocReplay.readRequests(requests);
        Config config = run.config();
        List<Map<String, Object>> rows = run.measure(allocators, a -> AllocReplay.run(d, reqs, a, config,
                perRequest ? line -> System.err.println(a + " " + line) : line -> { }));
        Report.table(run.out(), rows, Report.columns("allocator", "requests", "served", "no_space", "split_fraction",
                "extents_per_split_alloc", "fragments", Latency.columns("alloc_latency_us"), "allocs_per_s",
                "fragmentation_score_after"));
        run.writeJson(rows);
        return 0;
    }
}
