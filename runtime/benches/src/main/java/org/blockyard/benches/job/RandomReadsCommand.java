package org.blockyard.benches.job;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

import com.typesafe.config.Config;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import org.blockyard.api.io.QueueStats;
import org.blockyard.benches.BadOption;
import org.blockyard.benches.BenchJson;
import org.blockyard.benches.Latency;
import org.blockyard.benches.PlotOption;
import org.blockyard.benches.Plots;
import org.blockyard.benches.Report;
import org.blockyard.benches.io.IoBench;
import org.blockyard.benches.io.IoBenchOptions;
import org.blockyard.runtime.io.IoSettings;
import org.blockyard.runtime.io.SimulatedDisk;

/**
 * {@code bench randomreads}: the shipped job file {@code config/jobs/randomreads.conf} (a class-path resource of
 * this module), run as {@code bench run} runs it. Its options are the file's keys under the bench's own names
 * ({@code --seconds} is {@code runtime}, {@code --readers} {@code numjobs}, {@code --think-us} {@code thinktime},
 * {@code --span-percent} {@code size}), each checked as the key is and named in a message as the user gave it;
 * one that contradicts the file ({@code --device mem}: the file's disk is the simulated one) is an error. It
 * reports a row per elevator, reads per second and read latency, and anticipatory over deadline: Morton found
 * anticipatory about 10% slower here, since waiting for one reader's next request, which lands anywhere, gives
 * away the choice of the nearest among the others' requests.
 */
@Command(name = "randomreads", mixinStandardHelpOptions = true,
        description = "Independent random readers (a database-like load), per elevator; reports anticipatory over deadline. "
                + "The job file config/jobs/randomreads.conf: each option replaces one of its keys.")
public final class RandomReadsCommand implements Callable<Integer> {
    /** The job file this command runs, in config/jobs and on the class path. */
    static final String JOB_FILE = "randomreads.conf";
    /** The longest time a job file's runtime takes: a year. */
    static final int MAX_SECONDS = 365 * 86_400;

    @Spec
    CommandSpec spec;

    @Mixin
    IoBenchOptions o;

    @Option(names = "--seconds", paramLabel = "N",
            description = "Virtual seconds per run, at most a year (default: the job file's runtime, 10).")
    Integer seconds;

    @Option(names = "--readers", paramLabel = "N",
            description = "Independent readers (default: the job file's numjobs, 16).")
    Integer readers;

    @Option(names = "--think-us", paramLabel = "N",
            description = "Microseconds a reader thinks between a completion and its next read (default: the job "
                    + "file's thinktime, 500).")
    Long thinkMicros;

    @Option(names = "--span-percent", paramLabel = "P",
            description = "Part of the disk the reads fall in, from its start, 1 to 100 (default: the job file's size, "
                    + "half the disk).")
    Integer spanPercent;

    @Option(names = "--all", description = "Run every registered elevator, not only the job file's.")
    boolean all;

    @Mixin
    PlotOption plot;

    static final List<String> COLUMNS = List.of("elevator", "reads_per_s", "read_mib_s", "latency_ms_mean", "latency_ms_p99",
            "seeks", "device_time_ms");

