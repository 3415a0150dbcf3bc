package org.blockyard.benches.job;

import java.io.PrintStream;
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
import java.util.concurrent.atomic.AtomicInteger;

import akka.actor.typed.ActorRef;

import org.blockyard.api.alloc.Geometry;
import org.blockyard.api.io.IoRequest;
import org.blockyard.api.io.QueueLimits;
import org.blockyard.api.io.QueueStats;
import org.blockyard.runtime.alloc.ActorBlockAllocator;
import org.blockyard.benches.BadOption;
import org.blockyard.benches.Latency;
import org.blockyard.benches.Report;
import org.blockyard.benches.Sizes;
import org.blockyard.benches.Starter;
import org.blockyard.benches.Tiobench;
import org.blockyard.benches.job.JobSpec.Engine;
import org.blockyard.runtime.io.ActorBlockQueue;
import org.blockyard.benches.io.IoBench;

/**
 * A workload run on an engine that is already running and goes on after it (a host's): the queue jobs'
 * clones submit to that engine's queue, with whatever elevator it runs (and is switched to meanwhile), the
 * files and extents jobs' clones call its allocator, with its policy. Every job at once, one group, reported
 * as {@code bench run} reports a group. The run's own keys that pick a device, an elevator or a volume are
 * not used (the engine has its own; {@link #notes} says so), and the run leaves nothing behind: each file is
 * deleted once closed, each extents clone gives back what it holds before it ends.
 *
 * <p>Everything the queue or the allocator would refuse is refused by {@link #prepare}, before anything
 * runs. {@link #run} blocks its caller until every clone is done; {@link #stop} (from any thread) has the
 * clones start nothing new, so the run ends once what is in flight is answered. A run in which no call was
 * answered for the engine's submit timeout fails instead of hanging, after stopping its clones.
 */
public final class EngineRun {
    private static final AtomicInteger RUNS = new AtomicInteger();
    /** How long the end of a failed run waits for its other clones to finish what they have in flight. */
    private static final Duration DRAIN = Duration.ofSeconds(30);

    /**
     * The engine the jobs run on.
     *
     * @param device         its device's kind, for the report ({@code mem}, {@code file}, {@code sim})
     * @param readOnlyReason null when jobs may write; else why only read jobs may run (a durable volume)
     * @param stall          the longest the run waits without a single answer before it fails
     */
    public record Target(ActorBlockQueue queue, ActorBlockAllocator allocator, String device, String readOnlyReason,
                         Duration stall) {}

    private final Workload workload;
    private final Target target;
    private final String label;
    private final int run = RUNS.incrementAndGet();
    private final List<String> notes = new ArrayList<>();
    private final List<JobStats> all = new ArrayList<>();
    private final Status status = new Status(1);
    private volatile boolean stopped;
    private volatile long startNanos;
    private WorkloadRun.Group result;

    private EngineRun(Workload workload, Target target) {
        this.workload = workload;
        this.target = target;
        this.label = workload.source().equals("options") ? "" : Path.of(workload.source()).getFileName() + ": ";
        List<String> unused = new ArrayList<>();
        for (String k : List.of("device", "filename", "device_size", "direct", "allow_overwrite", "elevator", "volume_size",
                "prefill"))
            if (workload.given().containsKey(k)) unused.add(k);
        if (!unused.isEmpty())
            notes.add(label + String.join(", ", unused) + ": not used; the jobs run on the host's engine: its "
                    + target.device() + " device, and the elevator and policy it runs (blockyard:scheduler, blockyard:policy)");
        // Think times are scheduled messages, in the engine's actor system: its scheduler rounds them up to its tick
        // (bench run gives its own clients a 1 ms tick; the host's system keeps Akka's).
        Duration tick = target.allocator().system().settings().config().getDuration("akka.scheduler.tick-duration");
        for (JobSpec j : workload.jobs())
            if (j.engine() == Engine.QUEUE && j.thinkNanos() > 0 && j.thinkNanos() < tick.toNanos())
                notes.add(label + j.name() + ".thinktime: below the host's scheduler tick (akka.scheduler.tick-duration, "
                        + tick.toMillis() + " ms), so each think time lasts a tick");
        checkQueueJobs();
        checkAllocationJobs();
    }

    /** Reads and checks the workload of {@code jobFile} (may be null) with {@code options} over it, as {@code bench run} does. */
    public static EngineRun prepare(Path jobFile, Map<String, String> options, Target target) {
        return new EngineRun(Workload.read(jobFile, options), target);
    }

