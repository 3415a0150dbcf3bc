package org.blockyard.runtime.bench;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import akka.actor.typed.ActorRef;
import com.typesafe.config.Config;

import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.runtime.alloc.ActorBlockAllocator;
import org.blockyard.runtime.alloc.AllocatorSettings;
import org.blockyard.runtime.alloc.FileState;
import org.blockyard.runtime.alloc.GlobalLockAllocator;

/**
 * tiobench's sequential-write case (seed 002): N files appended concurrently through getBlocks, K blocks
 * a call, on a volume of the configured geometry sized to hold them twice. Measures the layout (extents
 * per file against the ideal of one per group span) and the allocator (latency, throughput, messages).
 */
public final class Tiobench {
    private Tiobench() {}

    public static final String GLOBAL_LOCK = "global-lock";

    /** @param depth calls each writer keeps in flight (1 = a synchronous writer) */
    public record Spec(int writers, long fileSizeBytes, String policy, int chunkBlocks, int depth) {
        public Spec {
            if (depth < 1) throw new IllegalArgumentException("--depth must be at least 1");
            if (writers < 1) throw new IllegalArgumentException("--writers must be at least 1");
            if (chunkBlocks < 1) throw new IllegalArgumentException("--chunk-blocks must be at least 1");
            if (fileSizeBytes < 1) throw new IllegalArgumentException("--file-size must be at least 1 byte");
        }
    }

    /** Most groups a benchmark volume may have: each is an actor and a bitmap in this JVM's heap. */
    static final long MAX_BENCH_GROUPS = 200_000;

    public static Map<String, Object> run(Spec spec, Config config) {
        AllocatorSettings base = AllocatorSettings.fromConfig(config, 0L + config.getInt("blockyard.volume.blocks-per-group"));
        int blockBytes = base.geometry().blockSizeBytes();
        int bpg = base.geometry().blocksPerGroup();
        long fileBlocks = (spec.fileSizeBytes() + blockBytes - 1) / blockBytes;
        long groups;
        try {
            groups = Math.max(1, Math.addExact(Math.multiplyExact(2L * spec.writers(), fileBlocks), bpg - 1) / bpg);
        } catch (ArithmeticException e) {
            groups = Long.MAX_VALUE;
        }
        if (groups > MAX_BENCH_GROUPS)
            throw new IllegalArgumentException(spec.writers() + " writers of " + spec.fileSizeBytes() + " bytes need a volume of "
                    + (groups == Long.MAX_VALUE ? "more than 2^63 blocks" : groups + " groups") + "; this benchmark holds at most "
                    + MAX_BENCH_GROUPS + " groups in memory: use a smaller --file-size or fewer --writers");
        Geometry geometry = new Geometry(blockBytes, groups * bpg, bpg, base.geometry().systemBlocksPerGroup(),
                base.geometry().journalBlocks(), base.geometry().strideBlocks(), base.geometry().stripeBlocks());
        boolean lock = spec.policy().equals(GLOBAL_LOCK);
        AllocationPolicy policy = BenchPolicies.byId(lock ? "reservation" : spec.policy(), config, geometry);
        AllocatorSettings settings = base.withGeometry(geometry).withPolicy(policy);

        long cpu0 = processCpuNanos();
        Run r = lock ? runLocked(spec, settings, fileBlocks) : runActors(spec, settings, config, fileBlocks);
        long cpu = processCpuNanos() - cpu0;

        long perGroupData = bpg - geometry.systemBlocksPerGroup();
        long ideal = (fileBlocks + perGroupData - 1) / perGroupData;
        long extents = 0, maxExtents = 0, blocks = 0;
        for (List<Extent> f : r.extents) {
            extents += f.size();
            maxExtents = Math.max(maxExtents, f.size());
            for (Extent e : f) blocks += e.blocks();
        }
        double seconds = r.elapsedNanos / 1e9;
        Map<String, Object> row = Report.row();
        row.put("workload", "tiobench");
        row.put("policy", spec.policy());
        row.put("policy_detail", lock ? "global-lock over " + policy : policy.toString());
        row.put("writers", spec.writers());
        row.put("file_size_bytes", spec.fileSizeBytes());
        row.put("chunk_blocks", spec.chunkBlocks());
        row.put("depth", lock ? 1 : spec.depth());
        row.put("block_size_bytes", blockBytes);
        row.put("blocks_per_group", bpg);
        row.put("groups", geometry.groups());
        row.put("extents_per_file_mean", (double) extents / spec.writers());
        row.put("extents_per_file_max", maxExtents);
        row.put("ideal_extents_per_file", ideal);
        row.put("extents_vs_ideal", (double) extents / spec.writers() / ideal);
        row.put("mean_extent_blocks", extents == 0 ? 0.0 : (double) blocks / extents);
        row.put("alloc_latency_us", r.latency.summaryMicros());
        row.put("allocs", r.latency.count());
        row.put("allocs_per_s", r.latency.count() / seconds);
        row.put("blocks_per_s", blocks / seconds);
        row.put("messages", r.messages);
        row.put("elapsed_s", Latency.round(seconds));
        row.put("cpu_s", Latency.round(cpu / 1e9));
        return row;
    }

