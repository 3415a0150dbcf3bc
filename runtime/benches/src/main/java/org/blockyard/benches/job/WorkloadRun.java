package org.blockyard.benches.job;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.Props;
import akka.actor.typed.javadsl.AskPattern;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;

import org.blockyard.api.alloc.Geometry;
import org.blockyard.api.io.IoRequest;
import org.blockyard.api.io.QueueStats;
import org.blockyard.runtime.alloc.ActorBlockAllocator;
import org.blockyard.runtime.alloc.AllocatorSettings;
import org.blockyard.benches.Aging;
import org.blockyard.benches.BadOption;
import org.blockyard.benches.Latency;
import org.blockyard.benches.Report;
import org.blockyard.benches.Sizes;
import org.blockyard.benches.SmallFiles;
import org.blockyard.benches.Starter;
import org.blockyard.benches.Tiobench;
import org.blockyard.benches.job.JobSpec.Engine;
import org.blockyard.runtime.config.BlockyardConfig;
import org.blockyard.runtime.io.BlockDevice;
import org.blockyard.runtime.io.QueueActor;
import org.blockyard.runtime.io.QueueSetup;
import org.blockyard.runtime.io.SimulatedDisk;
import org.blockyard.runtime.io.Simulation;
import org.blockyard.benches.io.IoBench;

/**
 * Runs a {@link Workload}: for each elevator, one <em>group</em> (fio's word for jobs reported together):
 * every clone of every job at once, on a fresh device, queue and volume. Queue jobs go to the device's queue
 * ({@link IoClient} actors, or {@link SimClients} on the simulated disk's virtual clock); files and extents
 * jobs go to one {@link ActorBlockAllocator} over a volume of {@code volume_size}, in real time. It answers a
 * row per job and a {@code total} row per group. Everything the run could refuse is checked before anything
 * starts; a group in which no call was answered for the queue's submit timeout fails instead of hanging.
 */
final class WorkloadRun {
    private final Workload workload;
    private final Config config;
    private final IoBench bench;
    private final List<String> elevators;
    private final long capacitySectors;
    private final Geometry volume;       // null: no files or extents jobs
    private final String label;          // the job file's name, where a message names a key
    private final Status status;

    WorkloadRun(Workload workload, Config config, IoBench bench, List<String> elevators) throws IOException {
        this.workload = workload;
        this.config = config;
        this.bench = bench;
        this.elevators = elevators;
        this.label = workload.source().equals("options") ? "" : Path.of(workload.source()).getFileName() + ": ";
        this.capacitySectors = switch (bench.deviceKind) {
            case "sim" -> new SimulatedDisk(bench.settings.disk()).capacitySectors();
            case "mem" -> bench.settings.memoryBytes() / IoRequest.SECTOR_BYTES;
            default -> bench.settings.fileBytes() / IoRequest.SECTOR_BYTES;
        };
        checkQueueJobs();
        this.volume = allocJobs() ? volume() : null;
        this.status = new Status(elevators.size());
    }

    Status status() {
        return status;
    }

    private boolean allocJobs() {
        return workload.jobs().stream().anyMatch(j -> j.engine() != Engine.QUEUE);
    }

    private boolean queueJobs() {
        return workload.jobs().stream().anyMatch(j -> j.engine() == Engine.QUEUE);
    }

    /** A job's key refused: named where it was given (the job, global or an option), its value as written there. */
    private BadOption bad(JobSpec job, String key, Object value, String allowed) {
        Workload.Val v = job.given().get(key);
        return v != null ? v.bad(allowed) : new BadOption(label + job.name() + "." + key, value, allowed);
    }

    /** A job's key as it was written, or {@code resolved} when the job took the default. */
    private static String written(JobSpec job, String key, Object resolved) {
        Workload.Val v = job.given().get(key);
        return v != null ? v.text() : String.valueOf(resolved);
    }

    /** A run key refused, as it was written. */
    private BadOption bad(String key, Object value, String allowed) {
        Workload.Val v = workload.given().get(key);
        return v != null ? v.bad(allowed) : new BadOption(label + key, value, allowed);
    }

