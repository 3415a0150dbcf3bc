package org.blockyard.benches;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.Function;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import com.typesafe.config.Config;

import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.BlockAllocator;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.api.alloc.MapRequest;
import org.blockyard.runtime.alloc.ActorBlockAllocator;
import org.blockyard.runtime.alloc.AllocatorSettings;
import org.blockyard.runtime.alloc.BlockGroup;
import org.blockyard.runtime.alloc.Reply;
import org.blockyard.runtime.volume.Journal;
import org.blockyard.runtime.volume.Volume;

/**
 * tiobench's sequential-write case (seed 002): N files appended concurrently through getBlocks, K blocks
 * a call, on a volume of the configured geometry sized to hold them twice. Measures the layout (extents
 * per file against the ideal of one per group span) and the allocator (latency, throughput, messages).
 */
public final class Tiobench {
    private Tiobench() {}

    public static final String GLOBAL_LOCK = "global-lock";
    /** The peer with a lock per group and one per file ({@code GroupLockAllocator}), called on the writers' threads. */
    public static final String GROUP_LOCKS = "group-locks";

    /**
     * @param depth   calls each writer keeps in flight (1 = a synchronous writer)
     * @param threads writers are plain threads calling {@code BlockAllocator} (an embedder's threads), not actors
     * @param batch   getBlocks requests per call for thread writers ({@code getBlocks(file, List)}); 1 = single calls
     */
    public record Spec(int writers, long fileSizeBytes, String policy, int chunkBlocks, int depth, boolean threads,
                       int batch) {
        public Spec(int writers, long fileSizeBytes, String policy, int chunkBlocks, int depth) {
            this(writers, fileSizeBytes, policy, chunkBlocks, depth, false, 1);
        }

        public Spec {
            if (batch < 1 || batch > BlockAllocator.MAX_BATCH)
                throw new IllegalArgumentException("--batch must be 1 to " + BlockAllocator.MAX_BATCH);

            if (depth < 1) throw new IllegalArgumentException("--depth must be at least 1");
            if (writers < 1) throw new IllegalArgumentException("--writers must be at least 1");
            if (chunkBlocks < 1) throw new IllegalArgumentException("--chunk-blocks must be at least 1");
            if (fileSizeBytes < 1) throw new IllegalArgumentException("--file-size must be at least 1 byte");
        }
    }

    /** Most groups a benchmark volume may have: each is an actor and a bitmap in this JVM's heap. */
    public static final long MAX_BENCH_GROUPS = 200_000;

    public static Map<String, Object> run(Spec spec, Config config) {
        return run(spec, config, null);
    }

    /**
     * With {@code volume} (an image made by mkfs): the writers run in memory over the volume's geometry and used
     * blocks, then on the volume through its durable path (actor writers' replies through its acknowledgement,
     * thread writers through its {@code BlockAllocator}); one row holds the in-memory figures and the durable
     * ones beside them (rate, ratio, forces per acknowledged allocation).
     */
    public static Map<String, Object> run(Spec spec, Config config, Path volume) {
        AllocatorSettings base = AllocatorSettings.fromConfig(config, 0L + config.getInt("blockyard.volume.blocks-per-group"));
        DurableSide side = volume == null ? null : DurableSide.of("--volume", volume);
        if (side != null) base = base.withGeometry(side.geometry());
        int blockBytes = base.geometry().blockSizeBytes();
        long fileBlocks = (spec.fileSizeBytes() + blockBytes - 1) / blockBytes;
        boolean lock = LockPeer.is(spec.policy()); // in memory only: the lock peers have no durable form
        if (side != null && !lock) side.requireTableRoom(spec.writers());
        if (side != null && !lock && side.freeBlocks() < spec.writers() * fileBlocks)
            throw new IllegalArgumentException("the volume has " + side.freeBlocks() + " free blocks; " + spec.writers()
                    + " writers of " + fileBlocks + " blocks need " + spec.writers() * fileBlocks);
        Geometry geometry = side != null ? side.geometry() : sized(spec, base, fileBlocks);
        AllocationPolicy policy = BenchPolicies.byId(lock ? "reservation" : spec.policy(), config, geometry);
        AllocatorSettings settings = base.withGeometry(geometry).withPolicy(policy);
        Consumer<BlockGroup> prepare = side == null ? group -> {} : side::markUsed;

        long cpu0 = processCpuNanos();
        Run r = lock && spec.batch() == 1 ? runLocked(spec, lockPeer(spec, settings), fileBlocks)
                : lock ? runThreads(spec, lockPeer(spec, settings).api(), () -> {}, FILES, fileBlocks)
                : spec.threads() ? runThreadsOnActors(spec, settings, config, prepare, fileBlocks)
                : runActors(spec, settings, config, prepare, fileBlocks);
        long cpu = processCpuNanos() - cpu0;
        Map<String, Object> row = row(spec, geometry, lock, policy, r, fileBlocks);
        row.put("cpu_s", Latency.round(cpu / 1e9));
        if (side != null && !lock) durable(spec, config, side, r, fileBlocks, row);
        return row;
    }

