package org.blockyard.runtime.cli;

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

    static void addWorkloads(CommandLine bench) {
        bench.addSubcommand("run", new org.blockyard.runtime.bench.job.RunCommand());
        bench.addSubcommand("tiobench", new org.blockyard.runtime.bench.TiobenchCommand());
        bench.addSubcommand("smallfiles", new org.blockyard.runtime.bench.SmallFilesCommand());
        bench.addSubcommand("extents", new org.blockyard.runtime.bench.ExtentsCommand());
        bench.addSubcommand("replay", new org.blockyard.runtime.bench.ReplayCommand());
        bench.addSubcommand("introspect", new org.blockyard.runtime.bench.IntrospectCommand());
        bench.addSubcommand("swap", new org.blockyard.runtime.bench.SwapCommand());
        bench.addSubcommand("stall", new org.blockyard.runtime.bench.StallCommand());
        bench.addSubcommand("merge", new org.blockyard.runtime.io.bench.MergeBench());
        bench.addSubcommand("dio", new org.blockyard.runtime.io.bench.DioBench());
        bench.addSubcommand("streaming", new org.blockyard.runtime.io.bench.StreamingBench());
        bench.addSubcommand("metadata", new org.blockyard.runtime.io.bench.MetadataBench());
        bench.addSubcommand("randomreads", new org.blockyard.runtime.io.bench.RandomReadsBench());
        bench.addSubcommand("volume", new org.blockyard.runtime.bench.VolumeBenchCommand());
        bench.addSubcommand("crash", new org.blockyard.runtime.bench.CrashBenchCommand());
        bench.addSubcommand("powerloss", new org.blockyard.runtime.bench.PowerLossCommand());
    }
}
