package org.blockyard.benches;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;

import com.typesafe.config.Config;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import org.blockyard.api.alloc.BlockAllocator;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.MapRequest;
import org.blockyard.runtime.alloc.ActorBlockAllocator;
import org.blockyard.runtime.volume.Journal;
import org.blockyard.runtime.volume.Layout;
import org.blockyard.runtime.volume.Volume;

/**
 * {@code blockyard bench volume}: tiobench's appends (N writers, one file each, K blocks a call, every call
 * waited for) through the {@code BlockAllocator} API, on a durable volume and in memory over the same geometry
 * in the same run. Reports both throughputs, their ratio, and the journal's forces per acknowledged call
 * (group commit). With {@code --crash} the volume is abandoned at the end instead of closed, and reopened:
 * the recovery's replayed transactions and time are reported.
 */
@Command(name = "volume", mixinStandardHelpOptions = true,
        description = "Appends on a durable volume against the same in memory: throughput ratio, forces per acknowledged call, recovery.")
public final class VolumeBenchCommand implements Callable<Integer> {

    @Option(names = "--volume", paramLabel = "IMAGE",
            description = "A volume made by mkfs (its files are added to); default: a fresh 1 GiB volume in a temporary file")
    Path image;

    @Option(names = "--writers", defaultValue = "16", description = "concurrent writers, one file each (default ${DEFAULT-VALUE})")
    int writers;

    @Option(names = "--file-size", defaultValue = "16MiB", converter = Sizes.Converter.class,
            description = "bytes per file (default ${DEFAULT-VALUE})")
    long fileSize;

    @Option(names = "--chunk-blocks", defaultValue = "256", description = "blocks asked for per getBlocks call (default ${DEFAULT-VALUE})")
    int chunkBlocks;

    @Option(names = "--batch", defaultValue = "1",
            description = "getBlocks calls each writer hands over at once (getBlocks(file, List)): one commit serves them all (default ${DEFAULT-VALUE})")
    int batch;

    @Option(names = "--depth", defaultValue = "1",
            description = "batches each writer keeps in flight (the next handed over before the last is answered), as a "
                    + "storage engine with several writes outstanding does (default ${DEFAULT-VALUE})")
    int depth;

    @Option(names = "--policy", defaultValue = "reservation", description = "reservation | no-reservation | mballoc, or any installed plugin's (--deploy) (default ${DEFAULT-VALUE})")
    String policy;

    @Option(names = "--crash", description = "abandon the volume at the end (as kill -9 would) and time its recovery")
    boolean crash;

    @Mixin
    DeployOption deploy;

    @Mixin
    RunOptions run;

    @Override
    public Integer call() throws Exception {
        BadOption.atLeast("--writers", writers, 1);
        BadOption.atLeast("--chunk-blocks", chunkBlocks, 1);
        BadOption.atLeast("--file-size", fileSize, 1);
        BadOption.atLeast("--depth", depth, 1);
        if (batch < 1 || batch > BlockAllocator.MAX_BATCH)
            throw new BadOption("--batch", batch, "must be from 1 to " + BlockAllocator.MAX_BATCH);
        Config config = deploy.applyTo(run.config());
        BenchPolicies.check("--policy", List.of(policy), config);
        if (image != null) DurableSide.of("--volume", image);
        Path img = image;
        boolean temp = img == null;
        if (temp) {
            img = Files.createTempFile("blockyard-bench-", ".img");
            Volume.mkfs(img, Layout.make(4096, 262144, 32768, 1024, config.getInt("blockyard.volume.journal-blocks"), 0, 0));
        }
        try {
            Path volumeImage = img;
            List<Map<String, Object>> rows = run.measure(List.of(policy), p -> once(volumeImage, config));
            Report.table(run.out(), rows, List.of("policy", "writers", "chunk_blocks", "batch", "depth", "calls", "memory_calls_per_s",
                    "durable_calls_per_s", "durable_vs_memory", "forces_per_call", "records_per_transaction",
                    "force_ms", "device_flush_ms", "durable_latency_us.raw.p50", "durable_latency_us.raw.p99", "open_ms", "close_ms", "recovery_ms",
                    "replayed_transactions"));
            run.writeJson(rows);
        } finally {
            if (temp) Files.deleteIfExists(img);
        }
        return 0;
    }