    /** Names of the files: {@code FILES + i}. */
    private static final String FILES = "/tiobench/file-";

    /** A volume of the configured geometry sized to hold the files twice. */
    private static Geometry sized(Spec spec, AllocatorSettings base, long fileBlocks) {
        int bpg = base.geometry().blocksPerGroup();
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
        return new Geometry(base.geometry().blockSizeBytes(), groups * bpg, bpg, base.geometry().systemBlocksPerGroup(),
                base.geometry().journalBlocks(), base.geometry().strideBlocks(), base.geometry().stripeBlocks());
    }

    /** The run's layout and allocator figures. */
    private static Map<String, Object> row(Spec spec, Geometry geometry, boolean lock, AllocationPolicy policy, Run r,
                                           long fileBlocks) {
        int bpg = geometry.blocksPerGroup();
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
        row.put("policy_detail", lock ? spec.policy() + " over " + policy : policy.toString());
        row.put("writers", spec.writers());
        row.put("file_size_bytes", spec.fileSizeBytes());
        row.put("chunk_blocks", spec.chunkBlocks());
        row.put("callers", lock || spec.threads() ? "threads" : "actors");
        row.put("depth", lock || spec.threads() ? 1 : spec.depth());
        row.put("batch", spec.batch());
        row.put("block_size_bytes", geometry.blockSizeBytes());
        row.put("blocks_per_group", bpg);
        row.put("groups", geometry.groups());
        row.put("extents_per_file_mean", (double) extents / spec.writers());
        row.put("extents_per_file_max", maxExtents);
        row.put("ideal_extents_per_file", ideal);
        row.put("extents_vs_ideal", (double) extents / spec.writers() / ideal);
        row.put("mean_extent_blocks", extents == 0 ? 0.0 : (double) blocks / extents);
        row.put("alloc_latency_us", r.latency.summaryMicros());
        row.put("alloc_latency_cdf_us", r.latency.cdfMicros());
        row.put("allocs", r.calls);
        row.put("allocs_per_s", r.calls / seconds);
        row.put("blocks_per_s", blocks / seconds);
        row.put("messages", r.messages);
        row.put("heap_bytes_per_alloc", r.calls == 0 ? 0 : r.heapBytes / r.calls);
        row.put("elapsed_s", Latency.round(seconds));
        return row;
    }

    /** The same writers on the volume, through its durable path; their figures go into {@code row}. */
    private static void durable(Spec spec, Config config, DurableSide side, Run memory, long fileBlocks,
                                Map<String, Object> row) {
        try (Volume v = side.open(config, spec.policy(), group -> {})) {
            Journal.Stats s0 = v.journalStats();
            String files = side.prefix + FILES;
            Run d = spec.threads() ? runThreads(spec, v.allocator(), () -> {}, files, fileBlocks)
                    : runClients(spec, v.actors(), v.allocator(), file -> DurableSide.acknowledging(v, file), files,
                            fileBlocks);
            Journal.Stats s1 = v.journalStats();
            long extents = 0;
            for (List<Extent> f : d.extents) extents += f.size();
            row.put("durable_extents_per_file_mean", (double) extents / spec.writers());
            row.put("durable_alloc_latency_us", d.latency.summaryMicros());
            DurableSide.put(row, "allocs", d.calls, memory.calls / (memory.elapsedNanos / 1e9),
                    d.calls / (d.elapsedNanos / 1e9), s0, s1);
        }
    }

