package org.blockyard.benches;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.Function;

import com.typesafe.config.Config;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import org.blockyard.api.alloc.Geometry;
import org.blockyard.runtime.alloc.ExtentAllocator;
import org.blockyard.runtime.volume.Layout;
import org.blockyard.runtime.volume.Volume;

/** {@code blockyard bench extents}: allocate/release churn through the extent interface, in Ceph's shapes. */
@Command(name = "extents", mixinStandardHelpOptions = true,
        description = "The extent interface under churn in Ceph's shapes: aging (fill to --high, free random objects "
                + "to --low, refill) and random power-of-two sizes (4 KiB-2 MiB, 4 KiB-64 KiB) overwritten on a volume "
                + "kept --fill full by --clients clients; prints split allocations, extents per allocation, the v3 "
                + "fragmentation score (per round in the JSON), latency and, after each shape, the free-extent "
                + "histogram per allocator.")
public final class ExtentsCommand implements Callable<Integer> {
    static final List<String> SHAPES = List.of(Aging.AGING, RandomChurn.RANDOM_2M, RandomChurn.RANDOM_64K);

    @Option(names = "--shape", defaultValue = "aging,random-2m,random-64k", split = ",",
            description = "aging | random-2m | random-64k, comma-separated; one table each (default ${DEFAULT-VALUE})")
    List<String> shapes;

    @Option(names = "--aging", description = "only the aging shape (as --shape aging)")
    boolean aging;

    @Option(names = "--allocator", defaultValue = "blockyard,global-lock,group-locks,dynamic-fit", split = ",",
            description = "blockyard (the actors through BlockAllocator) | blockyard-session (the actors, each client thread calling through a session of its own) | global-lock (the same groups and walk under one lock) | group-locks (the same under a lock per group, the walk reading published figures) | dynamic-fit (Ceph AvlAllocator-style baseline) (default ${DEFAULT-VALUE})")
    List<String> allocators;

    @Option(names = "--volume-size", converter = Sizes.Converter.class, defaultValue = "16GiB", description = "volume size, whole groups (default ${DEFAULT-VALUE})")
    long volumeSize;

    @Option(names = "--unit", converter = Sizes.Converter.class, defaultValue = "64KiB,4KiB", split = ",", description = "allocation units; one run each (default ${DEFAULT-VALUE})")
    List<Long> units;

    @Option(names = "--high", defaultValue = "0.85", description = "aging: fill to this fraction of the volume (default ${DEFAULT-VALUE})")
    double high;

    @Option(names = "--low", defaultValue = "0.65", description = "aging: free random objects down to this fraction (default ${DEFAULT-VALUE})")
    double low;

    @Option(names = "--rounds", defaultValue = "10",
            description = "rounds after the first fill: aging's free-and-refill rounds, the random shapes' parts of --overwrite; the score is taken after each (default ${DEFAULT-VALUE})")
    int rounds;

    @Option(names = "--max-object", converter = Sizes.Converter.class, defaultValue = "16MiB", description = "aging: largest object; sizes are log-uniform from one unit (default ${DEFAULT-VALUE})")
    long maxObject;

    @Option(names = "--chunk", converter = Sizes.Converter.class, defaultValue = "4MiB", description = "aging: bytes per allocate call while writing an object (default ${DEFAULT-VALUE})")
    long chunk;

    @Option(names = "--max-extent", converter = Sizes.Converter.class, defaultValue = "4MiB", description = "longest extent an allocate may return; 0 = no limit (default ${DEFAULT-VALUE})")
    long maxExtent;

    @Option(names = "--fill", defaultValue = "0.9", description = "random shapes: fraction of the volume filled first and kept (default ${DEFAULT-VALUE})")
    double fill;

    @Option(names = "--overwrite", defaultValue = "1",
            description = "random shapes: bytes allocated after the fill, times the volume (Ceph's test: 3) (default ${DEFAULT-VALUE})")
    double overwrite;