    /** The device's size for a message: as device_size gave it, or the configured one and where it comes from. */
    private String deviceSize() {
        long bytes = capacitySectors * IoRequest.SECTOR_BYTES;
        String where = switch (bench.deviceKind) {
            case "sim" -> "blockyard.io.disk.capacity-sectors";
            case "mem" -> "blockyard.io.memory.size";
            default -> "blockyard.io.file.size";
        };
        Workload.Val given = workload.given().get("device_size");
        if (given != null && !bench.deviceKind.equals("sim")) return given.text() + " (device_size)";
        return Report.format(bytes) + " bytes (" + Report.format(capacitySectors) + " sectors, " + where + ")";
    }

    /** What the queue and the device refuse, refused here before the run: sizes, alignment, the region's end. */
    private void checkQueueJobs() throws IOException {
        int logical = bench.setup.limits().logicalBlockBytes();
        long maxBytes = (long) bench.setup.limits().maxSectors() * IoRequest.SECTOR_BYTES;
        Path file = bench.settings.filePath();
        boolean onFile = bench.deviceKind.equals("file") && queueJobs();
        boolean device = onFile && Files.exists(file) && !Files.isRegularFile(file);
        boolean written = onFile && !device && Files.isRegularFile(file) && Files.size(file) > 0;
        Workload.Val deviceSize = workload.given().get("device_size"), deviceKind = workload.given().get("device");
        // The simulated disk's size is its model's (its zones); device_size cannot change it. A file's device_size
        // is left unused only when --device=sim replaced the file's device.
        if (bench.deviceKind.equals("sim") && deviceSize != null && (deviceSize.option() || deviceKind == null || !deviceKind.option()))
            throw deviceSize.bad("the simulated disk's size is fixed: " + deviceSize() + "; device_size is for the mem"
                    + " and file devices");
        if (onFile) checkImage(file);
        for (JobSpec j : workload.jobs()) {
            if (j.engine() != Engine.QUEUE) continue;
            for (long b : j.bs().sizes())
                if (b % logical != 0 || b > maxBytes)
                    throw bad(j, j.bs().key(), j.bs(), "every request size must be a multiple of " + logical + " bytes and at most "
                            + Sizes.format(maxBytes) + " (blockyard.io.logical-block-bytes, max-sectors), not "
                            + Sizes.format(b).replace(" ", ""));
            if (j.offsetBytes() % logical != 0)
                throw bad(j, "offset", j.offsetBytes(), "must be a multiple of " + logical + " bytes");
            if (j.offsetIncrementBytes() % logical != 0)
                throw bad(j, "offset_increment", j.offsetIncrementBytes(), "must be a multiple of " + logical + " bytes");
            if (j.sizeBytes() != null && j.sizeBytes() % logical != 0)
                throw bad(j, "size", "-", "must be a multiple of " + logical + " bytes");
            long capacityBytes = capacitySectors * IoRequest.SECTOR_BYTES;
            int last = j.numjobs() - 1;
            long lastStart = j.offsetBytes() + last * j.offsetIncrementBytes();
            String clone = last == 0 ? "the job's region" : "the region of its last clone (offset + " + last + " * offset_increment)";
            if (j.offsetBytes() + j.bs().max() > capacityBytes)
                throw bad(j, "offset", j.offsetBytes(), "the region starts beyond the end of the " + bench.deviceKind + " device: "
                        + deviceSize());
            if (lastStart + j.bs().max() > capacityBytes)
                throw bad(j, "offset_increment", j.offsetIncrementBytes(), clone + " starts at byte " + lastStart + ", beyond the end of the "
                        + bench.deviceKind + " device: " + deviceSize());
            long lastEnd = j.sizeBytes() != null ? lastStart + j.sizeBytes() : capacityBytes;
            if (lastEnd - lastStart < j.bs().max())
                throw bad(j, "size", "-", "each clone's region must hold a request of " + Sizes.format(j.bs().max())
                        + " (" + j.bs().key() + " " + written(j, j.bs().key(), j.bs()) + ")");
            if (lastEnd > capacityBytes)
                throw bad(j, "size", "-", clone + " ends at byte " + lastEnd + ", beyond the end of the " + bench.deviceKind
                        + " device: " + deviceSize());
            if (device && workload.deviceSizeBytes() == null)
                throw bad("filename", file, "is not a regular file (a block device?): give its size as device_size");
            if (device && j.rw().writes)
                throw bad("filename", file, "is not a regular file (a block device?): only read jobs may"
                        + " use it, since writing would destroy what it holds");
            if (written && j.rw().writes && !workload.allowOverwrite())
                throw bad("filename", file, "exists and is not empty: job " + j.name() + " would write"
                        + " over it; name another file, or set allow_overwrite = true");
        }
    }