    @Override
    public Integer call() throws Exception {
        if (seconds != null) BadOption.within("--seconds", seconds, 1, MAX_SECONDS);
        if (readers != null) BadOption.atLeast("--readers", readers, 1);
        if (thinkMicros != null) BadOption.atLeast("--think-us", thinkMicros, 0);
        if (spanPercent != null && (spanPercent < 1 || spanPercent > 100))
            throw new BadOption("--span-percent", spanPercent, "must be from 1 to 100");
        String elevator = o.elevator(), device = o.device();
        if (all && elevator != null) throw new BadOption("--all", "--elevator " + elevator, "give --all or --elevator, not both");
        Path plots = plot.directory();
        Config config = o.config();

        String fileDevice = Workload.shipped(JOB_FILE, Map.of()).device();
        if (device != null) {
            BadOption.oneOf("--device", device, Workload.DEVICES);
            if (!device.equals(fileDevice))
                throw new BadOption("--device", device, JOB_FILE + " runs on device = " + fileDevice + ": only " + fileDevice);
        }
        long capacityBytes = new SimulatedDisk(IoSettings.fromConfig(config).disk()).capacitySectors() * 512;
        Map<String, Workload.Val> keys = new LinkedHashMap<>();
        if (elevator != null) keys.put("elevator", new Workload.Val("--elevator", elevator));
        if (given("--seed")) keys.put("seed", new Workload.Val("--seed", o.seed()));
        // A plain number is in the key's own unit (runtime: seconds; thinktime: microseconds), as the options are.
        if (seconds != null) keys.put("runtime", new Workload.Val("--seconds", seconds));
        if (readers != null) keys.put("numjobs", new Workload.Val("--readers", readers));
        if (thinkMicros != null) keys.put("thinktime", new Workload.Val("--think-us", thinkMicros));
        if (spanPercent != null) // whole 4 KiB blocks, as the reads are
            keys.put("size", new Workload.Val("--span-percent", capacityBytes / 4096 * spanPercent / 100 * 4096));
        Workload w = Workload.shipped(JOB_FILE, keys);

        List<WorkloadRun.Group> groups;
        Map<String, Object> traced = new LinkedHashMap<>();
        try (IoBench bench = new IoBench(config, null, w.device(), o.builtinOnly(), o.trace())) {
            List<String> names = all ? bench.setup.registry().ids()
                    : w.elevators().isEmpty() ? List.of(bench.setup.requestedElevator()) : w.elevators();
            for (String e : names) IoBench.checkElevator(bench.setup, e, o.builtinOnly());
            groups = new WorkloadRun(w, config, bench, names).run();
            bench.putTrace(traced, o.trace());
        }
        List<Map<String, Object>> results = new ArrayList<>();
        for (WorkloadRun.Group g : groups) results.add(row(g));
        Map<String, Object> summary = new LinkedHashMap<>();
        summary.put("device", w.device());
        Double dl = readsPerSecond(results, "deadline"), as = readsPerSecond(results, "anticipatory");
        if (dl != null && as != null && dl > 0) summary.put("anticipatory_over_deadline", Math.round(as / dl * 1000) / 1000.0);
        summary.putAll(traced);

        java.io.PrintStream table = o.json().tables();
        Report.table(table, results, COLUMNS);
        if (summary.containsKey("anticipatory_over_deadline"))
            table.println("anticipatory / deadline: " + summary.get("anticipatory_over_deadline"));
        JobSpec job = w.jobs().get(0);
        if (plots != null)
            table.println("plot: " + Plots.latencyCdf(plots, "randomreads-latency-cdf", "randomreads: read latency (clat), "
                    + job.numjobs() + " readers", "simulated ms", results, r -> (String) r.get("elevator"), "latency_cdf_ms"));
        if (o.trace() != null && results.size() > 1)
            System.err.println("note: --trace " + o.trace() + " holds the first elevator's run only");

        Map<String, Object> doc = BenchJson.document(spec, results, summary);
        @SuppressWarnings("unchecked")
        Map<String, Object> parameters = (Map<String, Object>) doc.get("parameters");
        // What ran, whether given or the job file's.
        parameters.put("seconds", job.runtimeNanos() / 1_000_000_000L);
        parameters.put("readers", job.numjobs());
        parameters.put("think_us", job.thinkNanos() / 1000);
        parameters.put("span_percent", Latency.round(100.0 * job.sizeBytes() / capacityBytes));
        parameters.putAll(w.toMap());
        parameters.put("elevator", groups.stream().map(WorkloadRun.Group::elevator).toList());
        BenchJson.write(o.json().target(), doc);
        return 0;
    }

    /** Whether {@code option} was on the command line (rather than its default). */
    private boolean given(String option) {
        CommandLine.ParseResult parsed = spec.commandLine().getParseResult();
        return parsed != null && parsed.hasMatchedOption(option);
    }

    /** An elevator's row, from its group: the readers' reads and their raw latency, the queue's and the disk's figures. */
    private static Map<String, Object> row(WorkloadRun.Group g) {
        Map<String, Object> job = g.rows().get(0), total = g.total();
        QueueStats qs = g.queue();
        Latency clat = new Latency();
        for (JobStats s : g.clones()) clat.merge(s.clat);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("workload", "randomreads");
        m.put("elevator_requested", g.elevator());
        m.put("elevator", qs.elevator());
        m.put("device", job.get("device"));
        m.put("reads_per_s", Latency.round((Double) job.get("iops")));
        m.put("read_mib_s", Latency.round((Double) job.get("mib_s")));
        m.put("latency_ms_mean", Latency.round(clat.meanMicros() / 1000));
        m.put("latency_ms_p99", Latency.round(clat.percentileMicros(99) / 1000));
        m.put("latency_cdf_ms", clat.cdf(1e6));
        m.put("seeks", total.get("seeks"));
        m.put("device_time_ms", total.get("device_time_ms"));
        IoBench.putQueueStats(m, qs);
        m.put("elevator_stats", qs.elevatorStats());
        return m;
    }

    private static Double readsPerSecond(List<Map<String, Object>> results, String elevator) {
        for (Map<String, Object> r : results)
            if (elevator.equals(r.get("elevator"))) return (Double) r.get("reads_per_s");
        return null;
    }
}
