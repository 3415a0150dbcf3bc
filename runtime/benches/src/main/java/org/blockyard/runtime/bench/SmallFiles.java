package org.blockyard.runtime.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import com.typesafe.config.Config;

import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.runtime.alloc.ActorBlockAllocator;
import org.blockyard.runtime.alloc.AllocatorSettings;
import org.blockyard.runtime.alloc.BlockGroup;
import org.blockyard.runtime.alloc.FileState;
import org.blockyard.runtime.alloc.GlobalLockAllocator;

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
     */
    public record Spec(int files, double fill, int blocksPerGroup, String policy, int clients, int maxFileBlocks,
                       long seed, boolean batch) {
        public Spec(int files, double fill, int blocksPerGroup, String policy, int clients, int maxFileBlocks, long seed) {
            this(files, fill, blocksPerGroup, policy, clients, maxFileBlocks, seed, false);
        }

        public Spec {
            if (files < 1) throw new IllegalArgumentException("--files must be at least 1");
            if (!(fill >= 0 && fill < 1)) throw new IllegalArgumentException("--fill must be in [0, 1)");
            if (clients < 1) throw new IllegalArgumentException("--clients must be at least 1");
            if (maxFileBlocks < 1) throw new IllegalArgumentException("--max-file-blocks must be at least 1");
        }
    }

    public static Map<String, Object> run(Spec spec, Config config) {
        AllocatorSettings base = AllocatorSettings.fromConfig(config, spec.blocksPerGroup());
        Geometry g0 = base.geometry();
        int bpg = spec.blocksPerGroup();
        Random rnd = new Random(spec.seed());
        List<SmallFileClient.Job> jobs = new ArrayList<>();
        long totalBlocks = 0;
        for (int i = 0; i < spec.files(); i++) {
            int blocks = 1 + rnd.nextInt(spec.maxFileBlocks());
            totalBlocks += blocks;
            jobs.add(new SmallFileClient.Job("/src/d" + (i / 64) + "/f" + i, blocks));
        }
        long freePerGroup = (long) ((bpg - Geometry.of(g0.blockSizeBytes(), bpg, bpg).systemBlocksPerGroup()) * (1 - spec.fill()));
        long groups = Math.max(8, (2 * totalBlocks + freePerGroup - 1) / Math.max(1, freePerGroup));
        if (groups > Tiobench.MAX_BENCH_GROUPS)
            throw new IllegalArgumentException(spec.files() + " files at fill " + spec.fill() + " need " + groups
                    + " groups of " + bpg + " blocks; this benchmark holds at most " + Tiobench.MAX_BENCH_GROUPS
                    + " groups in memory: use fewer --files, a lower --fill or bigger --blocks-per-group");
        Geometry geometry = Geometry.of(g0.blockSizeBytes(), groups * bpg, bpg).withJournal(g0.journalBlocks());
        boolean lock = spec.policy().equals(Tiobench.GLOBAL_LOCK);
        AllocationPolicy policy = BenchPolicies.byId(lock ? "reservation" : spec.policy(), config, geometry);
        AllocatorSettings settings = base.withGeometry(geometry).withPolicy(policy);
        Consumer<BlockGroup> prefill = group -> {
            long data = group.end() - group.firstDataBlock();
            int used = (int) (data * spec.fill());
            if (used > 0) group.fillFromStart(used);
        };

        List<List<SmallFileClient.Job>> shares = new ArrayList<>();
        for (int c = 0; c < spec.clients(); c++) shares.add(new ArrayList<>());
        for (int i = 0; i < jobs.size(); i++) shares.get(i % spec.clients()).add(jobs.get(i));

        long cpu0 = Tiobench.processCpuNanos();
        Latency all = new Latency();
        long elapsed, messages = 0, slices = 0, stashed = 0, allocated;
        List<List<Extent>> extents = new ArrayList<>();
        if (lock) {
            GlobalLockAllocator a = new GlobalLockAllocator(geometry, policy, settings.preallocMinWindowBlocks());
            for (int gi = 0; gi < geometry.groups(); gi++) {
                prefill.accept(a.group(gi));
                a.republish(gi);
            }
            AllocationMeter meter = AllocationMeter.start();
            elapsed = runLocked(a, shares, all);
            allocated = meter.bytes();
            extents.addAll(a.fileExtents().values());
        } else {
            try (ActorBlockAllocator a = ActorBlockAllocator.start(settings, config, prefill)) {
                List<CompletableFuture<Long>> done = new ArrayList<>();
                List<Latency> lats = new ArrayList<>();
                List<akka.actor.typed.ActorRef<Object>> clients = new ArrayList<>();
                for (int c = 0; c < spec.clients(); c++) {
                    CompletableFuture<Long> d = new CompletableFuture<>();
                    Latency l = new Latency();
                    done.add(d.thenApply(calls -> System.nanoTime())); // the client's end time
                    lats.add(l);
                    clients.add(a.spawn(SmallFileClient.create(a.fileShards(), shares.get(c), spec.batch(), l, d),
                            "smallfiles-client-" + c));
                }
                ThreadClients.quiesce();
                long m0 = a.volume().messages(), s0 = a.volume().searchSlices(), st0 = a.volume().stashed();
                AllocationMeter meter = AllocationMeter.start();
                long t0 = System.nanoTime();
                Starter.startAll(a, clients, (Object) SmallFileClient.Go.INSTANCE,
                        "smallfiles-start");
                // The clients' recorders count their calls, one block each; read racily, for the progress line only.
                long wanted = totalBlocks;
                Progress.detail(() -> {
                    long n = 0;
                    for (Latency l : lats) n += l.count();
                    return Report.format(n) + " of " + Report.format(wanted) + " blocks allocated ("
                            + 100 * n / Math.max(1, wanted) + "%)";
                });
                try {
                    CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)).get(30, TimeUnit.MINUTES);
                } finally {
                    Progress.detail(null);
                }
                elapsed = System.nanoTime() - t0;
                allocated = meter.bytes();
                // Each client is a closed loop: one timed getBlocks in flight, from the start message to its end.
                for (int c = 0; c < lats.size(); c++) all.merge(lats.get(c).correctClosedLoop(done.get(c).join() - t0, 1));
                messages = a.volume().messages() - m0 + all.count();
                slices = a.volume().searchSlices() - s0;
                stashed = a.volume().stashed() - st0;
                Progress.detail(() -> "all blocks allocated; reading back the extents of " + Report.format(extents.size())
                        + " of " + Report.format((long) jobs.size()) + " files");
                try {
                    for (SmallFileClient.Job j : jobs) extents.add(a.fileExtents(j.name()).toCompletableFuture().join());
                } finally {
                    Progress.detail(null);
                }
            } catch (Exception e) {
                throw new IllegalStateException("smallfiles run failed: " + e.getMessage(), e);
            }
        }
        long cpu = Tiobench.processCpuNanos() - cpu0;
        long ext = 0;
        for (List<Extent> f : extents) ext += f.size();
        double seconds = elapsed / 1e9;
        Map<String, Object> row = Report.row();
        row.put("workload", "smallfiles");
        row.put("policy", spec.policy());
        row.put("policy_detail", lock ? "global-lock over " + policy : policy.toString());
        row.put("files", spec.files());
        row.put("fill", spec.fill());
        row.put("blocks_per_group", bpg);
        row.put("groups", geometry.groups());
        row.put("clients", spec.clients());
        row.put("batch", !lock && spec.batch());
        row.put("file_blocks_mean", (double) totalBlocks / spec.files());
        row.put("extents_per_file_mean", (double) ext / spec.files());
        row.put("ideal_extents_per_file", 1);
        row.put("mean_extent_blocks", ext == 0 ? 0.0 : (double) totalBlocks / ext);
        row.put("alloc_latency_us", all.summaryMicros());
        row.put("allocs", all.count());
        row.put("allocs_per_s", all.count() / seconds);
        row.put("blocks_per_s", totalBlocks / seconds);
        row.put("files_per_s", spec.files() / seconds);
        row.put("messages", messages);
        row.put("messages_per_file", (double) messages / spec.files());
        row.put("heap_bytes_per_file", allocated / spec.files());
        row.put("search_slices", slices);
        row.put("stashed", stashed);
        row.put("elapsed_s", Latency.round(seconds));
        row.put("cpu_s", Latency.round(cpu / 1e9));
        return row;
    }

    private static long runLocked(GlobalLockAllocator a, List<List<SmallFileClient.Job>> shares, Latency all) {
        List<Consumer<Latency>> clients = new ArrayList<>();
        for (List<SmallFileClient.Job> share : shares) {
            clients.add(l -> {
                for (SmallFileClient.Job j : share) {
                    FileState f = a.openFile(j.name());
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