    /** The file device's image: a path the run can open or make, before anything runs. */
    private void checkImage(Path file) {
        if (Files.isDirectory(file)) throw bad("filename", file, "is a directory; the file device needs an image file");
        if (!Files.exists(file)) {
            try {
                BadOption.outputFile(label + "filename", file);
            } catch (BadOption b) {
                Workload.Val v = workload.given().get("filename");
                throw v != null ? v.bad(b.allowed()) : b;
            }
        }
    }

    /** The volume of the files and extents jobs: volume_size, or twice what the files jobs write, at least 1 GiB. */
    private Geometry volume() {
        long files = 0;
        for (JobSpec j : workload.jobs())
            if (j.engine() == Engine.FILES) files += j.sizeBytes() * j.nrfiles() * j.numjobs();
        long bytes = workload.volumeBytes() != null ? workload.volumeBytes()
                : (long) Math.ceil(Math.max(1L << 30, 2 * files) / (1 - workload.prefill())); // as much free past the pre-fill
        Geometry g = Aging.volumeGeometry(config, bytes);
        if (g.groups() > Tiobench.MAX_BENCH_GROUPS)
            throw bad("volume_size", Sizes.format(bytes).replace(" ", ""), "at most " + Tiobench.MAX_BENCH_GROUPS
                    + " groups of " + Sizes.format((long) g.blocksPerGroup() * g.blockSizeBytes()) + " (each is an actor and a bitmap in memory)");
        int block = g.blockSizeBytes();
        int extentsClones = workload.jobs().stream().filter(j -> j.engine() == Engine.EXTENTS).mapToInt(JobSpec::numjobs).sum();
        for (JobSpec j : workload.jobs()) {
            if (j.engine() != Engine.EXTENTS) continue;
            if (j.unitBytes() % block != 0) throw bad(j, "unit", j.unitBytes(), "must be a multiple of the block, " + block + " bytes");
            if (j.maxExtentBytes() % j.unitBytes() != 0)
                throw bad(j, "max_extent", j.maxExtentBytes(), "must be 0 (no limit) or a multiple of unit (" + j.unitBytes() + " bytes)");
            long share = (long) (g.dataBlocks() * (1 - workload.prefill())) / extentsClones;
            if ((long) (j.fillLow() * share) * block < j.bs().max())
                throw bad(j, "fill_low", j.fillLow(), "leaves each of the " + extentsClones + " extents clones less than one allocation of "
                        + Sizes.format(j.bs().max()) + " on a volume of " + Sizes.format(g.bytes()) + ": raise volume_size");
        }
        return g;
    }

    /**
     * A group's rows (a row per job, then the total) and its total row alone.
     *
     * @param elevator null when the group has no queue jobs
     * @param queue    the queue's figures at the end, with the elevator that ran; null without queue jobs
     * @param clones   what each clone counted, in the order of the jobs
     */
    record Group(String elevator, List<Map<String, Object>> rows, Map<String, Object> total, QueueStats queue,
                 List<JobStats> clones) {
        Group(String elevator, List<Map<String, Object>> rows, Map<String, Object> total) {
            this(elevator, rows, total, null, List.of());
        }
    }

    /** Runs every group; an image file the run created is removed at the end, one that was there stays. */
    List<Group> run() throws Exception {
        Path image = bench.deviceKind.equals("file") && queueJobs() && !Files.exists(bench.settings.filePath())
                ? bench.settings.filePath() : null;
        try {
            List<Group> out = new ArrayList<>();
            for (int i = 0; i < elevators.size(); i++) out.add(runGroup(i, elevators.get(i)));
            return out;
        } finally {
            if (image != null) Files.deleteIfExists(image);
        }
    }