    private Map<String, Object> once(Path img, Config config) {
        int runId = (int) (System.nanoTime() & 0xFFFF);
        Map<String, Object> row = Report.row();
        row.put("workload", "volume");
        row.put("policy", policy);
        row.put("writers", writers);
        row.put("chunk_blocks", chunkBlocks);
        row.put("batch", batch);
        row.put("depth", depth);
        // In memory first, over the same geometry, used blocks and policy.
        DurableSide side = DurableSide.of("--volume", img);
        int blockBytes = side.geometry().blockSizeBytes();
        Result m;
        try (ActorBlockAllocator a = ActorBlockAllocator.start(side.memorySettings(config, policy), config,
                side::markUsed)) {
            m = appends(a, "/mem-" + runId + "/file-", blockBytes);
        }
        long t0 = System.nanoTime();
        Volume v = side.open(config, policy, group -> {});
        row.put("open_ms", (System.nanoTime() - t0) / 1e6); // a clean mount: superblock, metadata, every group's bitmap
        Journal.Stats s0 = v.journalStats();
        Result d = appends(v.allocator(), side.prefix + "/file-", blockBytes);
        Journal.Stats s1 = v.journalStats();
        row.put("calls", d.calls);
        row.put("memory_calls_per_s", m.calls / m.seconds);
        row.put("memory_latency_us", m.latency.summaryMicros());
        row.put("durable_latency_us", d.latency.summaryMicros());
        DurableSide.put(row, "calls", d.calls, m.calls / m.seconds, d.calls / d.seconds, s0, s1);
        if (crash) {
            v.abandon();
            try (Volume again = Volume.open(img, config)) {
                row.put("recovery_ms", again.recovery().nanos() / 1e6);
                row.put("replayed_transactions", again.recovery().transactionsReplayed());
                row.put("replayed_blocks", again.recovery().blocksReplayed());
                row.put("leaks_freed", again.recovery().leaksFreed());
            }
        } else {
            long t1 = System.nanoTime();
            v.close();
            row.put("close_ms", (System.nanoTime() - t1) / 1e6); // last commit, checkpoint, reconcile, clean mark
        }
        return row;
    }

    private record Result(long calls, double seconds, Latency latency) {}

    /**
     * {@code writers} threads, each appending its own file {@code chunkBlocks} at a time: {@code batch} calls per
     * hand-over, {@code depth} hand-overs in flight. A run answered short (a group's or a window's end) leaves a
     * gap that a later hand-over asks for again, so every call allocates and none maps blocks twice.
     */
    private Result appends(BlockAllocator a, String prefix, int blockBytes) {
        long fileBlocks = (fileSize + blockBytes - 1) / blockBytes;
        List<Thread> threads = new ArrayList<>();
        List<Latency> latencies = new ArrayList<>();
        long[] calls = new long[writers];
        RuntimeException[] fault = new RuntimeException[1];
        for (int i = 0; i < writers; i++) {
            String file = prefix + i;
            Latency l = new Latency();
            latencies.add(l);
            int w = i;
            a.open(file).toCompletableFuture().join();
            threads.add(new Thread(() -> {
                try {
                    calls[w] = append(a, file, fileBlocks, l);
                } catch (RuntimeException e) {
                    fault[0] = e;
                }
            }, "volume-writer-" + i));
        }
        long t0 = System.nanoTime();
        for (Thread t : threads) t.start();
        for (Thread t : threads) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted");
            }
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        if (fault[0] != null) throw fault[0];
        for (int i = 0; i < writers; i++) a.close(prefix + i).toCompletableFuture().join();
        Latency all = new Latency();
        for (Latency l : latencies) all.merge(l);
        long n = 0;
        for (long c : calls) n += c;
        return new Result(n, seconds, all);
    }

    private record InFlight(List<MapRequest> requests, CompletableFuture<List<BlockRun>> answer, long startNanos) {}

    /** Maps {@code [0, fileBlocks)} of {@code file}; answers how many getBlocks calls it took. */
    private long append(BlockAllocator a, String file, long fileBlocks, Latency latency) {
        ArrayDeque<MapRequest> gaps = new ArrayDeque<>();
        ArrayDeque<InFlight> inFlight = new ArrayDeque<>(depth);
        long frontier = 0;
        long mapped = 0;
        long calls = 0;
        while (mapped < fileBlocks) {
            while (inFlight.size() < depth && (frontier < fileBlocks || !gaps.isEmpty())) {
                List<MapRequest> requests = new ArrayList<>(batch);
                while (requests.size() < batch) {
                    if (!gaps.isEmpty()) {
                        requests.add(gaps.poll());
                    } else if (frontier < fileBlocks) {
                        int n = (int) Math.min(chunkBlocks, fileBlocks - frontier);
                        requests.add(MapRequest.allocate(frontier, n));
                        frontier += n;
                    } else {
                        break;
                    }
                }
                long t = System.nanoTime();
                CompletableFuture<List<BlockRun>> answer = requests.size() == 1
                        ? a.getBlocks(file, requests.get(0).logicalBlock(), requests.get(0).maxBlocks(), true)
                                .toCompletableFuture().thenApply(List::of)
                        : a.getBlocks(file, requests).toCompletableFuture();
                inFlight.add(new InFlight(requests, answer, t));
            }
            InFlight oldest = inFlight.poll();
            List<BlockRun> runs = oldest.answer().join();
            latency.record(System.nanoTime() - oldest.startNanos());
            for (int i = 0; i < runs.size(); i++) {
                MapRequest q = oldest.requests().get(i);
                BlockRun r = runs.get(i);
                calls++;
                mapped += r.blocks();
                if (r.blocks() < q.maxBlocks())
                    gaps.add(MapRequest.allocate(q.logicalBlock() + r.blocks(), q.maxBlocks() - r.blocks()));
            }
        }
        return calls;
    }
}