    /** What the user should know before it runs: keys of the file that are not used here. */
    public List<String> notes() {
        return List.copyOf(notes);
    }

    /** The job file (or {@code options}), its jobs and clones: {@code mix.conf: 2 jobs, 5 clones}. */
    public String describe() {
        int clones = workload.jobs().stream().mapToInt(JobSpec::numjobs).sum();
        String source = workload.source().equals("options") ? "options" : String.valueOf(Path.of(workload.source()).getFileName());
        return source + ": " + workload.jobs().size() + (workload.jobs().size() == 1 ? " job, " : " jobs, ") + clones
                + (clones == 1 ? " clone" : " clones");
    }

    private boolean queueJobs() {
        return workload.jobs().stream().anyMatch(j -> j.engine() == Engine.QUEUE);
    }

    private BadOption bad(JobSpec job, String key, Object value, String allowed) {
        Workload.Val v = job.given().get(key);
        return v != null ? v.bad(allowed) : new BadOption(label + job.name() + "." + key, value, allowed);
    }

    /** What the queue and its device refuse: sizes, alignment, a region beyond the device; writes on a read-only engine. */
    private void checkQueueJobs() {
        QueueLimits limits = target.queue().limits();
        int logical = limits.logicalBlockBytes();
        long maxBytes = (long) limits.maxSectors() * IoRequest.SECTOR_BYTES;
        long capacityBytes = target.queue().capacitySectors() * IoRequest.SECTOR_BYTES;
        String device = "the host's " + target.device() + " device (" + Report.format(capacityBytes) + " bytes)";
        for (JobSpec j : workload.jobs()) {
            if (j.engine() != Engine.QUEUE) continue;
            if (j.rw().writes && target.readOnlyReason() != null)
                throw bad(j, "rw", j.rw().id, "only read jobs may run here: " + target.readOnlyReason());
            for (long b : j.bs().sizes())
                if (b % logical != 0 || b > maxBytes)
                    throw bad(j, j.bs().key(), j.bs(), "every request size must be a multiple of " + logical + " bytes and at most "
                            + Sizes.format(maxBytes) + " (the host's queue limits), not " + Sizes.format(b).replace(" ", ""));
            if (j.offsetBytes() % logical != 0)
                throw bad(j, "offset", j.offsetBytes(), "must be a multiple of " + logical + " bytes");
            if (j.offsetIncrementBytes() % logical != 0)
                throw bad(j, "offset_increment", j.offsetIncrementBytes(), "must be a multiple of " + logical + " bytes");
            if (j.sizeBytes() != null && j.sizeBytes() % logical != 0)
                throw bad(j, "size", "-", "must be a multiple of " + logical + " bytes");
            int last = j.numjobs() - 1;
            long lastStart = j.offsetBytes() + last * j.offsetIncrementBytes();
            String clone = last == 0 ? "the job's region" : "the region of its last clone (offset + " + last + " * offset_increment)";
            if (j.offsetBytes() + j.bs().max() > capacityBytes)
                throw bad(j, "offset", j.offsetBytes(), "the region starts beyond the end of " + device);
            if (lastStart + j.bs().max() > capacityBytes)
                throw bad(j, "offset_increment", j.offsetIncrementBytes(), clone + " starts at byte " + lastStart
                        + ", beyond the end of " + device);
            long lastEnd = j.sizeBytes() != null ? lastStart + j.sizeBytes() : capacityBytes;
            if (lastEnd - lastStart < j.bs().max())
                throw bad(j, "size", "-", "each clone's region must hold a request of " + Sizes.format(j.bs().max()));
            if (lastEnd > capacityBytes)
                throw bad(j, "size", "-", clone + " ends at byte " + lastEnd + ", beyond the end of " + device);
        }
    }

    /** What the allocator refuses: units off the block, extents off the unit, a share too small; any on a read-only engine. */
    private void checkAllocationJobs() {
        Geometry g = target.allocator().geometry();
        int block = g.blockSizeBytes();
        int extentsClones = workload.jobs().stream().filter(j -> j.engine() == Engine.EXTENTS).mapToInt(JobSpec::numjobs).sum();
        for (JobSpec j : workload.jobs()) {
            if (j.engine() == Engine.QUEUE) continue;
            if (target.readOnlyReason() != null)
                throw bad(j, "ioengine", j.engine().id(), "only read jobs of the queue may run here: " + target.readOnlyReason());
            if (j.engine() != Engine.EXTENTS) continue;
            if (j.unitBytes() % block != 0) throw bad(j, "unit", j.unitBytes(), "must be a multiple of the block, " + block + " bytes");
            if (j.maxExtentBytes() % j.unitBytes() != 0)
                throw bad(j, "max_extent", j.maxExtentBytes(), "must be 0 (no limit) or a multiple of unit (" + j.unitBytes() + " bytes)");
            long share = g.dataBlocks() / extentsClones;
            if ((long) (j.fillLow() * share) * block < j.bs().max())
                throw bad(j, "fill_low", j.fillLow(), "leaves each of the " + extentsClones + " extents clones less than one allocation of "
                        + Sizes.format(j.bs().max()) + " on the host's volume of " + Sizes.format(g.bytes()));
        }
    }