    private Group runGroup(int index, String elevator) throws Exception {
        QueueSetup setup = bench.setup.withElevator(elevator).withEvents(index == 0 ? bench.setup.events() : null);
        List<JobStats> all = new ArrayList<>();
        List<CompletableFuture<Void>> done = new ArrayList<>();
        long cpu0 = Tiobench.processCpuNanos(), wall0 = System.nanoTime();
        ActorBlockAllocator alloc = null;
        ActorSystem<QueueActor.Command> io = null;
        Simulation sim = null;
        BlockDevice device = null;
        Map<String, Object> total = Report.row();
        QueueStats qs = null;
        try {
            long freeAtStart = 0;
            if (volume != null) {
                alloc = ActorBlockAllocator.start(AllocatorSettings.fromConfig(config, volume.blocksPerGroup())
                        .withGeometry(volume), config, workload.prefill() > 0 ? SmallFiles.fillFromStart(workload.prefill()) : null);
                freeAtStart = alloc.freeBlocks().toCompletableFuture().get(30, TimeUnit.SECONDS);
            }
            List<IoLoad> loads = new ArrayList<>();
            if (queueJobs()) {
                try {
                    device = bench.openDevice();
                } catch (IOException e) {
                    throw bad("filename", bench.settings.filePath(), "cannot be opened: " + BadOption.reason(e));
                }
            }
            long owner = 1;
            for (JobSpec j : workload.jobs())
                if (j.engine() == Engine.QUEUE)
                    for (int c = 0; c < j.numjobs(); c++)
                        loads.add(new IoLoad(j, c, owner++, capacitySectors, !device.simulated(), 0, workload.seed()));
            for (IoLoad l : loads) all.add(l.stats);
            List<ActorRef<FilesClient.Command>> files = new ArrayList<>();
            List<ActorRef<ExtentsClient.Command>> extents = new ArrayList<>();
            int extentsClones = workload.jobs().stream().filter(j -> j.engine() == Engine.EXTENTS).mapToInt(JobSpec::numjobs).sum();
            for (JobSpec j : workload.jobs()) {
                for (int c = 0; c < j.numjobs() && j.engine() != Engine.QUEUE; c++) {
                    JobStats s = new JobStats(j, c, 0);
                    all.add(s);
                    CompletableFuture<Void> d = new CompletableFuture<>();
                    done.add(d);
                    String name = "job-" + j.name() + "-" + c;
                    if (j.engine() == Engine.FILES) files.add(alloc.spawn(FilesClient.create(alloc, s, workload.seed(), d), name));
                    else extents.add(alloc.spawn(ExtentsClient.create(alloc, s, freeAtStart / extentsClones, workload.seed(), d), name));
                }
            }
            List<ActorRef<IoClient.Command>> clients = new ArrayList<>();
            if (device != null && !device.simulated()) {
                // Think times are scheduled messages: Akka's default tick of 10 ms would round each up to 10 ms.
                Config akka = ConfigFactory.parseString("akka.scheduler.tick-duration = 1ms").withFallback(BlockyardConfig.load());
                io = ActorSystem.create(QueueActor.create(setup, device), "blockyard-jobs", akka);
                for (IoLoad l : loads) {
                    CompletableFuture<Void> d = new CompletableFuture<>();
                    done.add(d);
                    clients.add(io.systemActorOf(IoClient.create(l, io, d), "job-" + l.stats.job.name() + "-" + l.stats.clone,
                            Props.empty()));
                }
            }
            status.group(index, queueJobs() ? elevator : "allocation jobs", all);
            // The clock starts once every actor system and client is up: starting them is not the jobs' time.
            long origin = System.nanoTime();
            if (!files.isEmpty()) Starter.startAll(alloc, files, new FilesClient.Go(origin), "start-files");
            if (!extents.isEmpty()) Starter.startAll(alloc, extents, new ExtentsClient.Go(origin), "start-extents");
            if (io != null) io.systemActorOf(Starter.create(clients, new IoClient.Go(origin)), "start", Props.empty()).tell(Boolean.TRUE);
            if (device != null && device.simulated()) {
                sim = new Simulation(setup, device);
                AtomicReference<Throwable> failure = new AtomicReference<>();
                SimClients.start(sim, loads, failure);
                sim.run();
                if (failure.get() != null) throw new IllegalStateException("a request failed: " + failure.get().getMessage(), failure.get());
            }
            await(done, () -> all.stream().mapToLong(s -> s.ops.get()).sum(), bench.settings.submitTimeout());
            total.put("job", "total");
            if (device != null) {
                qs = sim != null ? sim.stats() : AskPattern.<QueueActor.Command, QueueStats>ask(io,
                        QueueActor.GetStats::new, bench.settings.submitTimeout(), io.scheduler()).toCompletableFuture()
                        .get(bench.settings.submitTimeout().toMillis(), TimeUnit.MILLISECONDS);
                IoBench.putQueueStats(total, qs);
                if (sim != null) {
                    total.put("seeks", ((SimulatedDisk) device).seeks());
                    total.put("device_time_ms", sim.deviceBusyNanos() / 1_000_000);
                    total.put("device_busy_pct", sim.nowNanos() == 0 ? 0.0 : 100.0 * sim.deviceBusyNanos() / sim.nowNanos());
                    total.put("virtual_s", Latency.round(sim.nowNanos() / 1e9));
                }
            }
            if (alloc != null) {
                long free = alloc.freeBlocks().toCompletableFuture().get(30, TimeUnit.SECONDS);
                total.put("volume_bytes", volume.bytes());
                total.put("volume_used_bytes", (freeAtStart - free) * volume.blockSizeBytes());
                total.put("score_v3", Math.round(alloc.fragmentationScore().toCompletableFuture().get(30, TimeUnit.SECONDS) * 10000) / 10000.0);
            }
        } finally {
            if (io != null) {
                io.terminate();
                io.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
            }
            if (sim != null) sim.close();
            if (alloc != null) alloc.close();
        }
        long wall = System.nanoTime() - wall0, cpu = Tiobench.processCpuNanos() - cpu0;
        total.put("wall_s", Latency.round(wall / 1e9));
        total.put("cpu_s", Latency.round(cpu / 1e9));
        total.put("cpu_pct", Math.round(1000.0 * cpu / wall / Runtime.getRuntime().availableProcessors()) / 10.0);
        String ran = queueJobs() ? elevator : null; // without queue jobs no elevator takes part
        return new Group(ran, rows(ran, all, total, sim == null), total, qs, List.copyOf(all));
    }