    @Option(names = "--clients", defaultValue = "4", description = "random shapes: client threads churning at once (default ${DEFAULT-VALUE})")
    int clients;

    @Option(names = "--volume", paramLabel = "IMAGE", description = "blockyard and blockyard-session on a durable volume: "
            + "each of their rows makes a fresh volume of --volume-size in IMAGE (a new file, deleted after the row) and "
            + "calls its VolumeAllocator, blockyard-session through sessions over loans; the rows are named with "
            + "'-volume'; the other allocators run in memory")
    Path volume;

    @Option(names = "--seed", defaultValue = "1", description = "the workload's random seed (default ${DEFAULT-VALUE})")
    long seed;

    @Mixin
    PlotOption plot;

    @Mixin
    RunOptions run;

    @Override
    public Integer call() throws Exception {
        Config config = run.config();
        List<String> shapeList = aging ? List.of(Aging.AGING) : BadOption.allOf("--shape", shapes, SHAPES);
        BadOption.allOf("--allocator", allocators, List.of(Aging.BLOCKYARD, Aging.BLOCKYARD_SESSION, Tiobench.GLOBAL_LOCK, Tiobench.GROUP_LOCKS, Aging.DYNAMIC_FIT));
        BadOption.atLeast("--volume-size", volumeSize, 1);
        for (long u : units) BadOption.atLeast("--unit", u, 1);
        int block = Aging.volumeGeometry(config, volumeSize).blockSizeBytes();
        for (long u : units)
            if (u % block != 0) throw new BadOption("--unit", u, "must be a multiple of the block, " + block + " bytes");
        BadOption.between("--high", high, 0, 1, false);
        BadOption.between("--low", low, 0, high, false);
        BadOption.atLeast("--rounds", rounds, 0);
        for (long u : units) {
            if (u > chunk) throw new BadOption("--chunk", chunk, "must be at least every --unit (" + u + ")");
            if (u > maxObject) throw new BadOption("--max-object", maxObject, "must be at least every --unit (" + u + ")");
        }
        if (!(fill > 0 && fill < 1)) throw new BadOption("--fill", fill, "must be above 0 and below 1");
        if (!(overwrite >= 0)) throw new BadOption("--overwrite", overwrite, "must be 0 or more");
        BadOption.atLeast("--clients", clients, 1);
        if (volume != null && Files.exists(volume))
            throw new BadOption("--volume", volume, "must not exist: each durable row makes a fresh volume there");
        Path plots = plot.directory();
        PrintStream progress = run.quiet ? null : System.err;
        List<String> labels = new ArrayList<>();
        for (String shape : shapeList) for (long u : units) for (String a : allocators) labels.add(shape + " " + a.trim() + "@" + u);
        List<Map<String, Object>> rows = run.measure(labels, label -> {
            String[] f = label.split("[ @]");
            String shape = f[0], allocator = f[1];
            long unit = Long.parseLong(f[2]);
            boolean durable = volume != null && (allocator.equals(Aging.BLOCKYARD) || allocator.equals(Aging.BLOCKYARD_SESSION));
            Function<Geometry, ExtentAllocator> opener = durable
                    ? g -> onVolume(g, config, allocator.equals(Aging.BLOCKYARD_SESSION))
                    : g -> Aging.open(allocator, g, config);
            Map<String, Object> row = shape.equals(Aging.AGING)
                    ? Aging.run(allocator, new Aging.Spec(volumeSize, unit, high, low, rounds, maxObject, chunk, maxExtent,
                    seed), config, progress, opener)
                    : RandomChurn.run(allocator, new RandomChurn.Spec(shape, volumeSize, unit, fill, overwrite, rounds,
                    clients, maxExtent, seed), config, progress, opener);
            if (durable) {
                row.put("allocator", allocator + "-volume");
                long allocations = ((Number) row.get("allocations")).longValue();
                long transactions = journalSpan[1].transactions() - journalSpan[0].transactions();
                row.put("journal_transactions", transactions);
                row.put("journal_forces", journalSpan[1].forces() - journalSpan[0].forces());
                row.put("allocations_per_transaction", (double) allocations / Math.max(1, transactions));
            }
            return row;
        });
        PrintStream out = run.out();
        for (String shape : shapeList) {
            List<Map<String, Object>> of = rows.stream().filter(r -> shape.equals(r.get("shape"))).toList();
            out.println(shape + ":");
            print(out, of);
            FreeExtentHistogram.print(out, "free extents after " + shape + ", by size (count of extents of [size, 2 x size)):",
                    of, LABEL, "free_extent_histogram");
            out.println();
            if (plots != null) plot(plots, shape, of, out);
        }
        run.writeJson(rows);
        return 0;
    }

