package org.blockyard.benches;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;

import com.typesafe.config.Config;

import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.BlockAllocator;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.runtime.alloc.ActorBlockAllocator;
import org.blockyard.runtime.alloc.AllocatorSettings;
import org.blockyard.runtime.alloc.BlockGroup;
import org.blockyard.runtime.alloc.Reply;
import org.blockyard.runtime.volume.Journal;
import org.blockyard.runtime.volume.Volume;

/**
 * Seed 000's "tar xf / CVS checkout" case: many small files created by concurrent clients in groups
 * already filled to a fraction F from their start, so that each new window must be searched for past
 * the full part, near the groups' ends. That search is what held ext3's lock for 1.1 ms.
 */
public final class SmallFiles {
    private SmallFiles() {}

    /**
     * @param maxFileBlocks files are 1 to this many blocks, uniformly, from {@code seed}
     * @param batch         actor clients hand each file's one-block calls over in one message
     *                      ({@code GetBlocksBatch}), as a writer that knows the file's size can; latency is then
     *                      per file
     * @param wholeFile     actor clients write each file with one message to its shard ({@code WriteFile}: open,
     *                      the file's one-block calls, close), as {@code BlockAllocator.writeFile} does; latency is
     *                      per file. The lock's clients make the same calls one after the other either way.
     */
    public record Spec(int files, double fill, int blocksPerGroup, String policy, int clients, int maxFileBlocks,
                       long seed, boolean batch, boolean wholeFile) {
        public Spec(int files, double fill, int blocksPerGroup, String policy, int clients, int maxFileBlocks, long seed) {
            this(files, fill, blocksPerGroup, policy, clients, maxFileBlocks, seed, false, false);
        }

        public Spec(int files, double fill, int blocksPerGroup, String policy, int clients, int maxFileBlocks, long seed,
                    boolean batch) {
            this(files, fill, blocksPerGroup, policy, clients, maxFileBlocks, seed, batch, false);
        }

        public Spec {
            if (files < 1) throw new IllegalArgumentException("--files must be at least 1");
            if (!(fill >= 0 && fill < 1)) throw new IllegalArgumentException("--fill must be in [0, 1)");
            if (clients < 1) throw new IllegalArgumentException("--clients must be at least 1");
            if (maxFileBlocks < 1) throw new IllegalArgumentException("--max-file-blocks must be at least 1");
            if (batch && wholeFile) throw new IllegalArgumentException("--batch and --whole-file exclude each other");
        }

        SmallFileClient.Calls calls() {
            if (wholeFile) return SmallFileClient.Calls.WHOLE_FILE;
            return batch ? SmallFileClient.Calls.BATCH : SmallFileClient.Calls.EACH;
        }
    }

    /** Extent read-backs asked at once after a run. */
    private static final int READ_BACK_IN_FLIGHT = 256;

    public static Map<String, Object> run(Spec spec, Config config) {
        return run(spec, config, null);
    }