    /**
     * Waits for every clone, at most {@code stall} without a single answer anywhere; the first clone that failed
     * fails the run.
     */
    static void await(List<CompletableFuture<Void>> done, java.util.function.LongSupplier answered, Duration stall)
            throws Exception {
        CompletableFuture<Void> every = CompletableFuture.allOf(done.toArray(CompletableFuture[]::new));
        long seen = -1, since = System.nanoTime();
        while (true) {
            try {
                every.get(100, TimeUnit.MILLISECONDS);
                return;
            } catch (TimeoutException notYet) {
                long ops = answered.getAsLong();
                if (ops != seen) {
                    seen = ops;
                    since = System.nanoTime();
                } else if (System.nanoTime() - since > stall.toNanos()) {
                    throw new IllegalStateException("no call was answered for " + stall.toSeconds()
                            + " s (blockyard.io.submit-timeout); the run stopped");
                }
            } catch (ExecutionException e) {
                throw e.getCause() instanceof Exception x ? x : e;
            }
        }
    }

    /** The group's rows: one per job, then the total, each naming the elevator and the device. */
    private List<Map<String, Object>> rows(String elevator, List<JobStats> all, Map<String, Object> total, boolean slat) {
        return JobStats.rows(workload.jobs(), all, slat, total, r -> labelled(r, elevator));
    }

    private Map<String, Object> labelled(Map<String, Object> r, String elevator) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("job", r.get("job"));
        out.put("elevator", elevator);
        out.put("device", elevator == null ? null : bench.deviceKind);
        out.putAll(r);
        return out;
    }
}
