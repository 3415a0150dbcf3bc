package org.blockyard.cli;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;

import com.typesafe.config.Config;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import org.blockyard.api.alloc.Geometry;
import org.blockyard.api.io.QueueStats;
import org.blockyard.runtime.alloc.AllocatorSettings;
import org.blockyard.benches.BadOption;
import org.blockyard.benches.Progress;
import org.blockyard.benches.Report;
import org.blockyard.benches.Sizes;
import org.blockyard.benches.Swap;
import org.blockyard.benches.Tiobench;
import org.blockyard.runtime.config.BlockyardConfig;
import org.blockyard.runtime.io.IoSettings;
import org.blockyard.runtime.io.MemoryDevice;
import org.blockyard.runtime.store.FileStore;

/**
 * {@code blockyard demo}: the tiobench comparison of the three allocation designs on an in-memory volume,
 * as one table, in well under a minute.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = "Concurrent sequential writers on an in-memory volume: reservation vs no-reservation vs global-lock.")
public final class DemoCommand implements Callable<Integer> {

    @Option(names = "--writers", defaultValue = "16", description = "concurrent writers (default ${DEFAULT-VALUE})")
    int writers;

    @Option(names = "--file-size", defaultValue = "256MiB", converter = Sizes.Converter.class,
            description = "bytes per file (default ${DEFAULT-VALUE})")
    long fileSize;

    @Option(names = {"-q", "--quiet"}, description = "no progress line on standard error")
    boolean quiet;

    private volatile String status = "starting";

    private void step(int done, int of, String now) {
        status = (100 * done / of) + "%, " + now;
    }

    @Override
    public Integer call() {
        BadOption.atLeast("--writers", writers, 1);
        long size = BadOption.atLeast("--file-size", fileSize, 1);
        Config config = BlockyardConfig.load();
        System.out.printf("Blockyard demo: %d writers append %s each, one block per getBlocks call, concurrently,%n"
                + "on an in-memory volume twice their size (4 KiB blocks, 32768 per group).%n%n", writers, Sizes.format(size));
        List<Map<String, Object>> rows = new ArrayList<>();
        List<String> policies = List.of("reservation", "no-reservation", Tiobench.GLOBAL_LOCK);
        int steps = 2 * policies.size() + 2;
        try (Progress p = Progress.start("demo", quiet ? 0 : 2, () -> status)) {
            for (int i = 0; i < policies.size(); i++) {
                String policy = policies.get(i);
                Tiobench.Spec spec = new Tiobench.Spec(writers, size, policy, 1, 1);
                step(2 * i, steps, policy + " (warm-up)");
                Tiobench.run(spec, config); // warm-up, unmeasured
                step(2 * i + 1, steps, policy);
                rows.add(Tiobench.run(spec, config));
            }
            Report.table(System.out, rows, List.of("policy", "extents_per_file_mean", "ideal_extents_per_file",
                    "mean_extent_blocks", "alloc_latency_us.raw.p50", "alloc_latency_us.raw.p99", "alloc_latency_us.raw.p999",
                    "alloc_latency_us.corrected.p99",
                    "allocs_per_s", "messages", "elapsed_s"));
            Map<String, Object> r = rows.get(0), n = rows.get(1), g = rows.get(2);
            System.out.printf("%nreservation: %s extents per file against an ideal of %s (one per group the file spans).%n",
                    Report.format(r.get("extents_per_file_mean")), Report.format(r.get("ideal_extents_per_file")));
            System.out.printf("no-reservation: the writers interleave, %s blocks per extent on average (seed 002: ~1).%n",
                    Report.format(n.get("mean_extent_blocks")));
            System.out.printf("global-lock: the same algorithm behind one lock, called on the writers' threads: %s allocations/s.%n",
                    Report.format(g.get("allocs_per_s")));
            boolean lockWins = ((Number) g.get("allocs_per_s")).doubleValue() > ((Number) r.get("allocs_per_s")).doubleValue();
            System.out.println((lockWins ? "Why the lock wins on " : "The lock did not win this time on ")
                    + Runtime.getRuntime().availableProcessors() + " cores: a call under it is a few hundred nanoseconds"
                    + " on the writer's own thread,\nwhile through the actors it is a message round trip and a thread hand-off."
                    + " The actors are meant to win\nwhere one group's work is long and the others' short (they keep serving"
                    + " the others meanwhile):\nsee ./blockyard bench stall and the cost model in the README.");
            step(steps - 2, steps, "the whole stack");
            wholeStack(config);
            step(steps - 1, steps, "swapping under load");
            swapUnderLoad(config);
        }
        System.out.printf("%nMore: ./blockyard bench tiobench --help, ./blockyard bench smallfiles --help,%n"
                + "      ./blockyard bench swap --help, ./blockyard bench merge --help, ./blockyard scheduler -v%n");
        return 0;
    }

    /** Elevators and policies switched by name while two files are written through the stack. */
    private static void swapUnderLoad(Config config) {
        System.out.printf("%nSwapping under load: two writers through the whole stack and a stream of asynchronous%n"
                + "requests through the elevator, while the elevator (noop, deadline) and the allocation policy%n"
                + "(no-reservation, reservation) are switched by name 100 times each over 3 seconds.%n%n");
        try {
            Map<String, Object> r = Swap.run(new Swap.Spec(3, 100, List.of("noop", "deadline"),
                    List.of("no-reservation", "reservation"), 2, 16L << 20, List.of()), config, null);
            @SuppressWarnings("unchecked") Map<String, Object> pause =
                    (Map<String, Object>) ((Map<String, Object>) r.get("switch_pause_us")).get("raw");
            System.out.printf("%s switches; %s requests submitted, %s completed, %s lost, %s issued twice;%n"
                            + "%s bytes read back and compared, %s wrong;%n"
                            + "each switch stopped the switching actor for %s us (p50), %s us (p99), %s us (max).%n",
                    Report.format(r.get("swaps")), Report.format(r.get("requests_submitted")),
                    Report.format(r.get("requests_completed")), Report.format(r.get("requests_lost")),
                    Report.format(r.get("requests_issued_twice")), Report.format(r.get("bytes_verified")),
                    Report.format(r.get("verify_errors")),
                    Report.format(pause.get("p50")), Report.format(pause.get("p99")), Report.format(pause.get("max")));
        } catch (Exception e) {
            throw new IllegalStateException("the swap demo failed: " + e, e);
        }
    }

    /** Four files written concurrently through the allocator, the queue and a memory device, then read back. */
    private static void wholeStack(Config config) {
        int files = 4, fileBytes = 16 << 20, writeBytes = 64 << 10;
        Geometry g = Geometry.of(4096, 8 * 32768, 32768);
        System.out.printf("%nThe whole stack: %d files of %s written concurrently in %d KiB writes through getBlocks,%n"
                + "the I/O queue and a memory device, then read back.%n%n", files, Sizes.format(fileBytes), writeBytes >> 10);
        try (FileStore store = FileStore.start(AllocatorSettings.fromConfig(config, g.totalBlocks()).withGeometry(g),
                IoSettings.fromConfig(config), new MemoryDevice(g.bytes()), config)) {
            byte[] data = new byte[fileBytes];
            new java.util.Random(1).nextBytes(data);
            long t0 = System.nanoTime();
            List<CompletableFuture<Void>> writes = new ArrayList<>();
            for (int f = 0; f < files; f++) {
                String name = "/demo/file-" + f;
                store.allocator().open(name).toCompletableFuture().join();
                CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
                for (int off = 0; off < fileBytes; off += writeBytes) {
                    int o = off;
                    chain = chain.thenCompose(v -> store.write(name, o, ByteBuffer.wrap(data, o, writeBytes)));
                }
                writes.add(chain);
            }
            CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).join();
            double seconds = (System.nanoTime() - t0) / 1e9;
            boolean same = true;
            int extents = 0;
            for (int f = 0; f < files; f++) {
                String name = "/demo/file-" + f;
                same &= java.util.Arrays.equals(data, store.read(name, 0, fileBytes).toCompletableFuture().join().array());
                extents += store.allocator().fileExtents(name).toCompletableFuture().join().size();
            }
            QueueStats q = store.queue().stats().toCompletableFuture().join();
            String listing = store.queue().schedulerListing().toCompletableFuture().join();
            System.out.printf("scheduler: %s%n", listing);
            System.out.printf("written at %.0f MiB/s; %.2f extents per file; read back %s%n",
                    files * (fileBytes / 1048576.0) / seconds, (double) extents / files, same ? "identical" : "DIFFERENT");
            System.out.printf("queue: %s submissions, %s requests dispatched, %s merges, largest request %s sectors%n",
                    Report.format(q.submissions()), Report.format(q.requestsDispatched()), Report.format(q.merges()),
                    Report.format(q.maxRequestSectors()));
        }
    }
}