    /**
     * With {@code volume} (an image made by mkfs): the clients run in memory over the volume's geometry and used
     * blocks, each group filled to F from its start, then on the volume through its durable path, the fill
     * marked in memory only (never written, gone at the next opening); one row holds the in-memory figures and
     * the durable ones beside them (rates, ratio, forces per acknowledged allocation and per file).
     */
    public static Map<String, Object> run(Spec spec, Config config, Path volume) {
        DurableSide side = volume == null ? null : DurableSide.of("--volume", volume);
        AllocatorSettings base = AllocatorSettings.fromConfig(config, spec.blocksPerGroup());
        Geometry g0 = base.geometry();
        Random rnd = new Random(spec.seed());
        List<SmallFileClient.Job> jobs = new ArrayList<>();
        long totalBlocks = 0;
        for (int i = 0; i < spec.files(); i++) {
            int blocks = 1 + rnd.nextInt(spec.maxFileBlocks());
            totalBlocks += blocks;
            jobs.add(new SmallFileClient.Job("/src/d" + (i / 64) + "/f" + i, blocks));
        }
        Geometry geometry = side != null ? side.geometry() : sized(spec, g0, totalBlocks);
        boolean lock = LockPeer.is(spec.policy()); // in memory only: the lock peers have no durable form
        AllocationPolicy policy = BenchPolicies.byId(lock ? "reservation" : spec.policy(), config, geometry);
        AllocatorSettings settings = base.withGeometry(geometry).withPolicy(policy);
        Consumer<BlockGroup> fill = side == null ? fillFromStart(spec.fill()) : group -> fillFree(group, spec.fill(), side);
        Consumer<BlockGroup> prepare = side == null ? fill : group -> {
            side.markUsed(group);
            fill.accept(group);
        };
        if (side != null && !lock) {
            side.requireTableRoom(spec.files());
            long free = freeAfterFill(side, spec.fill());
            if (free < totalBlocks)
                throw new IllegalArgumentException("the volume has " + free + " free blocks past the fill of "
                        + spec.fill() + "; " + spec.files() + " files need " + totalBlocks);
        }

        List<List<SmallFileClient.Job>> shares = new ArrayList<>();
        for (int c = 0; c < spec.clients(); c++) shares.add(new ArrayList<>());
        for (int i = 0; i < jobs.size(); i++) shares.get(i % spec.clients()).add(jobs.get(i));

        long cpu0 = Tiobench.processCpuNanos();
        Latency all = new Latency();
        Clients r;
        if (lock) {
            LockPeer<?> a = LockPeer.open(spec.policy(), geometry, policy, settings.preallocMinWindowBlocks(), prepare);
            AllocationMeter meter = AllocationMeter.start();
            long elapsed = runLocked(a, shares, all);
            r = new Clients(elapsed, all, 0, 0, 0, meter.bytes(), new ArrayList<>(a.fileExtents().values()));
        } else {
            try (ActorBlockAllocator a = ActorBlockAllocator.start(settings, config, prepare)) {
                r = runClients(a, a, shares, spec.calls(), null, totalBlocks);
            }
        }
        long cpu = Tiobench.processCpuNanos() - cpu0;
        double seconds = r.elapsedNanos() / 1e9;
        long ext = 0;
        for (List<Extent> f : r.extents()) ext += f.size();
        Map<String, Object> row = Report.row();
        row.put("workload", "smallfiles");
        row.put("policy", spec.policy());
        row.put("policy_detail", lock ? spec.policy() + " over " + policy : policy.toString());
        row.put("files", spec.files());
        row.put("fill", spec.fill());
        row.put("blocks_per_group", geometry.blocksPerGroup());
        row.put("groups", geometry.groups());
        row.put("clients", spec.clients());
        row.put("batch", !lock && spec.batch());
        row.put("whole_file", !lock && spec.wholeFile());
        row.put("file_blocks_mean", (double) totalBlocks / spec.files());
        row.put("extents_per_file_mean", (double) ext / spec.files());
        row.put("ideal_extents_per_file", 1);
        row.put("mean_extent_blocks", ext == 0 ? 0.0 : (double) totalBlocks / ext);
        row.put("alloc_latency_us", r.latency().summaryMicros());
        row.put("allocs", r.latency().count());
        row.put("allocs_per_s", r.latency().count() / seconds);
        row.put("blocks_per_s", totalBlocks / seconds);
        row.put("files_per_s", spec.files() / seconds);
        row.put("messages", r.messages());
        row.put("messages_per_file", (double) r.messages() / spec.files());
        row.put("heap_bytes_per_file", r.heapBytes() / spec.files());
        row.put("search_slices", r.slices());
        row.put("stashed", r.stashed());
        row.put("elapsed_s", Latency.round(seconds));
        row.put("cpu_s", Latency.round(cpu / 1e9));
        if (side != null && !lock) durable(spec, config, side, fill, shares, totalBlocks, r, row);
        return row;
    }