    /** {@code latency} is per call (per batch with --batch); {@code calls} counts getBlocks requests. */
    private record Run(List<List<Extent>> extents, Latency latency, long elapsedNanos, long messages, long calls,
                       long heapBytes) {
        Run(List<List<Extent>> extents, Latency latency, long elapsedNanos, long messages, long heapBytes) {
            this(extents, latency, elapsedNanos, messages, latency.count(), heapBytes);
        }
    }

    private static Run runThreadsOnActors(Spec spec, AllocatorSettings settings, Config config,
                                          Consumer<BlockGroup> prepare, long fileBlocks) {
        try (ActorBlockAllocator a = ActorBlockAllocator.start(settings, config, prepare)) {
            long m0 = a.volume().messages();
            Run r = runThreads(spec, a, () -> {}, FILES, fileBlocks);
            return new Run(r.extents, r.latency, r.elapsedNanos, a.volume().messages() - m0, r.calls, r.heapBytes);
        }
    }

    /**
     * Writers as plain threads calling the {@code BlockAllocator} interface, as an embedder's threads do:
     * each call is handed to the allocator and joined; with {@code --batch B} one call carries B requests.
     */
    private static Run runThreads(Spec spec, BlockAllocator a, Runnable after, String files, long fileBlocks) {
        List<Consumer<Latency>> writers = new ArrayList<>();
        LongAdder calls = new LongAdder();
        List<String> names = new ArrayList<>();
        for (int i = 0; i < spec.writers(); i++) {
            String name = files + i;
            names.add(name);
            a.open(name).toCompletableFuture().join();
            writers.add(l -> {
                long logical = 0;
                List<MapRequest> batch = new ArrayList<>(spec.batch());
                while (logical < fileBlocks) {
                    batch.clear();
                    long next = logical;
                    while (batch.size() < spec.batch() && next < fileBlocks) {
                        int want = (int) Math.min(spec.chunkBlocks(), fileBlocks - next);
                        batch.add(MapRequest.allocate(next, want));
                        next += want;
                    }
                    long s = System.nanoTime();
                    if (spec.batch() == 1) {
                        MapRequest r = batch.get(0);
                        logical += a.getBlocks(name, r.logicalBlock(), r.maxBlocks(), true).toCompletableFuture().join().blocks();
                        calls.increment();
                    } else {
                        List<BlockRun> runs = a.getBlocks(name, batch).toCompletableFuture().join();
                        calls.add(runs.size());
                        // A run shorter than asked leaves a hole that the next batch starts at.
                        for (BlockRun run : runs) {
                            if (run.logicalStart() != logical) break;
                            logical += run.blocks();
                        }
                    }
                    l.record(System.nanoTime() - s);
                }
            });
        }
        Latency all = new Latency();
        AllocationMeter meter = AllocationMeter.start();
        long elapsed = ThreadClients.runTogether(writers, all, "tiobench-writer");
        long heap = meter.bytes();
        List<List<Extent>> extents = new ArrayList<>();
        for (String n : names) {
            extents.add(a.fileExtents(n).toCompletableFuture().join());
            a.close(n).toCompletableFuture().join();
        }
        after.run();
        return new Run(extents, all, elapsed, 0, calls.sum(), heap);
    }

    private static Run runActors(Spec spec, AllocatorSettings settings, Config config, Consumer<BlockGroup> prepare,
                                 long fileBlocks) {
        try (ActorBlockAllocator a = ActorBlockAllocator.start(settings, config, prepare)) {
            return runClients(spec, a, a, null, FILES, fileBlocks);
        }
    }

