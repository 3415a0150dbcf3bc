package org.blockyard.runtime.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code blockyard} command line. */
@Command(name = "blockyard", mixinStandardHelpOptions = true, version = "Blockyard 0.1.0",
        description = "A concurrent block allocator and block-I/O stack for the JVM.")
public final class Main implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }

    public static CommandLine commandLine() {
        CommandLine bench = new CommandLine(new BenchCommand());
        BenchCommand.addWorkloads(bench);
        return new CommandLine(new Main())
                .addSubcommand("demo", new DemoCommand())
                .addSubcommand("bench", bench)
                .addSubcommand("scheduler", new SchedulerCommand());
    }

    public static void main(String[] args) {
        // Bind SLF4J before any actor system starts logging from its own threads, which would otherwise
        // race the initialisation and make SLF4J print a "replayed calls" notice.
        org.slf4j.LoggerFactory.getLogger(Main.class);
        int code = commandLine().execute(args);
        System.exit(code);
    }
}