    /** The journal's counts when the durable row's volume opened and before it closed. */
    private final org.blockyard.runtime.volume.Journal.Stats[] journalSpan = new org.blockyard.runtime.volume.Journal.Stats[2];

    /**
     * A fresh durable volume of {@code g}'s size in {@link #volume} (mkfs's file table, the configured journal), its
     * {@code VolumeAllocator} as an extent allocator; closing it closes the volume and deletes the image.
     */
    private ExtentAllocator onVolume(Geometry g, Config config, boolean sessions) {
        Layout layout = Layout.make(g.blockSizeBytes(),
                g.totalBlocks(), g.blocksPerGroup(), CrashBenchCommand.FILE_TABLE_BLOCKS,
                config.getInt("blockyard.volume.journal-blocks"), 0, 0);
        Volume.mkfs(volume, layout);
        Volume v = Volume.open(volume, config);
        journalSpan[0] = v.journalStats();
        return new BlockAllocatorAdapter(v.allocator(), () -> {
            try {
                journalSpan[1] = v.journalStats();
                v.close();
            } finally {
                Files.deleteIfExists(volume);
            }
        }, sessions, sessions ? v.actors()::reclaimLoans : null);
    }

    /** A row's name in tables and plots: {@code blockyard 64 KiB}. */
    static final Function<Map<String, Object>, String> LABEL =
            r -> r.get("allocator") + " " + Sizes.format(((Number) r.get("unit_bytes")).longValue());

    static void print(PrintStream out, List<Map<String, Object>> rows) {
        boolean durable = rows.stream().anyMatch(r -> r.containsKey("allocations_per_transaction"));
        Report.table(out, rows, Report.columns("allocator", "unit_bytes", "clients", "allocations", "split_pct",
                "extents_per_allocation", "extents_per_split_allocation", "short_allocations", "score_v3",
                Latency.columns("alloc_latency_us"), "allocs_per_s",
                durable ? List.of("journal_transactions", "allocations_per_transaction") : List.of(), "elapsed_s"));
    }

    /** The three plots of one shape: latency CDF, the score and the allocation rate per round. */
    static void plot(Path dir, String shape, List<Map<String, Object>> rows, PrintStream out) throws IOException {
        String name = "extents-" + shape;
        List<Path> written = List.of(
                Plots.latencyCdf(dir, name + "-latency-cdf", "extents " + shape + ": allocate latency", "µs", rows,
                        LABEL, "alloc_latency_cdf_us"),
                Plots.overTime(dir, name + "-score", "extents " + shape + ": fragmentation score (v3) after each round",
                        "round (0: the first fill)", "score (0 = one free extent, 1 = all single blocks)", rows, LABEL,
                        "score_v3_by_round", 0, 1, false),
                Plots.overTime(dir, name + "-allocs-per-s", "extents " + shape + ": allocations per second in each round",
                        "round (0: the first fill)", "allocations/s (frees included in the time)", rows, LABEL,
                        "allocs_per_s_by_round", 0, 1, true));
        for (Path p : written) out.println("plot: " + p);
    }
}