    private record Run(List<List<Extent>> extents, Latency latency, long elapsedNanos, long messages) {}

    private static Run runActors(Spec spec, AllocatorSettings settings, Config config, long fileBlocks) {
        try (ActorBlockAllocator a = ActorBlockAllocator.start(settings, config)) {
            List<String> names = new ArrayList<>();
            for (int i = 0; i < spec.writers(); i++) {
                String name = "/tiobench/file-" + i;
                names.add(name);
                a.open(name).toCompletableFuture().join();
            }
            List<CompletableFuture<Long>> done = new ArrayList<>(); // each writer's end time
            List<Latency> latencies = new ArrayList<>();
            List<ActorRef<LoadClient.Command>> clients = new ArrayList<>();
            for (int i = 0; i < spec.writers(); i++) {
                CompletableFuture<Long> d = new CompletableFuture<>();
                Latency l = new Latency();
                done.add(d.thenApply(calls -> System.nanoTime()));
                latencies.add(l);
                clients.add(a.spawn(
                        LoadClient.create(a.fileActor(names.get(i)), fileBlocks, spec.chunkBlocks(), spec.depth(), l, d),
                        "tiobench-writer-" + i));
            }
            ThreadClients.quiesce();
            long messages0 = a.volume().messages();
            long t0 = System.nanoTime();
            Starter.startAll(a, clients, (LoadClient.Command) LoadClient.Go.INSTANCE, "tiobench-start");
            CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)).get(30, TimeUnit.MINUTES);
            long elapsed = System.nanoTime() - t0;
            long messages = a.volume().messages() - messages0;
            Latency all = new Latency();
            // Each writer is a closed loop of depth calls in flight, from the start message to its own end.
            for (int i = 0; i < latencies.size(); i++)
                all.merge(latencies.get(i).correctClosedLoop(done.get(i).join() - t0, spec.depth()));
            List<List<Extent>> extents = new ArrayList<>();
            for (String n : names) {
                extents.add(a.fileExtents(n).toCompletableFuture().join());
                a.close(n).toCompletableFuture().join();
            }
            // The clients' own replies are messages too.
            return new Run(extents, all, elapsed, messages + all.count());
        } catch (Exception e) {
            throw new IllegalStateException("tiobench run failed: " + e.getMessage(), e);
        }
    }

    private static Run runLocked(Spec spec, AllocatorSettings settings, long fileBlocks) {
        GlobalLockAllocator a = new GlobalLockAllocator(settings.geometry(), settings.policy(), settings.preallocMinWindowBlocks());
        List<Consumer<Latency>> writers = new ArrayList<>();
        for (int i = 0; i < spec.writers(); i++) {
            FileState f = a.openFile("/tiobench/file-" + i);
            writers.add(l -> {
                long logical = 0;
                while (logical < fileBlocks) {
                    int want = (int) Math.min(spec.chunkBlocks(), fileBlocks - logical);
                    long s = System.nanoTime();
                    logical += a.getBlocks(f, logical, want).blocks();
                    l.record(System.nanoTime() - s);
                }
            });
        }
        Latency all = new Latency();
        long elapsed = ThreadClients.runTogether(writers, all, "tiobench-writer");
        return new Run(new ArrayList<>(a.fileExtents().values()), all, elapsed, 0);
    }

    static long processCpuNanos() {
        var os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean sun) return sun.getProcessCpuTime();
        return 0;
    }
}