    /** Has every clone start nothing new: the run ends once what is in flight is answered. From any thread. */
    public void stop() {
        stopped = true;
        List<JobStats> clones;
        synchronized (all) {
            clones = List.copyOf(all);
        }
        for (JobStats s : clones) s.stop();
    }

    public boolean stopped() {
        return stopped;
    }

    /** Submissions sent to the queue so far, and those answered: live, from any thread. */
    public long[] submissions() {
        long sent = 0, answered = 0;
        synchronized (all) {
            for (JobStats s : all)
                if (s.job.engine() == Engine.QUEUE) {
                    sent += s.sentCalls.get();
                    answered += s.ops.get();
                }
        }
        return new long[] {sent, answered};
    }

    /** Calls of the files and extents jobs answered so far. */
    public long allocatorCalls() {
        long calls = 0;
        synchronized (all) {
            for (JobStats s : all) if (s.job.engine() != Engine.QUEUE) calls += s.ops.get();
        }
        return calls;
    }

    /** One line of where the run is: time, share done, rates since the previous line, submissions sent and answered. */
    public String status() {
        long[] q = submissions();
        StringBuilder sb = new StringBuilder();
        long t0 = startNanos;
        if (t0 == 0) sb.append("starting");
        else sb.append(Report.format(Math.round((System.nanoTime() - t0) / 1e8) / 10.0)).append(" s, ").append(status.get());
        if (queueJobs()) sb.append("; submissions: ").append(Report.format(q[0])).append(" sent, ")
                .append(Report.format(q[1])).append(" answered");
        if (workload.jobs().stream().anyMatch(j -> j.engine() != Engine.QUEUE))
            sb.append("; allocator calls: ").append(Report.format(allocatorCalls()));
        return sb.toString();
    }

