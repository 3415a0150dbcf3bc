package org.blockyard.cli;

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
        all.put("run", new org.blockyard.benches.job.RunCommand());
        all.put("tiobench", new org.blockyard.benches.TiobenchCommand());
        all.put("smallfiles", new org.blockyard.benches.SmallFilesCommand());
        all.put("extents", new org.blockyard.benches.ExtentsCommand());
        all.put("replay", new org.blockyard.benches.ReplayCommand());
        all.put("introspect", new org.blockyard.benches.IntrospectCommand());
        all.put("swap", new org.blockyard.benches.SwapCommand());
        all.put("stall", new org.blockyard.benches.StallCommand());
        all.put("merge", new org.blockyard.benches.io.MergeBench());
        all.put("dio", new org.blockyard.benches.io.DioBench());
        all.put("streaming", new org.blockyard.benches.io.StreamingBench());
        all.put("metadata", new org.blockyard.benches.io.MetadataBench());
        all.put("randomreads", new org.blockyard.benches.job.RandomReadsCommand());
        all.put("volume", new org.blockyard.benches.VolumeBenchCommand());
        all.put("crash", new org.blockyard.benches.CrashBenchCommand());
        all.put("powerloss", new org.blockyard.benches.PowerLossCommand());
        all.put("nbd", new NbdBenchCommand());
        all.putAll(overrides); // a name already there keeps its place
        all.forEach(bench::addSubcommand);
    }
}
