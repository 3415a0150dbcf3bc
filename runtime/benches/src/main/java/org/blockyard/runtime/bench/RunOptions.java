package org.blockyard.runtime.bench;

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
 * The options every allocator benchmark shares, and the loop they drive: for each policy, one unmeasured
 * warm-up run, then {@code --runs} measured runs reduced to their median; the rows are written as JSON
 * ({@link BenchJson}), with a progress line on standard error while it runs.
 */
public final class RunOptions {

    @Spec(Spec.Target.MIXEE)
    CommandSpec command;

    @Option(names = "--warmup", defaultValue = "true", negatable = true, fallbackValue = "true",
            description = "run each policy once first, unmeasured, so the JIT has compiled the hot paths (default on)")
    boolean warmup;

    @Option(names = "--runs", defaultValue = "1",
            description = "measured runs per policy; with more than one, each policy's row is the median of every figure (default ${DEFAULT-VALUE})")
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
        List<Map<String, Object>> rows = new ArrayList<>();
        int total = policies.size() * (runs + (warmup ? 1 : 0)), done = 0;
        try (Progress p = progress()) {
            for (String raw : policies) {
                String policy = raw.trim();
                if (warmup) {
                    status(progress(done, total, policy + " (warm-up)"));
                    run.apply(policy);
                    done++;
                }
                List<Map<String, Object>> all = new ArrayList<>();
                for (int i = 0; i < runs; i++) {
                    status(progress(done, total, policy));
                    all.add(run.apply(policy));
                    done++;
                }
                rows.add(runs == 1 ? all.get(0) : Report.median(all));
            }
        }
        return rows;
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
