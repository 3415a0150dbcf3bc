package org.blockyard.runtime.cli;

import java.util.LinkedHashMap;
import java.util.Map;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code blockyard bench WORKLOAD}: message-driven load tests that print a table and write JSON. */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = "Run a load test; each prints a table and, with --json, writes its figures.")
public final class BenchCommand implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }

    /** The engine's workloads under {@code bench}, in this order; one of {@code overrides} replaces its namesake. */
    static void addWorkloads(CommandLine bench, Map<String, Object> overrides) {
        Map<String, Object> all = new LinkedHashMap<>();
        all.put("run", new org.blockyard.runtime.bench.job.RunCommand());
        all.put("tiobench", new org.blockyard.runtime.bench.TiobenchCommand());
        all.put("smallfiles", new org.blockyard.runtime.bench.SmallFilesCommand());
        all.put("extents", new org.blockyard.runtime.bench.ExtentsCommand());
        all.put("replay", new org.blockyard.runtime.bench.ReplayCommand());
        all.put("introspect", new org.blockyard.runtime.bench.IntrospectCommand());
        all.put("swap", new org.blockyard.runtime.bench.SwapCommand());
        all.put("stall", new org.blockyard.runtime.bench.StallCommand());
        all.put("merge", new org.blockyard.runtime.io.bench.MergeBench());
        all.put("dio", new org.blockyard.runtime.io.bench.DioBench());
        all.put("streaming", new org.blockyard.runtime.io.bench.StreamingBench());
        all.put("metadata", new org.blockyard.runtime.io.bench.MetadataBench());
        all.put("randomreads", new org.blockyard.runtime.io.bench.RandomReadsBench());
        all.put("volume", new org.blockyard.runtime.bench.VolumeBenchCommand());
        all.put("crash", new org.blockyard.runtime.bench.CrashBenchCommand());
        all.put("powerloss", new org.blockyard.runtime.bench.PowerLossCommand());
        all.putAll(overrides); // a name already there keeps its place
        all.forEach(bench::addSubcommand);
    }
}