    /**
     * Runs every clone of every job at once on the engine and waits for all of them. A clone that fails ends
     * the run: the others are stopped and their calls in flight awaited (at most {@link #DRAIN}), then the
     * failure is thrown.
     */
    public void run() throws Exception {
        ActorBlockQueue queue = target.queue();
        ActorBlockAllocator alloc = target.allocator();
        List<CompletableFuture<Void>> done = new ArrayList<>();
        QueueStats before = queueJobs() ? get(queue.stats()) : null;
        String elevatorAtStart = queueJobs() ? get(queue.activeElevator()) : null;
        long cpu0 = Tiobench.processCpuNanos(), wall0 = System.nanoTime();
        long freeAtStart = get(alloc.freeBlocks());
        Geometry volume = alloc.geometry();
        int extentsClones = workload.jobs().stream().filter(j -> j.engine() == Engine.EXTENTS).mapToInt(JobSpec::numjobs).sum();
        String prefix = "bench-" + run + "-";
        List<ActorRef<IoClient.Command>> clients = new ArrayList<>();
        List<ActorRef<FilesClient.Command>> files = new ArrayList<>();
        List<ActorRef<ExtentsClient.Command>> extents = new ArrayList<>();
        long owner = 1;
        for (JobSpec j : workload.jobs()) {
            for (int c = 0; c < j.numjobs(); c++) {
                CompletableFuture<Void> d = new CompletableFuture<>();
                String name = prefix + "job-" + j.name() + "-" + c;
                JobStats s;
                switch (j.engine()) {
                    case QUEUE -> {
                        IoLoad l = new IoLoad(j, c, owner++, queue.capacitySectors(), true, 0, workload.seed());
                        s = l.stats;
                        clients.add(alloc.spawn(IoClient.create(l, queue.actor(), d), name));
                    }
                    case FILES -> {
                        s = new JobStats(j, c, 0);
                        files.add(alloc.spawn(FilesClient.create(alloc, s, workload.seed(), d, "/bench/" + run + "/", true), name));
                    }
                    default -> {
                        s = new JobStats(j, c, 0);
                        extents.add(alloc.spawn(ExtentsClient.create(alloc, s, freeAtStart / extentsClones, workload.seed(), d, true), name));
                    }
                }
                synchronized (all) {
                    all.add(s);
                }
                if (stopped) s.stop();
                done.add(d);
            }
        }
        status.group(0, queueJobs() ? elevatorAtStart : "allocation jobs", all);
        long origin = System.nanoTime();
        startNanos = origin;
        if (!clients.isEmpty()) Starter.startAll(alloc, clients, new IoClient.Go(origin), prefix + "start-io");
        if (!files.isEmpty()) Starter.startAll(alloc, files, new FilesClient.Go(origin), prefix + "start-files");
        if (!extents.isEmpty()) Starter.startAll(alloc, extents, new ExtentsClient.Go(origin), prefix + "start-extents");
        try {
            WorkloadRun.await(done, () -> {
                synchronized (all) {
                    return all.stream().mapToLong(s -> s.ops.get()).sum();
                }
            }, target.stall());
        } catch (Exception e) {
            stop();
            try {
                CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)).get(DRAIN.toMillis(), TimeUnit.MILLISECONDS);
            } catch (ExecutionException | TimeoutException ignored) {
                // the first failure is the one reported
            }
            throw e;
        }
        Map<String, Object> total = Report.row();
        total.put("job", "total");
        String elevator = null;
        if (queueJobs()) {
            QueueStats after = get(queue.stats());
            IoBench.putQueueStats(total, new QueueStats(after.submissions() - before.submissions(),
                    after.requestsDispatched() - before.requestsDispatched(), after.sectorsDispatched() - before.sectorsDispatched(),
                    after.maxRequestSectors(), after.backMerges() - before.backMerges(), after.frontMerges() - before.frontMerges(),
                    after.coalesced() - before.coalesced(), after.completed() - before.completed(), after.elevator(), Map.of()));
            elevator = after.elevator().equals(elevatorAtStart) ? elevatorAtStart
                    : elevatorAtStart + ", " + after.elevator() + " at the end";
        }
        if (workload.jobs().stream().anyMatch(j -> j.engine() != Engine.QUEUE)) {
            long free = get(alloc.freeBlocks());
            total.put("volume_bytes", volume.bytes());
            total.put("volume_used_bytes", (freeAtStart - free) * volume.blockSizeBytes());
            total.put("score_v3", Math.round(get(alloc.fragmentationScore()) * 10000) / 10000.0);
        }
        long wall = System.nanoTime() - wall0, cpu = Tiobench.processCpuNanos() - cpu0;
        total.put("wall_s", Latency.round(wall / 1e9));
        total.put("cpu_s", Latency.round(cpu / 1e9));
        total.put("cpu_pct", Math.round(1000.0 * cpu / wall / Runtime.getRuntime().availableProcessors()) / 10.0);
        result = new WorkloadRun.Group(elevator, rows(elevator, total), total);
    }

    private <T> T get(java.util.concurrent.CompletionStage<T> stage) throws Exception {
        try {
            return stage.toCompletableFuture().get(target.stall().toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception x ? x : e;
        }
    }

    /** The group's rows: one per job, then the total, each naming the elevator and the device (as bench run's). */
    private List<Map<String, Object>> rows(String elevator, Map<String, Object> total) {
        return JobStats.rows(workload.jobs(), all, true, total, r -> labelled(r, elevator));
    }

    private Map<String, Object> labelled(Map<String, Object> r, String elevator) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("job", r.get("job"));
        out.put("elevator", elevator);
        out.put("device", elevator == null ? null : target.device());
        out.putAll(r);
        return out;
    }

    /** The rows of the finished run, as {@code bench run --json} has them; empty before it finished. */
    public List<Map<String, Object>> rows() {
        return result == null ? List.of() : result.rows();
    }

    /**
     * The report of the finished run, as {@code bench run} prints a group, then a line saying whether every
     * submission was answered.
     */
    public void print(PrintStream out) {
        if (result == null) throw new IllegalStateException("the run has not finished");
        RunCommand.print(out, workload, List.of(result));
        if (queueJobs()) {
            long[] q = submissions();
            out.println("submissions: " + Report.format(q[0]) + " sent, " + Report.format(q[1]) + " answered"
                    + (q[0] == q[1] ? " (every one)" : ", " + Report.format(q[0] - q[1]) + " not") + (stopped ? "; stopped early" : ""));
        } else if (stopped) {
            out.println("stopped early");
        }
    }
}
