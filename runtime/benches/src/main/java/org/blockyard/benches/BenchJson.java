package org.blockyard.benches;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The one JSON shape every benchmark writes (docs/json.md): an object with {@code bench} (the command's
 * name), {@code parameters} (every option of the run, by long name with {@code -} as {@code _}, sizes in
 * bytes), {@code results} (a list of rows, field names as in the tables) and, for benchmarks that compare
 * their rows, {@code summary}. With {@code --json -} (or {@code --output-format json}, {@link JsonOutput}) the
 * document is all that goes to standard output; the tables go to standard error.
 */
public final class BenchJson {
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    /** Options that say where output goes, not what was measured. */
    private static final Set<String> NOT_PARAMETERS = Set.of("json", "output_format", "plot", "quiet", "progress", "debug", "help",
            "version");

    private BenchJson() {}

    /** True when {@code json} asks for standard output. */
    public static boolean toStdout(Path json) {
        return json != null && json.toString().equals("-");
    }

    /** Where tables and notes go: standard error when standard output carries the JSON. */
    public static PrintStream tables(Path json) {
        return toStdout(json) ? System.err : System.out;
    }

    public static Map<String, Object> document(CommandSpec spec, List<Map<String, Object>> results, Map<String, Object> summary) {
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("bench", spec.name());
        doc.put("parameters", parameters(spec));
        doc.put("results", results);
        if (summary != null && !summary.isEmpty()) doc.put("summary", summary);
        return doc;
    }

    /** The options of the run, by long name without dashes ({@code file-size} as {@code file_size}). */
    public static Map<String, Object> parameters(CommandSpec spec) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (OptionSpec o : spec.options()) {
            String name = o.longestName().replaceFirst("^-+", "").replace('-', '_').toLowerCase(Locale.ROOT);
            if (o.usageHelp() || o.versionHelp() || NOT_PARAMETERS.contains(name)) continue;
            Object v = o.getValue();
            out.put(name, v instanceof Path p ? p.toString() : v);
        }
        return out;
    }

    /**
     * Writes {@code document} to {@code json} ({@code -}: standard output); nothing when {@code json} is null. A
     * failure names the file and why ({@code out.json: no space left on device}); the path itself was checked
     * when the option was read ({@link BadOption#outputFile}).
     */
    public static void write(Path json, Map<String, Object> document) throws IOException {
        if (json == null) return;
        String text = JSON.writeValueAsString(document) + System.lineSeparator();
        if (toStdout(json)) {
            System.out.print(text);
            System.out.flush();
            return;
        }
        BadOption.write(json, out -> out.write(text.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    }
}
