package org.blockyard.benches.job;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Unmatched;

import org.blockyard.benches.BadOption;
import org.blockyard.benches.BenchJson;
import org.blockyard.benches.JsonOutput;
import org.blockyard.benches.Latency;
import org.blockyard.benches.Progress;
import org.blockyard.benches.Report;
import org.blockyard.benches.Sizes;
import org.blockyard.benches.job.JobSpec.Engine;
import org.blockyard.benches.io.IoBench;

/** {@code blockyard bench run [JOBFILE] [--KEY=VALUE...]}: a workload file, or one job from options. */
@Command(name = "run", mixinStandardHelpOptions = true,
        description = {"Run the jobs of a workload file (HOCON in fio's vocabulary: docs/jobs.md; examples in config/jobs), "
                + "or one job given as options (--rw=randread --bs=4k --size=64MiB); every job key is also an option "
                + "--KEY=VALUE: it replaces the key wherever the file sets it (global and every job), and a wrong value is an "
                + "error even where no job would use it.",
                "Prints per job and in total: IOPS and MiB/s, slat and clat percentiles, request sizes, merges, queue "
                + "depth, CPU time, and on the simulated disk seeks and device time."})
public final class RunCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", arity = "0..1", paramLabel = "JOBFILE", description = "the workload file (docs/jobs.md)")
    Path jobFile;

    @Option(names = "--device", paramLabel = "sim|mem|file",
            description = "device under the queue (default: the file's global device, else blockyard.io.device); sim runs on the virtual clock")
    String device;

    @Option(names = "--elevator", paramLabel = "NAMES", split = ",",
            description = "elevators, comma-separated: the jobs run once per elevator (default: the file's global elevator, else blockyard.io.scheduler)")
    List<String> elevators;

    @Option(names = "--seed", paramLabel = "N", description = "seed of offsets, sizes and mixes (default: the file's, else 1)")
    Long seed;

    @Option(names = "--config", paramLabel = "FILE", description = "a HOCON file layered over config/blockyard.conf")
    Path configFile;

    @Option(names = "--builtin-only", description = "leave out the plugin elevators (anticipatory, cfq, fifo and --deploy's)")
    boolean builtinOnly;

    @Mixin
    org.blockyard.benches.DeployOption deploy;

    @Option(names = "--trace", paramLabel = "FILE", description = "write a blktrace of the first elevator's run to FILE")
    Path trace;

    @Mixin
    JsonOutput output;

    @Option(names = {"-q", "--quiet"}, description = "nothing on standard error but errors: no status line, no notes")
    boolean quiet;

    @Option(names = "--status-interval", paramLabel = "SECONDS", defaultValue = "5",
            description = "seconds between status lines on standard error (default ${DEFAULT-VALUE}; 0 = none)")
    double statusSeconds;

    /** Job keys as options: {@code --bs=4k}. */
    @Unmatched
    List<String> keys = new ArrayList<>();

    @Override
    public Integer call() throws Exception {
        if (!(statusSeconds >= 0)) throw new BadOption("--status-interval", statusSeconds, "must be 0 or more seconds");
        Map<String, String> options = new LinkedHashMap<>();
        for (String k : keys) {
            int eq = k.indexOf('=');
            if (!k.startsWith("--") || eq < 3)
                throw new BadOption(k, k, "a job key is given as --KEY=VALUE, such as --bs=4k (docs/jobs.md)");
            options.put(k.substring(2, eq).toLowerCase(Locale.ROOT), k.substring(eq + 1));
        }
        if (device != null) options.put("device", device);
        if (elevators != null) options.put("elevator", String.join(",", elevators));
        if (seed != null) options.put("seed", Long.toString(seed));
        Workload w = Workload.read(jobFile, options);

        Map<String, Object> io = new HashMap<>();
        if (w.filename() != null) io.put("blockyard.io.file.path", w.filename());
        if (w.deviceSizeBytes() != null) {
            io.put("blockyard.io.file.size", w.deviceSizeBytes());
            io.put("blockyard.io.memory.size", w.deviceSizeBytes());
        }
        if (w.direct() != null) io.put("blockyard.io.file.direct", w.direct());
        Config config = deploy.applyTo(ConfigFactory.parseMap(io).withFallback(BadOption.config(configFile)));
        boolean queueJobs = w.jobs().stream().anyMatch(j -> j.engine() == Engine.QUEUE);
        List<Map<String, Object>> results = new ArrayList<>();
        List<WorkloadRun.Group> groups;
        long cpu0 = org.blockyard.benches.Tiobench.processCpuNanos(), wall0 = System.nanoTime();
        try (IoBench bench = new IoBench(config, null, w.device(), builtinOnly, trace)) {
            List<String> names = w.elevators().isEmpty() ? List.of(bench.setup.requestedElevator()) : w.elevators();
            for (String e : names) IoBench.checkElevator(bench.setup, e, builtinOnly);
            // Without queue jobs the elevator changes nothing: one group.
            if (!queueJobs) names = names.subList(0, 1);
            WorkloadRun run = new WorkloadRun(w, config, bench, names);
            try (Progress p = Progress.start("run", quiet ? 0 : statusSeconds, run.status())) {
                groups = run.run();
            }
            for (WorkloadRun.Group g : groups) results.addAll(g.rows());
            if (trace != null && !groups.isEmpty()) {
                List<Map<String, Object>> first = groups.get(0).rows();
                bench.putTrace(first.get(first.size() - 1), trace); // the first group's total row
                if (groups.size() > 1 && !quiet) System.err.println("note: --trace " + trace + " holds the first elevator's run only");
            }
        }
        Path json = output.target();
        boolean tables = !(quiet && BenchJson.toStdout(json));
        if (tables) print(BenchJson.tables(json), w, groups);
        Map<String, Object> doc = BenchJson.document(spec, results, summary(groups, cpu0, wall0));
        @SuppressWarnings("unchecked")
        Map<String, Object> parameters = (Map<String, Object>) doc.get("parameters");
        parameters.remove("status_interval"); // where output goes, not what was measured
        parameters.putAll(w.toMap());
        parameters.put("device", groups.isEmpty() ? w.device() : groups.get(0).rows().get(0).get("device"));
        parameters.put("elevator", groups.stream().map(WorkloadRun.Group::elevator).filter(e -> e != null).toList());
        BenchJson.write(json, doc);
        return 0;
    }

    private static Map<String, Object> summary(List<WorkloadRun.Group> groups, long cpu0, long wall0) {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("groups", groups.size());
        s.put("wall_s", Latency.round((System.nanoTime() - wall0) / 1e9));
        s.put("cpu_s", Latency.round((org.blockyard.benches.Tiobench.processCpuNanos() - cpu0) / 1e9));
        s.put("latency_correction", CORRECTION);
        return s;
    }

    static final String CORRECTION = "clat_us and lat_us: corrected for coordinated omission as closed-loop clients "
            + "(expected interval: each clone's mean interval between calls per slot); slat_us: not corrected (a hand-over, "
            + "not a call)";

    static final List<String> QUEUE_COLUMNS = List.of("job", "rw", "bs", "iodepth", "numjobs", "ios", "iops", "mib_s",
            "slat_us.raw.p50", "slat_us.raw.p99", "clat_us.raw.p50", "clat_us.raw.p90", "clat_us.raw.p99",
            "clat_us.raw.p999", "clat_us.raw.p9999", "clat_us.raw.max", "clat_us.corrected.p99", "clat_us.corrected.p999",
            "clat_us.corrected.p9999", "request_bytes_mean", "device_request_bytes_mean", "merged", "depth_max");
    static final List<String> FILES_COLUMNS = List.of("job", "bs", "iodepth", "numjobs", "files_opened", "calls",
            "calls_per_s", "mib_s", "lat_us.raw.p50", "lat_us.raw.p99", "lat_us.raw.p999", "lat_us.raw.max",
            "lat_us.corrected.p99", "lat_us.corrected.p999", "extents_per_file", "truncates", "enospc");
    static final List<String> EXTENTS_COLUMNS = List.of("job", "bs", "iodepth", "numjobs", "calls", "calls_per_s",
            "mib_s", "lat_us.raw.p50", "lat_us.raw.p99", "lat_us.raw.p999", "lat_us.raw.max", "lat_us.corrected.p99",
            "lat_us.corrected.p999", "releases", "split_pct", "extents_per_split", "short_allocations", "enospc");

    /** Per group: a table per kind of job (transposed when wide), then the group's queue, disk, volume and CPU. */
    static void print(PrintStream out, Workload w, List<WorkloadRun.Group> groups) {
        boolean first = true;
        for (WorkloadRun.Group g : groups) {
            if (!first) out.println();
            first = false;
            Map<String, Object> t = g.total();
            String device = String.valueOf(g.rows().get(0).get("device"));
            if (g.elevator() != null)
                out.println("elevator " + g.elevator() + ", device " + device
                        + (t.containsKey("virtual_s") ? " (virtual time: " + Report.format(t.get("virtual_s")) + " s)" : ""));
            else
                out.println("allocation jobs, on a volume of " + Sizes.format((Long) t.get("volume_bytes")).replace(" ", ""));
            for (Engine e : Engine.values()) {
                List<Map<String, Object>> rows = new ArrayList<>();
                for (int i = 0; i < w.jobs().size(); i++) if (w.jobs().get(i).engine() == e) rows.add(g.rows().get(i));
                if (rows.isEmpty()) continue;
                List<String> columns = e == Engine.QUEUE ? QUEUE_COLUMNS : e == Engine.FILES ? FILES_COLUMNS : EXTENTS_COLUMNS;
                if (e == Engine.QUEUE) {
                    if (rows.size() > 1) rows.add(g.rows().get(g.rows().size() - 1));
                    if (device.equals("sim")) columns = columns.stream().filter(c -> !c.startsWith("slat")).toList();
                }
                out.println();
                Report.table(out, rows, columns);
            }
            out.println();
            if (t.containsKey("submissions")) {
                out.println("queue: " + Report.format(t.get("submissions")) + " submissions in "
                        + Report.format(t.get("requests_dispatched")) + " requests (" + Report.format(
                        (Double) t.get("mean_request_sectors") / 2) + " KiB mean, "
                        + Report.format((Integer) t.get("max_request_sectors") / 2.0) + " KiB at most)");
                out.println("merges: " + Report.format(t.get("merges")) + " (" + Report.format(t.get("back_merges")) + " back, "
                        + Report.format(t.get("front_merges")) + " front, " + Report.format(t.get("coalesced")) + " coalesced)");
            }
            if (t.containsKey("seeks"))
                out.println("disk: " + Report.format(t.get("seeks")) + " seeks, " + Report.format(t.get("device_time_ms"))
                        + " ms busy (" + Report.format(t.get("device_busy_pct")) + "% of the virtual time)");
            if (t.containsKey("volume_bytes"))
                out.println("volume: " + Sizes.format((Long) t.get("volume_bytes")).replace(" ", "") + ", "
                        + Report.format(t.get("volume_used_bytes")) + " bytes in use at the end, score_v3 "
                        + Report.format(t.get("score_v3")));
            out.println("cpu: " + Report.format(t.get("cpu_s")) + " s in " + Report.format(t.get("wall_s"))
                    + " s of wall time (" + Report.format(t.get("cpu_pct")) + "% of " + Runtime.getRuntime().availableProcessors()
                    + " cores, the whole process)");
        }
        out.println();
        out.println("Latencies in µs. clat_us and lat_us are corrected for coordinated omission as closed-loop clients");
        out.println("(expected interval: each clone's mean interval between calls per slot); slat_us is not (a hand-over,");
        out.println("not a call)" + (groups.stream().anyMatch(g -> g.total().containsKey("virtual_s"))
                ? ", and there is none on the simulated disk, where a hand-over takes no time." : "."));
    }
}
