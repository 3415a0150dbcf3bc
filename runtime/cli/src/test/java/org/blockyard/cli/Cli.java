package org.blockyard.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;

import picocli.CommandLine;

/**
 * {@code ./blockyard ARGS} in this JVM, as the launcher runs it ({@link Main#commandLine}, or the launcher's own
 * command line), with standard output and standard error captured (picocli's and the commands' own
 * {@code System.out} and {@code System.err}), each run within a deadline. The launcher's tests use it too (this
 * module's test-jar).
 */
public final class Cli {
    private Cli() {}

    public record Run(String command, int code, String out, String err) {
        /** The one line on standard error, checked to be one line, with no stack trace. */
        public String line() {
            List<String> lines = err.lines().toList();
            assertEquals(1, lines.size(), command + ": one line on standard error:\n" + err);
            assertFalse(err.contains("\tat ") || err.contains("Exception"), command + ": no stack trace: " + err);
            return lines.get(0);
        }
    }

    static Run run(String... args) {
        return run(Duration.ofSeconds(60), args);
    }

    static Run run(Duration deadline, String... args) {
        return run(Main::commandLine, deadline, args);
    }

    /** {@code args} on the command line {@code commandLine} makes, within {@code deadline}. */
    public static Run run(Supplier<CommandLine> commandLine, Duration deadline, String... args) {
        String command = String.join(" ", args);
        return assertTimeoutPreemptively(deadline, () -> execute(commandLine, command, args),
                () -> command + " did not return within " + deadline);
    }

    private static Run execute(Supplier<CommandLine> commandLine, String command, String... args) {
        PrintStream savedOut = System.out, savedErr = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream(), err = new ByteArrayOutputStream();
        try {
            PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8), e = new PrintStream(err, true, StandardCharsets.UTF_8);
            System.setOut(o);
            System.setErr(e);
            int code = commandLine.get().setOut(new PrintWriter(o, true)).setErr(new PrintWriter(e, true)).execute(args);
            return new Run(command, code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(savedOut);
            System.setErr(savedErr);
        }
    }

    /** {@code r} refused with exit code {@code code} and one line starting {@code blockyard COMMAND: }, containing every {@code part}. */
    static String refused(Run r, int code, String... parts) {
        String line = r.line();
        assertEquals(code, r.code(), r.command() + ": exit code; " + line);
        assertTrue(line.startsWith("blockyard "), line);
        assertFalse(line.contains("internal error"), r.command() + ": " + line);
        for (String p : parts) assertTrue(line.contains(p), r.command() + ": '" + p + "' in: " + line);
        return line;
    }
}
