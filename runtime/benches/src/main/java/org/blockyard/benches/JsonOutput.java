package org.blockyard.benches;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Stack;

import picocli.CommandLine.IParameterConsumer;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/**
 * Where a bench's JSON document goes ({@link BenchJson}), the options of every bench: {@code --json FILE},
 * {@code --json -} for standard output, or {@code --output-format json}, which is {@code --json -} in the
 * words of other tools. When standard output carries the JSON it carries nothing else: tables and notes go
 * to {@link #tables()}, standard error. The two options name one destination, so a file with
 * {@code --output-format json}, or {@code --json -} with {@code --output-format table}, is refused while
 * the command line is read, before anything runs; so is a file that cannot be written (a directory, one in a
 * missing directory, one this process may not make: {@link BadOption#outputFile}).
 */
public final class JsonOutput {
    static final List<String> FORMATS = List.of("table", "json");

    @Option(names = "--json", paramLabel = "FILE", parameterConsumer = Check.class,
            description = "write the figures as JSON to FILE; '-' for standard output, which then carries nothing else (docs/json.md)")
    Path file;

    @Option(names = "--output-format", paramLabel = "table|json", parameterConsumer = Check.class,
            description = "json: only the JSON document on standard output, as --json - (tables to standard error); "
                    + "table: the tables on standard output (the default)")
    String format; // null: not given (tables)

    /** Takes the value of either option, and refuses a wrong format or a contradiction as the command line is read. */
    static final class Check implements IParameterConsumer {
        @Override
        public void consumeParameters(Stack<String> args, ArgSpec arg, CommandSpec command) {
            String option = ((OptionSpec) arg).longestName();
            if (args.isEmpty())
                throw new ParameterException(command.commandLine(), option + ": a value is needed (" + arg.paramLabel() + ")");
            String value = args.pop();
            boolean json = option.equals("--json");
            if (!json && !FORMATS.contains(value))
                throw refused(command, new BadOption("--output-format", value, "allowed are " + String.join(", ", FORMATS)));
            Path file = json ? Path.of(value) : command.findOption("--json").getValue();
            if (json && !BenchJson.toStdout(file)) {
                try {
                    BadOption.outputFile("--json", file);
                } catch (BadOption b) {
                    throw refused(command, b);
                }
            }
            String format = json ? command.findOption("--output-format").getValue() : value;
            if ("json".equals(format) && file != null && !BenchJson.toStdout(file))
                throw refused(command, new BadOption("--output-format", format, "puts the JSON on standard output; --json "
                        + file + " writes it to a file: give one of them"));
            if ("table".equals(format) && BenchJson.toStdout(file))
                throw refused(command, new BadOption("--output-format", format,
                        "puts the tables on standard output, where --json - puts the JSON"));
            arg.setValue(json ? file : value);
        }

        private static ParameterException refused(CommandSpec command, BadOption why) {
            return new ParameterException(command.commandLine(), why.getMessage());
        }
    }

    /** The JSON's destination: a file, {@code -} for standard output, or null for none. */
    public Path target() {
        return "json".equals(format) ? Path.of("-") : file;
    }

    /** True when the JSON goes to standard output. */
    public boolean toStdout() {
        return BenchJson.toStdout(target());
    }

    /** Where tables and notes go: standard output, or standard error when it carries the JSON. */
    public PrintStream tables() {
        return BenchJson.tables(target());
    }

    /**
     * The rows (and a summary, or null) as the one JSON document of every bench, when JSON was asked for;
     * {@code bench} is the command that ran (this mixin may sit inside another, such as {@link RunOptions}).
     */
    public void write(CommandSpec bench, List<Map<String, Object>> rows, Map<String, Object> summary) throws IOException {
        Path to = target();
        if (to != null) BenchJson.write(to, BenchJson.document(bench, rows, summary));
    }
}
