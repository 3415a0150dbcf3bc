package org.blockyard.benches.io;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Callable;

import com.typesafe.config.Config;

import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.api.io.IoFlag;
import org.blockyard.api.io.IoRequest;
import org.blockyard.benches.BadOption;
import org.blockyard.benches.Report;
import org.blockyard.runtime.alloc.ActorBlockAllocator;
import org.blockyard.runtime.alloc.AllocatorSettings;
import org.blockyard.runtime.config.BlockyardConfig;
import org.blockyard.runtime.io.QueueSetup;
import org.blockyard.runtime.io.SimulatedDisk;
import org.blockyard.runtime.io.Simulation;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code bench metadata} (seed 004): one creator makes small files while a bulk writer streams, on the
 * simulated disk, for {@code --seconds} of virtual time, once with the metadata writes flagged META and once
 * as plain writes, per elevator.
 *
 * <p>The files are placed by the allocator in a fresh volume, the same placement for every run: a file-map
 * area of 256 blocks first (a directory's inode table), then each file's blocks, all with {@code getBlocks}. Per file the creator writes its data (asynchronous). Every
 * {@code --files-per-commit} files it writes one log block SYNC (the journal in group 0, like XFS's log
 * buffers) and waits for it: those files are then created. Every {@code --files-per-writeback} files it
 * writes back the metadata they dirtied: the bitmap and descriptor blocks of the group (adjacent: they
 * merge) and the file-map block, asynchronous, META or plain. The log cannot run ahead of unwritten
 * metadata: with {@code --meta-window} metadata writes outstanding the creator waits for the oldest. The
 * bulk writer streams 4 KiB asynchronous writes far away, {@code --writer-window} outstanding.
 *
 * <p>So the create rate follows how long metadata waits behind bulk data: cfq serves META first within
 * its async queue, deadline and anticipatory treat it as any write, noop leaves it to the queue's META lane.
 */
@Command(name = "metadata", mixinStandardHelpOptions = true,
        description = "Small-file creates with metadata as META or plain writes while a bulk writer streams (seed 004).")
public final class MetadataBench implements Callable<Integer> {
    @Mixin IoBenchOptions o;

    @Option(names = "--seconds", defaultValue = "20", description = "Virtual seconds per run (default: ${DEFAULT-VALUE}).")
    int seconds;

    @Option(names = "--writer-window", defaultValue = "256",
            description = "Writes the bulk writer keeps outstanding (default: ${DEFAULT-VALUE}).")
    int writerWindow;

    @Option(names = "--file-blocks", defaultValue = "2", description = "Blocks per small file (default: ${DEFAULT-VALUE}).")
    int fileBlocks;

    @Option(names = "--files-per-commit", defaultValue = "4",
            description = "Files per SYNC log write the creator waits for (default: ${DEFAULT-VALUE}).")
    int filesPerCommit;

    @Option(names = "--files-per-writeback", defaultValue = "16",
            description = "Files whose metadata is written back together (default: ${DEFAULT-VALUE}).")
    int filesPerWriteback;

    @Option(names = "--meta-window", defaultValue = "6",
            description = "Metadata writes outstanding before the creator waits (log space; default: ${DEFAULT-VALUE}).")
    int metaWindow;

    @Option(names = "--all", description = "Run every registered elevator, not only cfq and deadline.")
    boolean all;

    static final long CREATOR = 1, BULK = 2;
    static final long CREATE_CPU_NANOS = 50_000;

    @Override
    public Integer call() throws Exception {
        BadOption.atLeast("--seconds", seconds, 1);
        BadOption.atLeast("--writer-window", writerWindow, 1);
        BadOption.atLeast("--file-blocks", fileBlocks, 1);
        BadOption.atLeast("--files-per-commit", filesPerCommit, 1);
        BadOption.atLeast("--files-per-writeback", filesPerWriteback, 1);
        BadOption.atLeast("--meta-window", metaWindow, 1);
        List<Map<String, Object>> results = new ArrayList<>();
        Map<String, Object> out = new LinkedHashMap<>();
        try (IoBench bench = new IoBench(o)) {
            if (!bench.deviceKind.equals("sim"))
                throw new BadOption("--device", bench.deviceKind, "bench metadata runs on the simulated disk: only sim");
            List<String> ids = all ? bench.setup.registry().ids()
                    : o.elevator != null ? List.of(bench.setup.registry().select(o.elevator).id())
                    : List.of("cfq", "deadline");
            try (Placement placement = new Placement(BlockyardConfig.load(o.config), fileBlocks, filesPerWriteback)) {
                boolean first = true;
                for (String id : ids) {
                    String requested = first && o.elevator != null ? o.elevator : id;
                    QueueSetup s = bench.setup.withElevator(requested);
                    Run meta = run(bench, s.withEvents(first ? bench.setup.events() : null), placement, true);
                    Run plain = run(bench, s.withEvents(null), placement, false);
                    first = false;
                    results.add(result(bench, requested, meta, plain));
                }
                out.put("device", bench.deviceKind);
                bench.putTrace(out, o);
            }
        }
        print(IoBench.out(o), results);
        if (o.trace != null && results.size() > 1)
            System.err.println("note: --trace " + o.trace + " holds the first elevator's run only");
        IoBench.writeJson(o, results, out);
        return 0;
    }

    /** Where the files, their file maps and the group metadata live: allocated once, in file order. */
    static final class Placement implements AutoCloseable {
        final Geometry geometry;
        private final ActorBlockAllocator allocator;
        private final int fileBlocks, filesPerMap;
        private final List<Long> fileStart = new ArrayList<>();
        private final List<Long> mapBlock = new ArrayList<>();
        /** File-map blocks: a directory's inode table, apart from the file data, reused round robin. */
        static final long MAP_BLOCKS = 256;

        Placement(Config config, int fileBlocks, int filesPerMap) {
            AllocatorSettings base = AllocatorSettings.fromConfig(config, 15L * 32768);
            this.geometry = base.geometry();
            this.allocator = ActorBlockAllocator.start(base, config);
            this.fileBlocks = fileBlocks;
            this.filesPerMap = filesPerMap;
        }

        private long allocate(String name, int blocks) {
            allocator.open(name).toCompletableFuture().join();
            BlockRun r = allocator.getBlocks(name, 0, blocks, true).toCompletableFuture().join();
            allocator.close(name).toCompletableFuture().join();
            return r.physicalStart();
        }

        /** The file-map area: one file of {@link #MAP_BLOCKS} blocks, allocated before any small file. */
        private void allocateMaps() {
            String name = "dir/file-map";
            allocator.open(name).toCompletableFuture().join();
            for (long logical = 0; logical < MAP_BLOCKS; ) {
                BlockRun r = allocator.getBlocks(name, logical, (int) (MAP_BLOCKS - logical), true)
                        .toCompletableFuture().join();
                for (int b = 0; b < r.blocks(); b++) mapBlock.add(r.physicalStart() + b);
                logical += r.blocks();
            }
            allocator.close(name).toCompletableFuture().join();
        }

        /** First block of file {@code i}; files are allocated in order. */
        long file(int i) {
            if (mapBlock.isEmpty()) allocateMaps();
            while (fileStart.size() <= i) fileStart.add(allocate("dir/file-" + fileStart.size(), fileBlocks));
            return fileStart.get(i);
        }

        /** The file-map block of the batch holding file {@code i} (the area is reused round robin). */
        long map(int i) {
            if (mapBlock.isEmpty()) allocateMaps();
            return mapBlock.get((i / filesPerMap) % mapBlock.size());
        }

        /** Block {@code j} of the log (the journal after group 0's own zone; one block when there is none). */
        long log(long j) {
            int journal = Math.max(1, geometry.journalBlocks());
            return geometry.systemBlocksPerGroup() + j % journal;
        }

        @Override
        public void close() {
            allocator.close();
        }
    }

    record Run(String elevator, long files, long bulkBytes, long seeks, long deviceNanos, double meanRequestSectors,
               long merges, long metaWrites, long metaWaitNanos, long maxMetaWaitNanos) {}

    private Run run(IoBench bench, QueueSetup setup, Placement p, boolean asMeta) {
        SimulatedDisk disk = new SimulatedDisk(bench.settings.disk());
        Simulation sim = IoBench.simulation(setup, disk);
        long end = seconds * 1_000_000_000L;
        long cap = disk.capacitySectors();
        Random rnd = new Random(o.seed);
        long volumeSectors = p.geometry.totalBlocks() * (p.geometry.blockSizeBytes() / IoRequest.SECTOR_BYTES);
        long bulkArea = Math.max(1, cap - volumeSectors * 3 / 4);
        long bulkStart = volumeSectors * 3 / 4 + Math.floorMod(rnd.nextLong(), bulkArea / 2) / 8 * 8;
        int spb = p.geometry.blockSizeBytes() / IoRequest.SECTOR_BYTES;
        long[] ids = {0};
        long[] bulkBytes = {0}, bulkPos = {bulkStart};
        Runnable[] bulk = new Runnable[1];
        bulk[0] = () -> {
            if (sim.nowNanos() >= end || bulkPos[0] + 8 > cap) return;
            IoRequest io = IoRequest.write(ids[0]++, bulkPos[0], 8, BULK);
            bulkPos[0] += 8;
            sim.submit(io, (c, e) -> {
                if (c.completedNanos() <= end) bulkBytes[0] += 4096;
                bulk[0].run();
            });
        };
        // the creator: state in arrays so the callbacks can change it
        long[] created = {0}, logBlock = {0}, metaWrites = {0}, metaWait = {0}, metaWaitMax = {0};
        int[] next = {0}, metaOutstanding = {0};
        boolean[] blocked = {false};
        Runnable[] create = new Runnable[1];
        java.util.function.BiConsumer<Long, Integer> writeMeta = (block, blocks) -> {
            IoRequest io = IoRequest.write(ids[0]++, block * spb, blocks * spb, CREATOR);
            if (asMeta) io = io.with(IoFlag.META);
            metaOutstanding[0]++;
            sim.submit(io, (c, e) -> {
                metaOutstanding[0]--;
                metaWrites[0]++;
                long w = c.completedNanos() - c.queuedNanos();
                metaWait[0] += w;
                metaWaitMax[0] = Math.max(metaWaitMax[0], w);
                if (blocked[0] && metaOutstanding[0] < metaWindow) {
                    blocked[0] = false;
                    create[0].run();
                }
            });
        };
        create[0] = () -> {
            if (sim.nowNanos() >= end) return;
            if (metaOutstanding[0] >= metaWindow) {            // the log tail waits for metadata writeback
                blocked[0] = true;
                return;
            }
            int i = next[0]++;
            long start = p.file(i);
            sim.submit(IoRequest.write(ids[0]++, start * spb, fileBlocks * spb, CREATOR), (c, e) -> {});
            if ((i + 1) % filesPerWriteback == 0) {
                int g = p.geometry.groupOf(start);
                writeMeta.accept(p.geometry.groupStart(g), 2);   // bitmap and descriptor: one request
                writeMeta.accept(p.map(i), 1);
            }
            if ((i + 1) % filesPerCommit == 0) {
                IoRequest log = IoRequest.write(ids[0]++, p.log(logBlock[0]++) * spb, spb, CREATOR).with(IoFlag.SYNC);
                sim.submit(log, (c, e) -> {
                    if (c.completedNanos() <= end) created[0] += filesPerCommit;
                    sim.at(sim.nowNanos() + CREATE_CPU_NANOS, create[0]);
                });
            } else {
                sim.at(sim.nowNanos() + CREATE_CPU_NANOS, create[0]);
            }
        };
        sim.at(0, () -> {
            for (int i = 0; i < writerWindow; i++) bulk[0].run();
            create[0].run();
        });
        sim.runUntil(end);
        var stats = sim.stats();
        return new Run(stats.elevator(), created[0], bulkBytes[0], disk.seeks(), sim.deviceBusyNanos(),
                Math.round(stats.meanRequestSectors() * 100) / 100.0, stats.merges(), metaWrites[0], metaWait[0],
                metaWaitMax[0]);
    }

    private Map<String, Object> result(IoBench bench, String requested, Run meta, Run plain) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("elevator_requested", requested);
        m.put("elevator", meta.elevator());
        double fm = meta.files() / (double) seconds, fp = plain.files() / (double) seconds;
        m.put("files_per_s_meta", round(fm));
        m.put("files_per_s_plain", round(fp));
        m.put("meta_speedup", fp == 0 ? 0 : Math.round(fm / fp * 1000) / 1000.0);
        for (var e : Map.of("meta", meta, "plain", plain).entrySet()) {
            Run r = e.getValue();
            String k = e.getKey();
            m.put("bulk_mib_s_" + k, IoBench.mibPerSecond(r.bulkBytes(), seconds * 1_000_000_000L));
            m.put("mean_request_sectors_" + k, r.meanRequestSectors());
            m.put("merges_" + k, r.merges());
            m.put("seeks_" + k, r.seeks());
            m.put("device_time_ms_" + k, r.deviceNanos() / 1_000_000);
            m.put("metadata_wait_ms_mean_" + k, r.metaWrites() == 0 ? 0
                    : round(r.metaWaitNanos() / (double) r.metaWrites() / 1e6));
            m.put("metadata_wait_ms_max_" + k, round(r.maxMetaWaitNanos() / 1e6));
        }
        return m;
    }

    private static double round(double v) {
        return Math.round(v * 100) / 100.0;
    }

    private void print(java.io.PrintStream out, List<Map<String, Object>> results) {
        Report.table(out, results, List.of("elevator", "files_per_s_meta", "files_per_s_plain", "meta_speedup",
                "mean_request_sectors_meta", "mean_request_sectors_plain", "metadata_wait_ms_mean_meta",
                "metadata_wait_ms_mean_plain"));
    }
}
