package org.blockyard.benches.io;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.Behaviors;
import com.typesafe.config.Config;
import org.blockyard.api.io.IoCompletion;
import org.blockyard.api.io.IoRequest;
import org.blockyard.api.io.QueueStats;
import org.blockyard.benches.BadOption;
import org.blockyard.benches.JsonOutput;
import org.blockyard.benches.Report;
import org.blockyard.runtime.config.BlockyardConfig;
import org.blockyard.runtime.io.ActorBlockQueue;
import org.blockyard.runtime.io.BlockDevice;
import org.blockyard.runtime.io.IoSettings;
import org.blockyard.runtime.io.QueueActor;
import org.blockyard.runtime.io.QueueSetup;
import org.blockyard.runtime.io.Simulation;
import org.blockyard.runtime.io.TraceEvents;
import org.blockyard.runtime.io.trace.BlktraceWriter;

/**
 * What the block-I/O benchmarks share: settings, the optional trace, a run on either clock, JSON output. The
 * workload runner ({@code bench run}) builds one from its job file's values.
 */
public final class IoBench implements AutoCloseable {
    /** Device numbers written into traces: 8,0 is sda, which blkparse prints as-is. */
    static final int TRACE_MAJOR = 8, TRACE_MINOR = 0;
    /** Stall limit of elevator calls on the simulated disk: 60 s, far beyond any pause of the JVM. */
    static final long SIM_STALL_LIMIT_NANOS = 60_000_000_000L;

    public final IoSettings settings;
    final String requested;
    public final String deviceKind;
    public final QueueSetup setup;
    final TraceEvents trace;

    IoBench(IoBenchOptions o) throws IOException {
        this(o.deploy.applyTo(BadOption.config(o.config)), o.elevator, o.device, o.builtinOnly, o.trace);
    }

    /**
     * @param elevator    the elevator asked for, or null for the configured one
     * @param device      sim, file or mem, or null for the configured one
     * @param builtinOnly leave out the plugin elevators
     * @param traceFile   where to write a blktrace of the run, or null
     * @param config      the configuration, with the plugin folders of {@code --deploy} ({@link org.blockyard.benches.DeployOption})
     */
    public IoBench(Config config, String elevator, String device, boolean builtinOnly, Path traceFile) throws IOException {
        IoSettings s = IoSettings.fromConfig(config);
        if (!builtinOnly) BenchElevators.registerWith(s.setup().registry(), config);
        // An elevator named on the command line must exist: the fallback to the default belongs to the
        // configuration (blockyard.io.scheduler) and to the runtime switch, not to a benchmark's request.
        if (elevator != null) checkElevator(s.setup(), elevator, builtinOnly);
        this.requested = elevator != null ? elevator : s.setup().requestedElevator();
        if (device != null) BadOption.oneOf("--device", device, List.of("sim", "file", "mem"));
        this.deviceKind = device != null ? device : s.device();
        if (!List.of("sim", "file", "mem").contains(deviceKind))
            throw new IllegalArgumentException("blockyard.io.device must be sim, file or mem, not " + deviceKind);
        if (traceFile != null) BadOption.outputFile("--trace", traceFile);
        this.trace = traceFile == null ? null : new TraceEvents(new BlktraceWriter(traceFile, TRACE_MAJOR, TRACE_MINOR));
        QueueSetup qs = s.setup().withElevator(requested);
        // On the virtual clock a garbage-collection pause must not retire an elevator: the figures of a
        // simulated run depend on its inputs alone. Stalls are still caught on the real devices.
        if (deviceKind.equals("sim")) qs = qs.withStallLimit(Math.max(qs.elevatorStallLimitNanos(), SIM_STALL_LIMIT_NANOS));
        if (trace != null) qs = qs.withEvents(trace);
        this.setup = qs;
        this.settings = s.withSetup(qs);
    }

    /** Refuses an elevator name that {@code setup}'s registry does not know, listing every one it does. */
    public static void checkElevator(QueueSetup setup, String elevator, boolean builtinOnly) {
        if (setup.registry().resolve(elevator).isEmpty())
            throw new BadOption("--elevator", elevator, "installed are " + String.join(", ", setup.registry().ids())
                    + (builtinOnly ? " (--builtin-only leaves out the plugin elevators)" : " (a plugin of your own: --deploy DIR)"));
    }

    public BlockDevice openDevice() throws IOException {
        return settings.openDevice(deviceKind);
    }

    /** Figures every benchmark reports first. */
    Map<String, Object> header(String workload, String elevatorRan) {
        return header(workload, requested, elevatorRan);
    }

