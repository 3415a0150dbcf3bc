package org.blockyard.runtime.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import com.typesafe.config.Config;
import picocli.CommandLine.Option;

import org.blockyard.runtime.config.BlockyardConfig;

/**
 * The options every allocator benchmark shares, and the loop they drive: for each policy, one unmeasured
 * warm-up run, then {@code --runs} measured runs reduced to their median; the rows are written as JSON.
 */
public final class RunOptions {

    @Option(names = "--warmup", defaultValue = "true", negatable = true, fallbackValue = "true",
            description = "run each policy once first, unmeasured, so the JIT has compiled the hot paths (default on)")
    boolean warmup;

    @Option(names = "--runs", defaultValue = "1",
            description = "measured runs per policy; with more than one, each policy's row is the median of every figure (default ${DEFAULT-VALUE})")
    int runs;

    @Option(names = "--config", description = "a HOCON file layered over config/blockyard.conf")
    Path configFile;

    @Option(names = "--json", description = "write the figures to this file")
    Path json;

    public Config config() {
        return BlockyardConfig.load(configFile);
    }

    /** Runs {@code run} for each policy as the options say; answers one row per policy. */
    public List<Map<String, Object>> measure(List<String> policies, Function<String, Map<String, Object>> run) {
        if (runs < 1) throw new IllegalArgumentException("--runs must be at least 1");
        List<Map<String, Object>> rows = new ArrayList<>();
        for (String p : policies) {
            String policy = p.trim();
            if (warmup) run.apply(policy);
            List<Map<String, Object>> all = new ArrayList<>();
            for (int i = 0; i < runs; i++) all.add(run.apply(policy));
            rows.add(runs == 1 ? all.get(0) : Report.median(all));
        }
        return rows;
    }

    public void writeJson(List<Map<String, Object>> rows) throws IOException {
        if (json != null) Report.writeJson(json, rows.size() == 1 ? rows.get(0) : rows);
    }
}
