package org.blockyard.runtime.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

import com.typesafe.config.Config;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code blockyard bench extents --aging}. */
@Command(name = "extents", mixinStandardHelpOptions = true,
        description = "The extent interface under BlueStore-style aging (fill, free random objects, refill); "
                + "prints split allocations, extents per allocation, the v3 fragmentation score and latency per allocator.")
public final class ExtentsCommand implements Callable<Integer> {

    @Option(names = "--aging", defaultValue = "true", negatable = true, fallbackValue = "true", description = "the aging workload (the only one so far; default on)")
    boolean aging;

    @Option(names = "--allocator", defaultValue = "blockyard,global-lock,dynamic-fit", split = ",",
            description = "blockyard (the actors through BlockAllocator) | global-lock (the same groups and walk under one lock) | dynamic-fit (Ceph AvlAllocator-style baseline) (default ${DEFAULT-VALUE})")
    List<String> allocators;

    @Option(names = "--volume-size", converter = Sizes.Converter.class, defaultValue = "16GiB", description = "volume size, whole groups (default ${DEFAULT-VALUE})")
    long volumeSize;

    @Option(names = "--unit", converter = Sizes.Converter.class, defaultValue = "64KiB,4KiB", split = ",", description = "allocation units; one run each (default ${DEFAULT-VALUE})")
    List<Long> units;

    @Option(names = "--high", defaultValue = "0.85", description = "fill to this fraction of the volume (default ${DEFAULT-VALUE})")
    double high;

    @Option(names = "--low", defaultValue = "0.65", description = "free random objects down to this fraction (default ${DEFAULT-VALUE})")
    double low;

    @Option(names = "--rounds", defaultValue = "10", description = "free-and-refill rounds after the first fill (default ${DEFAULT-VALUE})")
    int rounds;

    @Option(names = "--max-object", converter = Sizes.Converter.class, defaultValue = "16MiB", description = "largest object; sizes are log-uniform from one unit (default ${DEFAULT-VALUE})")
    long maxObject;

    @Option(names = "--chunk", converter = Sizes.Converter.class, defaultValue = "4MiB", description = "bytes per allocate call while writing an object (default ${DEFAULT-VALUE})")
    long chunk;

    @Option(names = "--max-extent", converter = Sizes.Converter.class, defaultValue = "4MiB", description = "longest extent an allocate may return; 0 = no limit (default ${DEFAULT-VALUE})")
    long maxExtent;

    @Option(names = "--seed", defaultValue = "1", description = "the workload's random seed (default ${DEFAULT-VALUE})")
    long seed;

    @Mixin
    RunOptions run;

    @Override
    public Integer call() throws Exception {
        if (!aging) throw new BadOption("--no-aging", false, "only the --aging workload exists");
        Config config = run.config();
        BadOption.allOf("--allocator", allocators, List.of(Aging.BLOCKYARD, Tiobench.GLOBAL_LOCK, Aging.DYNAMIC_FIT));
        BadOption.atLeast("--volume-size", volumeSize, 1);
        for (long u : units) BadOption.atLeast("--unit", u, 1);
        BadOption.between("--high", high, 0, 1, false);
        BadOption.between("--low", low, 0, high, false);
        BadOption.atLeast("--rounds", rounds, 0);
        for (long u : units) {
            if (u > chunk) throw new BadOption("--chunk", chunk, "must be at least every --unit (" + u + ")");
            if (u > maxObject) throw new BadOption("--max-object", maxObject, "must be at least every --unit (" + u + ")");
        }
        List<String> labels = new ArrayList<>();
        for (long u : units) for (String a : allocators) labels.add(a.trim() + "@" + u);
        List<Map<String, Object>> rows = run.measure(labels, label -> {
            int at = label.indexOf('@');
            Aging.Spec spec = new Aging.Spec(volumeSize, Long.parseLong(label.substring(at + 1)), high, low,
                    rounds, maxObject, chunk, maxExtent, seed);
            return Aging.run(label.substring(0, at), spec, config, run.quiet ? null : System.err);
        });
        print(run.out(), rows);
        run.writeJson(rows);
        return 0;
    }

    static void print(java.io.PrintStream out, List<Map<String, Object>> rows) {
        Report.table(out, rows, Report.columns("allocator", "unit_bytes", "allocations", "split_pct",
                "extents_per_allocation", "short_allocations", "score_v3", Latency.columns("alloc_latency_us"),
                "elapsed_s"));
    }
}