    /** A volume of {@code spec}'s groups, enough of them for twice the files' blocks past the fill. */
    private static Geometry sized(Spec spec, Geometry g0, long totalBlocks) {
        int bpg = spec.blocksPerGroup();
        long freePerGroup = (long) ((bpg - Geometry.of(g0.blockSizeBytes(), bpg, bpg).systemBlocksPerGroup())
                * (1 - spec.fill()));
        long groups = Math.max(8, (2 * totalBlocks + freePerGroup - 1) / Math.max(1, freePerGroup));
        if (groups > Tiobench.MAX_BENCH_GROUPS)
            throw new IllegalArgumentException(spec.files() + " files at fill " + spec.fill() + " need " + groups
                    + " groups of " + bpg + " blocks; this benchmark holds at most " + Tiobench.MAX_BENCH_GROUPS
                    + " groups in memory: use fewer --files, a lower --fill or bigger --blocks-per-group");
        return Geometry.of(g0.blockSizeBytes(), groups * bpg, bpg).withJournal(g0.journalBlocks());
    }

    /**
     * Marks the first {@code fill} of each group's data blocks used, from the group's start, as it is prepared (in
     * memory, where nothing else holds them): the pre-fill of this bench and of a job file's {@code prefill}.
     */
    public static Consumer<BlockGroup> fillFromStart(double fill) {
        return group -> {
            long data = group.end() - group.firstDataBlock();
            int used = (int) (data * fill);
            if (used > 0) group.fillFromStart(used);
        };
    }

    /** The first {@code fill} of {@code group}'s data blocks, those the volume has free, marked used. */
    private static void fillFree(BlockGroup group, double fill, DurableSide side) {
        long from = group.firstDataBlock(), to = from + (long) ((group.end() - from) * fill);
        for (long b = from; b < to; ) {
            while (b < to && side.isUsed(b)) b++;
            long start = b;
            while (b < to && !side.isUsed(b)) b++;
            if (b > start) group.markUsed(start, (int) (b - start));
        }
    }

    /** Free blocks of the volume past each group's fill. */
    private static long freeAfterFill(DurableSide side, double fill) {
        Geometry g = side.geometry();
        long free = 0;
        for (int gi = 0; gi < g.groups(); gi++) {
            long from = g.groupStart(gi) + g.systemBlocks(gi), end = g.groupStart(gi) + g.groupBlocks(gi);
            for (long b = from + (long) ((end - from) * fill); b < end; b++) if (!side.isUsed(b)) free++;
        }
        return free;
    }

    /** The same clients on the volume, through its durable path; their figures go into {@code row}. */
    private static void durable(Spec spec, Config config, DurableSide side, Consumer<BlockGroup> fill,
                                List<List<SmallFileClient.Job>> shares, long totalBlocks, Clients memory,
                                Map<String, Object> row) {
        List<List<SmallFileClient.Job>> named = new ArrayList<>();
        for (List<SmallFileClient.Job> share : shares)
            named.add(share.stream().map(j -> new SmallFileClient.Job(side.prefix + j.name(), j.blocks())).toList());
        try (Volume v = side.open(config, spec.policy(), fill)) {
            Journal.Stats s0 = v.journalStats();
            Clients d = runClients(v.actors(), v.allocator(), named, spec.calls(), DurableSide.acknowledging(v, null),
                    totalBlocks);
            Journal.Stats s1 = v.journalStats();
            double seconds = d.elapsedNanos() / 1e9;
            row.put("durable_files_per_s", spec.files() / seconds);
            row.put("durable_alloc_latency_us", d.latency().summaryMicros());
            row.put("forces_per_file", (double) (s1.forces() - s0.forces()) / spec.files());
            double memoryPerSecond = memory.latency().count() / (memory.elapsedNanos() / 1e9);
            DurableSide.put(row, "allocs", d.latency().count(), memoryPerSecond, d.latency().count() / seconds, s0, s1);
        }
    }

    /** What a run of the clients measured; {@code latency} holds one sample per timed call. */
    private record Clients(long elapsedNanos, Latency latency, long messages, long slices, long stashed, long heapBytes,
                           List<List<Extent>> extents) {}

