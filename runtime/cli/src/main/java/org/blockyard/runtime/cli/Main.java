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
                .addSubcommand("scheduler", new SchedulerCommand())
                .addSubcommand("mkfs", new MkfsCommand())
                .addSubcommand("fsck", new FsckCommand())
                .addSubcommand("filefrag", new FilefragCommand())
                .addSubcommand("map", new MapCommand())
                .setExecutionExceptionHandler(Main::onError);
    }

    /**
     * A wrong value (IllegalArgumentException, a refused allocator or queue call, an image that is not a
     * usable volume) is a one-line message on
     * standard error and exit code 2; anything else is an internal error, exit code 1. The stack trace is
     * printed only with BLOCKYARD_STACKTRACE=1 in the environment.
     */
    private static int onError(Exception e, CommandLine cmd, CommandLine.ParseResult parsed) {
        boolean usage = e instanceof IllegalArgumentException || e instanceof org.blockyard.api.alloc.AllocationException
                || e instanceof org.blockyard.api.io.IoException
                || e instanceof org.blockyard.runtime.volume.VolumeException;
        String what = e.getMessage() != null ? e.getMessage() : e.toString();
        cmd.getErr().println("blockyard " + cmd.getCommandName() + ": " + (usage ? "" : "internal error: ") + what);
        if ("1".equals(System.getenv("BLOCKYARD_STACKTRACE"))) e.printStackTrace(cmd.getErr());
        return usage ? 2 : 1;
    }

    public static void main(String[] args) {
        // Bind SLF4J before any actor system starts logging from its own threads, which would otherwise
        // race the initialisation and make SLF4J print a "replayed calls" notice.
        org.slf4j.LoggerFactory.getLogger(Main.class);
        int code = commandLine().execute(args);
        System.exit(code);
    }
}
