package org.blockyard.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletionException;

import org.blockyard.benches.BadOption;
import org.blockyard.benches.Sizes;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;

/** The {@code blockyard} command line. */
@Command(name = "blockyard", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "A concurrent block allocator and block-I/O stack for the JVM.")
public final class Main implements Runnable {

    /** Exit code of a wrong value or a refused call: nothing was done. */
    public static final int USAGE = 2;

    /**
     * Exit code of an I/O that failed while a command worked (no space left on the device or file system under
     * an image, an I/O error): something may have been written. e2fsck's code for an operational error, so
     * that fsck's own 0, 1 and 4 keep their meaning.
     */
    public static final int IO_ERROR = 8;

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
        return commandLine(Map.of(), Map.of());
    }

    /**
     * The command line with every engine command, then {@code commands} after them, and {@code workloads} under
     * {@code bench}, each in the place of the engine's workload of its name (the launcher gives the host's
     * {@code run} and its {@code bench swap} with bundle events); {@link #configure} is already applied.
     */
    public static CommandLine commandLine(Map<String, Object> commands, Map<String, Object> workloads) {
        CommandLine bench = new CommandLine(new BenchCommand());
        BenchCommand.addWorkloads(bench, workloads);
        CommandLine root = new CommandLine(new Main())
                .addSubcommand("demo", new DemoCommand())
                .addSubcommand("bench", bench)
                .addSubcommand("scheduler", new SchedulerCommand())
                .addSubcommand("mkfs", new MkfsCommand())
                .addSubcommand("fsck", new FsckCommand())
                .addSubcommand("filefrag", new FilefragCommand())
                .addSubcommand("map", new MapCommand())
                .addSubcommand("serve", new ServeCommand())
                .addSubcommand("export", new ExportCommand());
        commands.forEach(root::addSubcommand);
        return configure(root);
    }

    /**
     * Gives {@code root} and every command under it the version, {@code --debug} and the error handling of
     * {@link #onError}.
     */
    static CommandLine configure(CommandLine root) {
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
     * Every error is one line on standard error, the command's name and the message's first line. A wrong value
     * (IllegalArgumentException, such as a {@code BadOption}; a refused allocator or queue call; an image that is
     * not a usable volume: not a volume, not a file or block device, one that cannot be opened, one in use; a
     * configuration that does not hold; a path the system refuses: no such file or directory, permission denied,
     * not a directory, is a directory, a read-only file system) is exit code {@value #USAGE}. An I/O that failed
     * on the way ({@code IOException}, a device's error, a journal that could not be written: a full file system
     * under the image or an output file) is exit code {@value #IO_ERROR}, its line naming the path and why
     * ({@code out.json: no space left on device}). Anything else is an internal error, exit code 1. A size option
     * refused is quoted as the user wrote it. The stack trace is printed only with {@code --debug}, or
     * BLOCKYARD_STACKTRACE=1 in the environment.
     */
    private static int onError(Exception thrown, CommandLine cmd, CommandLine.ParseResult parsed) {
        Throwable e = thrown;
        while (e instanceof CompletionException && e.getCause() != null) e = e.getCause();
        e = asWritten(e, cmd);
        int code = exitCode(e);
        String what = message(e);
        int nl = what.indexOf('\n');
        if (nl >= 0) what = what.substring(0, nl);
        cmd.getErr().println(cmd.getCommandSpec().qualifiedName() + ": " + (code == 1 ? "internal error: " : "") + what);
        if (debug(parsed)) e.printStackTrace(cmd.getErr());
        cmd.getErr().flush();
        return code;
    }

    /**
     * The line for {@code e}: its message; for an I/O that failed, the path and why ({@code PATH: permission
     * denied}), and the reason of the I/O error under it when the message does not already say it.
     */
    static String message(Throwable e) {
        String what = e.getMessage() != null ? e.getMessage() : e.toString();
        if (e instanceof FileSystemException f && f.getFile() != null)
            return f.getFile() + (f.getOtherFile() != null ? " -> " + f.getOtherFile() : "") + ": " + BadOption.reason(f);
        IOException io = ioCause(e);
        if (io != null && io != e) {
            String why = BadOption.reason(io);
            if (io instanceof FileSystemException f && f.getFile() != null && !what.contains(f.getFile()))
                why = f.getFile() + ": " + why;
            String reason = BadOption.reason(io);
            int at = what.toLowerCase(Locale.ROOT).indexOf(reason.toLowerCase(Locale.ROOT));
            what = at < 0 ? what + ": " + why : what.substring(0, at) + reason + what.substring(at + reason.length());
        }
        return what;
    }

    /** The IOException {@code e} is or carries (an UncheckedIOException's, a wrapped cause), or null. */
    private static IOException ioCause(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause())
            if (c instanceof IOException io) return io;
        return null;
    }

    /**
     * A {@link BadOption} on a size option quoting the bytes, given back quoting the value as it was written
     * ({@code --file-size '16MB'}, not {@code '16777216'}): the text of the option on the command line (one of
     * a comma-separated list), or its default, that reads as those bytes.
     */
    static Throwable asWritten(Throwable e, CommandLine cmd) {
        if (!(e instanceof BadOption b) || !(b.value() instanceof Number n)) return e;
        CommandLine.Model.OptionSpec o = cmd.getCommandSpec().findOption(b.option());
        if (o == null || o.converters() == null || java.util.Arrays.stream(o.converters()).noneMatch(c -> c instanceof Sizes.Converter))
            return e;
        CommandLine.ParseResult pr = cmd.getParseResult();
        CommandLine.Model.OptionSpec matched = pr != null ? pr.matchedOption(b.option()) : null;
        List<String> texts = matched != null ? matched.originalStringValues()
                : o.defaultValue() != null ? List.of(o.defaultValue()) : List.of();
        for (String text : texts) {
            for (String piece : o.splitRegex().isEmpty() ? new String[] {text} : text.split(o.splitRegex())) {
                try {
                    if (Sizes.parse(piece) == n.longValue()) return b.quoting(piece.trim());
                } catch (IllegalArgumentException notThisOne) {
                    // a piece that is not a size cannot be the one refused
                }
            }
        }
        return e;
    }

    /** {@value #USAGE}, {@value #IO_ERROR} or 1 for {@code e}, as {@link #onError} says. */
    static int exitCode(Throwable e) {
        IOException io = ioCause(e);
        if (e instanceof java.io.IOException || e instanceof UncheckedIOException)
            return refusedPath(io) ? USAGE : IO_ERROR;
        if (e instanceof org.blockyard.api.io.IoException.DeviceError
                || e instanceof org.blockyard.runtime.volume.VolumeException.JournalFailed)
            return IO_ERROR;
        if (e instanceof IllegalArgumentException || e instanceof org.blockyard.api.alloc.AllocationException
                || e instanceof org.blockyard.api.io.IoException
                || e instanceof org.blockyard.runtime.volume.VolumeException
                || e instanceof com.typesafe.config.ConfigException)
            return USAGE;
        if (io != null) return refusedPath(io) ? USAGE : IO_ERROR; // an I/O failure another error carries
        return 1;
    }

    /** A path the system refuses to open or make as asked: the user named a wrong one. */
    private static boolean refusedPath(IOException io) {
        if (io instanceof AccessDeniedException || io instanceof NoSuchFileException || io instanceof NotDirectoryException
                || io instanceof FileAlreadyExistsException || io instanceof java.io.FileNotFoundException)
            return true;
        if (!(io instanceof FileSystemException f) || f.getReason() == null) return false;
        String why = f.getReason().toLowerCase(Locale.ROOT);
        return why.contains("is a directory") || why.contains("read-only file system") || why.contains("operation not permitted");
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
