package org.blockyard.runtime.cli;

import java.util.concurrent.CompletionException;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;

/** The {@code blockyard} command line. */
@Command(name = "blockyard", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "A concurrent block allocator and block-I/O stack for the JVM.")
public final class Main implements Runnable {

    /** The version every command and subcommand prints with {@code --version} or {@code -V}. */
    public static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = Main.class.getPackage().getImplementationVersion();
            return new String[] {"Blockyard " + (v != null ? v : "0.1.0-SNAPSHOT") + " (Java " + Runtime.version() + ")"};
        }
    }

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--debug", scope = ScopeType.INHERIT,
            description = "On an error, print the stack trace too (as BLOCKYARD_STACKTRACE=1 does).")
    boolean debug;

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }

    /** The command line with every engine command; {@link #configure} is already applied. */
    public static CommandLine commandLine() {
        CommandLine bench = new CommandLine(new BenchCommand());
        BenchCommand.addWorkloads(bench);
        return configure(new CommandLine(new Main())
                .addSubcommand("demo", new DemoCommand())
                .addSubcommand("bench", bench)
                .addSubcommand("scheduler", new SchedulerCommand())
                .addSubcommand("mkfs", new MkfsCommand())
                .addSubcommand("fsck", new FsckCommand())
                .addSubcommand("filefrag", new FilefragCommand())
                .addSubcommand("map", new MapCommand()));
    }

    /**
     * Gives {@code root} and every command under it the version, {@code --debug} and the error handling of
     * {@link #onError}; call it again after adding commands (the host adds {@code run}).
     */
    public static CommandLine configure(CommandLine root) {
        root.setExecutionExceptionHandler(Main::onError);
        root.setParameterExceptionHandler(Main::onParameterError);
        versionEverywhere(root);
        return root;
    }

    private static void versionEverywhere(CommandLine cmd) {
        cmd.getCommandSpec().versionProvider(new Version());
        for (CommandLine sub : cmd.getSubcommands().values()) versionEverywhere(sub);
    }

    /** A parse error (unknown option, a value of the wrong type): one line and exit code 2, no usage. */
    private static int onParameterError(CommandLine.ParameterException e, String[] args) {
        CommandLine cmd = e.getCommandLine();
        cmd.getErr().println(cmd.getCommandSpec().qualifiedName() + ": " + e.getMessage() + " (see --help)");
        if (debug(args)) e.printStackTrace(cmd.getErr());
        cmd.getErr().flush();
        return 2;
    }

    /**
     * A wrong value (IllegalArgumentException, such as a {@code BadOption}; a refused allocator or queue call;
     * an image that is not a usable volume; a configuration that does not hold) is a one-line message on
     * standard error and exit code 2; anything else is an internal error, exit code 1. The stack trace is
     * printed only with {@code --debug}, or BLOCKYARD_STACKTRACE=1 in the environment.
     */
    private static int onError(Exception thrown, CommandLine cmd, CommandLine.ParseResult parsed) {
        Throwable e = thrown;
        while (e instanceof CompletionException && e.getCause() != null) e = e.getCause();
        boolean usage = e instanceof IllegalArgumentException || e instanceof org.blockyard.api.alloc.AllocationException
                || e instanceof org.blockyard.api.io.IoException
                || e instanceof org.blockyard.runtime.volume.VolumeException
                || e instanceof com.typesafe.config.ConfigException;
        String what = e.getMessage() != null ? e.getMessage() : e.toString();
        int nl = what.indexOf('\n');
        if (nl >= 0) what = what.substring(0, nl);
        cmd.getErr().println(cmd.getCommandSpec().qualifiedName() + ": " + (usage ? "" : "internal error: ") + what);
        if (debug(parsed)) e.printStackTrace(cmd.getErr());
        cmd.getErr().flush();
        return usage ? 2 : 1;
    }

    private static boolean debug(CommandLine.ParseResult parsed) {
        if ("1".equals(System.getenv("BLOCKYARD_STACKTRACE"))) return true;
        for (CommandLine.ParseResult p = parsed; p != null; p = p.subcommand())
            if (p.hasMatchedOption("--debug")) return true;
        return false;
    }

    private static boolean debug(String[] args) {
        if ("1".equals(System.getenv("BLOCKYARD_STACKTRACE"))) return true;
        for (String a : args) if (a.equals("--debug")) return true;
        return false;
    }

    public static void main(String[] args) {
        // Bind SLF4J before any actor system starts logging from its own threads, which would otherwise
        // race the initialisation and make SLF4J print a "replayed calls" notice.
        org.slf4j.LoggerFactory.getLogger(Main.class);
        int code = commandLine().execute(args);
        System.exit(code);
    }
}
