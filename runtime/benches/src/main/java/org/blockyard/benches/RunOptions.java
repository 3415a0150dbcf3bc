package org.blockyard.benches;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import com.typesafe.config.Config;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The options every allocator benchmark shares, and the loop they drive: one unmeasured warm-up run of every
 * policy ({@code --warmup-runs} rounds of them), then {@code --runs} rounds of one measured run of each, every
 * policy's runs reduced to their median (each rate of every run kept beside it, {@link Report#median}); the
 * rows are written as JSON ({@link BenchJson}), with a progress line on standard error while it runs. The
 * rounds interleave the policies so that none is measured while the JIT still compiles for another, or the
 * heap still holds another's garbage: run one after the other, the first policy measured paid for both
 * (smallfiles' actors made 67,000 to 149,000 files/s measured first, 169,000 to 270,000 measured after the
 * lock).
 */
public final class RunOptions {

    @Spec(Spec.Target.MIXEE)
    CommandSpec command;

    @Option(names = "--warmup", defaultValue = "true", negatable = true, fallbackValue = "true",
            description = "run every policy once first, unmeasured, before any measured run, so the JIT has compiled the hot paths of all of them (default on)")
    boolean warmup;

    @Option(names = "--warmup-runs", paramLabel = "N", defaultValue = "1",
            description = "rounds of unmeasured warm-up runs with --warmup (default ${DEFAULT-VALUE}); on two cores the"
                    + " JIT is still compiling after several, so a figure meant as a steady state wants 5 or more")
    int warmupRuns = 1;

    @Option(names = "--runs", defaultValue = "1",
            description = "measured runs per policy, in rounds of one run of each policy; with more than one, each policy's row is the median of every figure (default ${DEFAULT-VALUE})")
    int runs;

    @Option(names = "--config", paramLabel = "FILE", description = "a HOCON file layered over config/blockyard.conf")
    Path configFile;

    @Mixin
    public JsonOutput json;

    @Option(names = {"-q", "--quiet"}, description = "no progress line on standard error")
    public boolean quiet;

    @Option(names = "--progress", paramLabel = "SECONDS", defaultValue = "5",
            description = "seconds between progress lines on standard error (default ${DEFAULT-VALUE}; 0 = none)")
    double progressSeconds;

    private volatile String status = "starting";

    public Config config() {
        return BadOption.config(configFile);
    }

    /** Where tables and notes go: standard output, or standard error when it carries the JSON. */
    public PrintStream out() {
        return json.tables();
    }

    /** The progress line, running until closed; what it says is set with {@link #status}. */
    public Progress progress() {
        if (!(progressSeconds >= 0)) throw new BadOption("--progress", progressSeconds, "must be 0 or more seconds");
        return Progress.start(command != null ? command.name() : "bench", quiet ? 0 : progressSeconds, () -> status);
    }

    public void status(String what) {
        status = what;
    }

    /** Runs {@code run} for each policy as the options say; answers one row per policy. */
    public List<Map<String, Object>> measure(List<String> policies, Function<String, Map<String, Object>> run) {
        BadOption.atLeast("--runs", runs, 1);
        BadOption.atLeast("--warmup-runs", warmupRuns, 1);
        List<String> names = policies.stream().map(String::trim).toList();
        List<List<Map<String, Object>>> all = new ArrayList<>();
        for (int k = 0; k < names.size(); k++) all.add(new ArrayList<>());
        int warmups = warmup ? warmupRuns : 0;
        int total = names.size() * (runs + warmups), done = 0;
        try (Progress p = progress()) {
            for (int i = 0; i < warmups; i++) {
                for (String policy : names) {
                    status(progress(done, total, policy + " (warm-up)"));
                    run.apply(policy);
                    done++;
                }
            }
            for (int i = 0; i < runs; i++) {
                for (int k = 0; k < names.size(); k++) {
                    status(progress(done, total, names.get(k)));
                    String policy = names.get(k);
                    all.get(k).add(withJit(() -> run.apply(policy)));
                    done++;
                }
            }
        }
        List<Map<String, Object>> rows = new ArrayList<>();
        for (List<Map<String, Object>> runsOfOne : all) rows.add(runs == 1 ? runsOfOne.get(0) : Report.median(runsOfOne));
        return rows;
    }

    private static final java.lang.management.CompilationMXBean JIT = java.lang.management.ManagementFactory.getCompilationMXBean();

    /**
     * The run's row with {@code jit_ms}: the time the JIT's compiler threads spent compiling while it ran (their
     * own CPU time, on cores the run needed too): how far from warm this process still was.
     */
    private static Map<String, Object> withJit(java.util.function.Supplier<Map<String, Object>> run) {
        boolean known = JIT != null && JIT.isCompilationTimeMonitoringSupported();
        long before = known ? JIT.getTotalCompilationTime() : 0;
        Map<String, Object> row = run.get();
        if (known && row != null) row.put("jit_ms", (double) (JIT.getTotalCompilationTime() - before));
        return row;
    }

    private static String progress(int done, int total, String running) {
        return done + " of " + total + " runs done (" + (100 * done / Math.max(1, total)) + "%), running " + running;
    }

    /** The rows as the one JSON document of every benchmark, when JSON was asked for ({@link JsonOutput}). */
    public void writeJson(List<Map<String, Object>> rows) throws IOException {
        writeJson(rows, null);
    }

    public void writeJson(List<Map<String, Object>> rows, Map<String, Object> summary) throws IOException {
        json.write(command, rows, summary);
    }
}