    /**
     * Writers as actors messaging {@code a}'s file actors; files opened, read back and closed through
     * {@code api}. {@code acknowledging} (null in memory) gives each writer, for its file, what its replies
     * pass through before they reach it.
     */
    private static Run runClients(Spec spec, ActorBlockAllocator a, BlockAllocator api,
                                  Function<String, Function<ActorRef<Reply<?>>, Behavior<Object>>> acknowledging,
                                  String files, long fileBlocks) {
        try {
            List<String> names = new ArrayList<>();
            for (int i = 0; i < spec.writers(); i++) {
                String name = files + i;
                names.add(name);
                api.open(name).toCompletableFuture().join();
            }
            List<CompletableFuture<Long>> done = new ArrayList<>(); // each writer's end time
            List<CompletableFuture<Long>> callCounts = new ArrayList<>(); // and its calls
            List<Latency> latencies = new ArrayList<>();
            List<ActorRef<Object>> clients = new ArrayList<>();
            for (int i = 0; i < spec.writers(); i++) {
                CompletableFuture<Long> d = new CompletableFuture<>();
                Latency l = new Latency();
                done.add(d.thenApply(calls -> System.nanoTime()));
                callCounts.add(d);
                latencies.add(l);
                clients.add(a.spawn(
                        LoadClient.create(a.fileHandle(names.get(i)), fileBlocks, spec.chunkBlocks(), spec.depth(), spec.batch(),
                                acknowledging == null ? null : acknowledging.apply(names.get(i)), l, d),
                        "tiobench-writer-" + i));
            }
            ThreadClients.quiesce();
            long messages0 = a.volume().messages();
            AllocationMeter meter = AllocationMeter.start();
            long t0 = System.nanoTime();
            Starter.startAll(a, clients, (Object) LoadClient.Go.INSTANCE, "tiobench-start");
            CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)).get(30, TimeUnit.MINUTES);
            long elapsed = System.nanoTime() - t0;
            long heap = meter.bytes();
            long messages = a.volume().messages() - messages0;
            Latency all = new Latency();
            // Each writer is a closed loop of depth calls in flight, from the start message to its own end.
            for (int i = 0; i < latencies.size(); i++)
                all.merge(latencies.get(i).correctClosedLoop(done.get(i).join() - t0, spec.depth())); // a sample per message
            List<List<Extent>> extents = new ArrayList<>();
            for (String n : names) {
                extents.add(api.fileExtents(n).toCompletableFuture().join());
                api.close(n).toCompletableFuture().join();
            }
            // The clients' own replies are messages too.
            long calls = 0;
            for (CompletableFuture<Long> d : callCounts) calls += d.join();
            return new Run(extents, all, elapsed, messages + all.count(), calls, heap);
        } catch (Exception e) {
            throw new IllegalStateException("tiobench run failed: " + e.getMessage(), e);
        }
    }

    /** The lock peer {@code spec} names, over the run's geometry and policy. */
    private static LockPeer<?> lockPeer(Spec spec, AllocatorSettings settings) {
        return LockPeer.open(spec.policy(), settings.geometry(), settings.policy(), settings.preallocMinWindowBlocks(),
                group -> {});
    }

    /** Writers as threads making the lock peer's handle calls, one getBlocks at a time. */
    private static <H> Run runLocked(Spec spec, LockPeer<H> a, long fileBlocks) {
        List<Consumer<Latency>> writers = new ArrayList<>();
        for (int i = 0; i < spec.writers(); i++) {
            H f = a.openFile("/tiobench/file-" + i);
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
        AllocationMeter meter = AllocationMeter.start();
        long elapsed = ThreadClients.runTogether(writers, all, "tiobench-writer");
        return new Run(new ArrayList<>(a.fileExtents().values()), all, elapsed, 0, meter.bytes());
    }

    /** CPU time of the whole process (every thread, user and system) so far; 0 where the JVM does not say. */
    public static long processCpuNanos() {
        var os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean sun) return sun.getProcessCpuTime();
        return 0;
    }
}
