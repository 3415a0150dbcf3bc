package org.blockyard.runtime.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * Where a bench's JSON document goes ({@link BenchJson}), the options of every bench: {@code --json FILE},
 * {@code --json -} for standard output, or {@code --output-format json}, which is {@code --json -} in the
 * words of other tools. When standard output carries the JSON it carries nothing else: tables and notes go
 * to {@link #tables()}, standard error. The two options name one destination, so a file with
 * {@code --output-format json}, or {@code --json -} with {@code --output-format table}, is refused while
 * the command line is read, before anything runs.
 */
public final class JsonOutput {
    static final List<String> FORMATS = List.of("table", "json");

    @Spec(Spec.Target.MIXEE)
    CommandSpec command;

    private Path file;
    private String format; // null: not given (tables)

    @Option(names = "--json", paramLabel = "FILE",
            description = "write the figures as JSON to FILE; '-' for standard output, which then carries nothing else (docs/json.md)")
    void json(Path file) {
        this.file = file;
        refuseBoth();
    }

    @Option(names = "--output-format", paramLabel = "table|json",
            description = "json: only the JSON document on standard output, as --json - (tables to standard error); "
                    + "table: the tables on standard output (the default)")
    void outputFormat(String format) {
        if (format != null && !FORMATS.contains(format))
            throw refused(new BadOption("--output-format", format, "allowed are " + String.join(", ", FORMATS)));
        this.format = format;
        refuseBoth();
    }

    private void refuseBoth() {
        if ("json".equals(format) && file != null && !BenchJson.toStdout(file))
            throw refused(new BadOption("--output-format", format, "puts the JSON on standard output; --json " + file
                    + " writes it to a file: give one of them"));
        if ("table".equals(format) && BenchJson.toStdout(file))
            throw refused(new BadOption("--output-format", format, "puts the tables on standard output, where --json - puts the JSON"));
    }

    private ParameterException refused(BadOption why) {
        return new ParameterException(command.commandLine(), why.getMessage());
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
