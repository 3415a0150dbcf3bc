package org.blockyard.benches;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.function.Supplier;

import com.typesafe.config.Config;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import org.blockyard.api.alloc.BlockAllocator;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.runtime.alloc.ActorBlockAllocator;
import org.blockyard.runtime.alloc.AllocatorSettings;
import org.blockyard.runtime.alloc.BlockGroup;

/**
 * {@code blockyard bench introspect}: what a storage engine pays to ask for the free count and the
 * fragmentation score, at the volume sizes it runs. Each volume is aged first: every group filled from
 * its start to a random fraction, then a random sprinkle of used blocks past that, so free space is in
 * many runs. Then {@code --calls} calls of each, one after the other, timed one by one.
 */
@Command(name = "introspect", mixinStandardHelpOptions = true,
        description = "Latency of freeBlocks() and fragmentationScore() on aged volumes of the given sizes, actors and global lock.")
public final class IntrospectCommand implements Callable<Integer> {

    @Option(names = "--volume", converter = Sizes.Converter.class, defaultValue = "64GiB,238GiB,1TiB", split = ",",
            description = "volume sizes, comma-separated (default ${DEFAULT-VALUE})")
    List<Long> volumes;

    @Option(names = "--calls", defaultValue = "200", description = "timed calls of each kind (default ${DEFAULT-VALUE})")
    int calls;

    @Option(names = "--policy", defaultValue = "reservation,global-lock,group-locks", split = ",",
            description = "reservation | global-lock | group-locks, or any installed policy (mballoc, no-reservation, --deploy's), comma-separated (default ${DEFAULT-VALUE})")
    List<String> policies;

    @Option(names = "--seed", defaultValue = "1", description = "seed of the ageing pattern (default ${DEFAULT-VALUE})")
    long seed;

    @Mixin
    DeployOption deploy;

    @Mixin
    RunOptions run;

    @Override
    public Integer call() throws Exception {
        BadOption.atLeast("--calls", calls, 1);
        Config config = deploy.applyTo(run.config());
        BenchPolicies.check("--policy", policies, config, Tiobench.GLOBAL_LOCK, Tiobench.GROUP_LOCKS);
        List<String> labels = new ArrayList<>();
        for (long bytes : volumes) {
            BadOption.atLeast("--volume", bytes, 1);
            geometry(bytes, base(config));
            for (String policy : policies) labels.add(Sizes.format(bytes).replace(" ", "") + "@" + policy.trim());
        }
        List<Map<String, Object>> rows = run.measure(labels, label -> {
            int at = label.indexOf('@');
            return measure(Sizes.parse(label.substring(0, at)), label.substring(at + 1), config);
        });
        Report.table(run.out(), rows, List.of("policy", "volume", "groups", "free_blocks_us.raw.p50",
                "free_blocks_us.raw.p99", "free_blocks_us.corrected.p99", "score_us.raw.p50", "score_us.raw.p99",
                "score_us.corrected.p99", "score"));
        run.writeJson(rows);
        return 0;
    }

    /** The volume of {@code bytes}, whole groups; refused (before anything runs) when it has none or too many. */
    private static Geometry geometry(long bytes, AllocatorSettings base) {
        Geometry g0 = base.geometry();
        long blocks = bytes / g0.blockSizeBytes();
        if (blocks < g0.blocksPerGroup())
            throw new BadOption("--volume", bytes, volume(bytes) + " is less than one group of " + g0.blocksPerGroup()
                    + " blocks (" + Sizes.format((long) g0.blocksPerGroup() * g0.blockSizeBytes()) + ")");
        Geometry g = Geometry.of(g0.blockSizeBytes(), blocks - blocks % g0.blocksPerGroup(), g0.blocksPerGroup());
        if (g.groups() > Tiobench.MAX_BENCH_GROUPS)
            throw new BadOption("--volume", bytes, "has " + g.groups()
                    + " groups; this benchmark holds at most " + Tiobench.MAX_BENCH_GROUPS);
        return g;
    }

    private static AllocatorSettings base(Config config) {
        return AllocatorSettings.fromConfig(config, config.getInt("blockyard.volume.blocks-per-group"));
    }

    private Map<String, Object> measure(long bytes, String policy, Config config) {
        AllocatorSettings base = base(config);
        Geometry g = geometry(bytes, base);
        boolean lock = LockPeer.is(policy);
        AllocatorSettings settings = base.withGeometry(g)
                .withPolicy(BenchPolicies.byId(lock ? "reservation" : policy, config, g));
        BlockAllocator a;
        AutoCloseable closer = () -> {};
        if (lock) {
            a = LockPeer.open(policy, g, settings.policy(), settings.preallocMinWindowBlocks(), this::age).api();
        } else {
            ActorBlockAllocator act = ActorBlockAllocator.start(settings, config, this::age);
            a = act;
            closer = act;
        }
        try {
            Latency free = time(() -> a.freeBlocks().toCompletableFuture().join());
            Latency score = time(() -> a.fragmentationScore().toCompletableFuture().join());
            Map<String, Object> row = Report.row();
            row.put("policy", policy);
            row.put("volume", volume(bytes));
            row.put("groups", (long) g.groups());
            row.put("free_blocks", a.freeBlocks().toCompletableFuture().join());
            row.put("free_blocks_us", free.summaryMicros());
            row.put("score_us", score.summaryMicros());
            row.put("score", a.fragmentationScore().toCompletableFuture().join());
            return row;
        } finally {
            try {
                closer.close();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }

    private static String volume(long bytes) {
        return Sizes.format(bytes);
    }

    /** Fills a group from its start to a random fraction, then sprinkles used blocks past that. */
    private void age(BlockGroup group) {
        Random rnd = new Random(seed * 1_000_003 + group.group());
        int data = (int) group.dataBlocks();
        int filled = (int) (data * (0.3 + 0.6 * rnd.nextDouble()));
        group.fillFromStart(filled);
        for (int i = 0; i < data / 64; i++) {
            long b = group.firstDataBlock() + filled + rnd.nextInt(Math.max(1, data - filled));
            if (b < group.end() && !group.isUsed(b)) group.markUsed(b, 1);
        }
    }

    private Latency time(Supplier<Object> call) {
        Latency l = new Latency();
        long start = System.nanoTime();
        for (int i = 0; i < calls; i++) {
            long t0 = System.nanoTime();
            call.get();
            l.record(System.nanoTime() - t0);
        }
        return l.correctClosedLoop(System.nanoTime() - start, 1);
    }
}