    /**
     * The clients as actors messaging {@code a}'s shards and file actors, through {@code acknowledging} when
     * given (a durable volume); the files' extents read back through {@code api}.
     */
    private static Clients runClients(ActorBlockAllocator a, BlockAllocator api, List<List<SmallFileClient.Job>> shares,
                                      SmallFileClient.Calls mode,
                                      Function<ActorRef<Reply<?>>, Behavior<Object>> acknowledging,
                                      long totalBlocks) {
        try {
            List<CompletableFuture<Long>> done = new ArrayList<>();
            List<Latency> lats = new ArrayList<>();
            List<ActorRef<Object>> clients = new ArrayList<>();
            for (int c = 0; c < shares.size(); c++) {
                CompletableFuture<Long> d = new CompletableFuture<>();
                Latency l = new Latency();
                done.add(d.thenApply(calls -> System.nanoTime())); // the client's end time
                lats.add(l);
                clients.add(a.spawn(SmallFileClient.create(a.fileShards(), shares.get(c), mode, acknowledging, l, d),
                        "smallfiles-client-" + c));
            }
            ThreadClients.quiesce();
            long m0 = a.volume().messages(), s0 = a.volume().searchSlices(), st0 = a.volume().stashed();
            AllocationMeter meter = AllocationMeter.start();
            long t0 = System.nanoTime();
            Starter.startAll(a, clients, (Object) SmallFileClient.Go.INSTANCE, "smallfiles-start");
            // The clients' recorders count their calls, one block each; read racily, for the progress line only.
            Progress.detail(() -> {
                long n = 0;
                for (Latency l : lats) n += l.count();
                return Report.format(n) + " of " + Report.format(totalBlocks) + " blocks allocated ("
                        + 100 * n / Math.max(1, totalBlocks) + "%)";
            });
            try {
                CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)).get(30, TimeUnit.MINUTES);
            } finally {
                Progress.detail(null);
            }
            long elapsed = System.nanoTime() - t0;
            long heap = meter.bytes();
            Latency all = new Latency();
            // Each client is a closed loop: one timed getBlocks in flight, from the start message to its end.
            for (int c = 0; c < lats.size(); c++) all.merge(lats.get(c).correctClosedLoop(done.get(c).join() - t0, 1));
            long messages = a.volume().messages() - m0 + all.count();
            long slices = a.volume().searchSlices() - s0, stashed = a.volume().stashed() - st0;
            List<List<Extent>> extents = new ArrayList<>();
            long files = shares.stream().mapToLong(List::size).sum();
            Progress.detail(() -> "all blocks allocated; reading back the extents of " + Report.format(extents.size())
                    + " of " + Report.format(files) + " files");
            try {
                // Up to READ_BACK_IN_FLIGHT asks at once: one at a time, each a thread hand-off, took 6 s for
                // 200,000 files.
                java.util.ArrayDeque<CompletableFuture<List<Extent>>> inFlight = new java.util.ArrayDeque<>();
                for (List<SmallFileClient.Job> share : shares)
                    for (SmallFileClient.Job j : share) {
                        if (inFlight.size() == READ_BACK_IN_FLIGHT) extents.add(inFlight.poll().join());
                        inFlight.add(api.fileExtents(j.name()).toCompletableFuture());
                    }
                while (!inFlight.isEmpty()) extents.add(inFlight.poll().join());
            } finally {
                Progress.detail(null);
            }
            return new Clients(elapsed, all, messages, slices, stashed, heap, extents);
        } catch (Exception e) {
            throw new IllegalStateException("smallfiles run failed: " + e.getMessage(), e);
        }
    }

    private static <H> long runLocked(LockPeer<H> a, List<List<SmallFileClient.Job>> shares, Latency all) {
        List<Consumer<Latency>> clients = new ArrayList<>();
        for (List<SmallFileClient.Job> share : shares) {
            clients.add(l -> {
                for (SmallFileClient.Job j : share) {
                    H f = a.openFile(j.name());
                    for (long logical = 0; logical < j.blocks(); ) {
                        long s = System.nanoTime();
                        logical += a.getBlocks(f, logical, 1).blocks();
                        l.record(System.nanoTime() - s);
                    }
                    a.close(f);
                }
            });
        }
        return ThreadClients.runTogether(clients, all, "smallfiles-client");
    }
}