    Map<String, Object> header(String workload, String elevatorRequested, String elevatorRan) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("workload", workload);
        m.put("elevator_requested", elevatorRequested);
        m.put("elevator", elevatorRan);
        m.put("device", deviceKind);
        return m;
    }

    public static void putQueueStats(Map<String, Object> m, QueueStats s) {
        m.put("submissions", s.submissions());
        m.put("requests_dispatched", s.requestsDispatched());
        m.put("mean_request_sectors", Math.round(s.meanRequestSectors() * 100) / 100.0);
        m.put("max_request_sectors", s.maxRequestSectors());
        m.put("merges", s.merges());
        m.put("back_merges", s.backMerges());
        m.put("front_merges", s.frontMerges());
        m.put("coalesced", s.coalesced());
    }

    /** Result of driving a queue in real time: its stats and the elapsed wall time. */
    record RealRun(QueueStats stats, String elevator, long elapsedNanos) {}

    /**
     * Runs {@code load} against a {@link QueueActor} on {@code device} in real time. {@code load} submits
     * through the BlockQueue and returns when every submission has completed.
     */
    RealRun runReal(BlockDevice device, Consumer<ActorBlockQueue> load) {
        ActorSystem<QueueActor.Command> system = ActorSystem.create(
                Behaviors.setup(ctx -> QueueActor.create(setup, device)), "blockyard-io",
                BlockyardConfig.load());
        try {
            ActorBlockQueue q = new ActorBlockQueue(system, system.scheduler(), setup.limits(),
                    device.capacitySectors(), settings.submitTimeout());
            long t0 = System.nanoTime();
            load.accept(q);
            long elapsed = System.nanoTime() - t0;
            QueueStats stats = q.stats().toCompletableFuture().join();
            return new RealRun(stats, stats.elevator(), elapsed);
        } finally {
            system.terminate();
            try {
                system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new IllegalStateException("actor system did not stop", e);
            }
        }
    }

    /**
     * Submits {@code count} requests made by {@code make} with at most {@code window} outstanding, and waits
     * for all; the first failure is rethrown.
     */
    static void submitWindowed(ActorBlockQueue q, int count, int window, java.util.function.IntFunction<IoRequest> make,
                               Consumer<IoCompletion> onDone) {
        submitWindowed(q, count, window, 1, make, onDone);
    }

    /** As above, handing {@code batch} submissions over at a time ({@link ActorBlockQueue#submitAll}). */
    static void submitWindowed(ActorBlockQueue q, int count, int window, int batch,
                               java.util.function.IntFunction<IoRequest> make, Consumer<IoCompletion> onDone) {
        java.util.concurrent.Semaphore permits = new java.util.concurrent.Semaphore(window);
        CountDownLatch all = new CountDownLatch(count);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        for (int i = 0; i < count && failure.get() == null; i += batch) {
            int n = Math.min(batch, count - i);
            permits.acquireUninterruptibly(n);
            List<IoRequest> reqs = new java.util.ArrayList<>(n);
            for (int k = 0; k < n; k++) reqs.add(make.apply(i + k));
            List<CompletionStage<IoCompletion>> st = n == 1 ? List.of(q.submit(reqs.get(0))) : q.submitAll(reqs);
            for (CompletionStage<IoCompletion> one : st)
                one.whenComplete((c, e) -> {
                    if (e != null) failure.compareAndSet(null, e);
                    else if (onDone != null) onDone.accept(c);
                    permits.release();
                    all.countDown();
                });
        }
        try {
            if (failure.get() == null) all.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
        if (failure.get() != null) throw new IllegalStateException("a submission failed: " + failure.get().getMessage(), failure.get());
    }

    static Simulation simulation(QueueSetup setup, BlockDevice device) {
        return new Simulation(setup, device);
    }

    /** Trace counts as reported by the queue, when tracing. */
    void putTrace(Map<String, Object> m, IoBenchOptions o) {
        putTrace(m, o.trace);
    }

    /** Trace counts as reported by the queue, when tracing to {@code traceFile}. */
    public void putTrace(Map<String, Object> m, Path traceFile) {
        if (trace == null) return;
        trace.writer().flush();
        Map<String, Long> counts = new LinkedHashMap<>();
        for (var a : org.blockyard.runtime.io.trace.BlktraceAction.values()) counts.put(a.name(), trace.reported(a));
        m.put("trace", traceFile.toString());
        m.put("trace_events", counts);
    }

    /** Where tables go: standard output, or standard error when it carries the JSON. */
    static PrintStream out(IoBenchOptions o) {
        return o.json.tables();
    }

    /**
     * Results as one table ({@link Report#table}: transposed when wide); nested figures and series (CDFs,
     * figures over time) are left to the JSON and the plots.
     */
    static void print(PrintStream out, List<Map<String, Object>> results) {
        List<String> columns = new java.util.ArrayList<>();
        for (Map<String, Object> r : results)
            for (var e : r.entrySet()) {
                if (e.getValue() instanceof List<?>) continue;
                if (e.getValue() instanceof Map<?, ?> m) { // latency percentiles: the table shows p50 and p99
                    for (String p : List.of("p50", "p99"))
                        if (m.containsKey(p) && !columns.contains(e.getKey() + "." + p)) columns.add(e.getKey() + "." + p);
                } else if (!columns.contains(e.getKey())) {
                    columns.add(e.getKey());
                }
            }
        if (columns.remove("elevator")) columns.add(0, "elevator"); // what tells the rows apart heads them
        Report.table(out, results, columns);
    }

    /** The results as the one JSON document of every benchmark, when JSON was asked for ({@link JsonOutput}). */
    static void writeJson(IoBenchOptions o, List<Map<String, Object>> results, Map<String, Object> summary) throws IOException {
        o.json.write(o.command, results, summary);
    }

    static double mibPerSecond(long bytes, long nanos) {
        return nanos <= 0 ? 0 : Math.round(bytes / 1048576.0 / (nanos / 1e9) * 100) / 100.0;
    }

    static Duration ms(long nanos) {
        return Duration.ofNanos(nanos);
    }

    @Override
    public void close() throws IOException {
        try {
            if (trace != null) trace.writer().close();
        } catch (IOException e) {
            throw BadOption.failed(trace.writer().file(), e);
        }
    }
}
