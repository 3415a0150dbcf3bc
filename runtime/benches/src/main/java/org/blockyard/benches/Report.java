package org.blockyard.benches;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

/** Benchmark results: rows of named figures, printed as a table and written as JSON. */
public final class Report {
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private Report() {}

    /** Tables are kept to this many columns of text: a terminal's width, and what a review tool shows. */
    public static final int MAX_WIDTH = 120;

    /**
     * Prints {@code rows} with the given columns (keys; a dotted key reads a nested map). A table wider than
     * {@link #MAX_WIDTH} is transposed: one line per column, one column per row, headed by the row's first
     * cell; when even that is too wide, the rows are split over several such tables.
     */
    public static void table(PrintStream out, List<Map<String, Object>> rows, List<String> columns) {
        List<String[]> cells = new ArrayList<>();
        cells.add(columns.toArray(String[]::new));
        for (Map<String, Object> row : rows) {
            String[] line = new String[columns.size()];
            for (int i = 0; i < columns.size(); i++) line[i] = format(get(row, columns.get(i)));
            cells.add(line);
        }
        if (width(cells) <= MAX_WIDTH) {
            print(out, cells, true);
            return;
        }
        // Transposed: the first column names the fields, each further column is one row of the table.
        int fields = columns.size();
        int nameWidth = columns.stream().mapToInt(String::length).max().orElse(0);
        int from = 1;
        while (from < cells.size()) {
            int to = from, used = nameWidth;
            do {
                int w = 0;
                for (String c : cells.get(to)) w = Math.max(w, c.length());
                if (to > from && used + 2 + w > MAX_WIDTH) break;
                used += 2 + w;
                to++;
            } while (to < cells.size());
            List<String[]> t = new ArrayList<>();
            for (int f = 0; f < fields; f++) {
                String[] line = new String[1 + to - from];
                line[0] = columns.get(f);
                for (int r = from; r < to; r++) line[1 + r - from] = cells.get(r)[f];
                t.add(line);
            }
            if (from > 1) out.println();
            print(out, t, true);
            from = to;
        }
    }

    private static int width(List<String[]> cells) {
        int[] w = new int[cells.get(0).length];
        for (String[] line : cells) for (int i = 0; i < line.length; i++) w[i] = Math.max(w[i], line[i].length());
        int sum = 0;
        for (int x : w) sum += x;
        return sum + 2 * (w.length - 1);
    }

    /** Left-aligned first column, right-aligned others, a rule under the first line. */
    private static void print(PrintStream out, List<String[]> cells, boolean rule) {
        int[] width = new int[cells.get(0).length];
        for (String[] line : cells) for (int i = 0; i < line.length; i++) width[i] = Math.max(width[i], line[i].length());
        for (int r = 0; r < cells.size(); r++) {
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < width.length; i++) {
                String c = cells.get(r)[i];
                sb.append(i == 0 ? String.format("%-" + width[i] + "s", c) : String.format("  %" + width[i] + "s", c));
            }
            out.println(sb.toString().stripTrailing());
            if (r == 0 && rule) out.println("-".repeat(sb.length()));
        }
    }

    static Object get(Map<String, Object> row, String key) {
        Object v = row;
        for (String part : key.split("\\.")) {
            if (!(v instanceof Map<?, ?> m)) return null;
            v = m.get(part);
        }
        return v;
    }

    /**
     * A cell, one way for every number: whole numbers with a comma every three digits ({@code 8,125,802}),
     * fractions to three significant digits or to the unit from 100 on ({@code 0.41}, {@code 17.3},
     * {@code 1,318}); "-" for nothing.
     */
    public static String format(Object v) {
        if (v == null) return "-";
        if (v instanceof Double || v instanceof Float) {
            double d = ((Number) v).doubleValue();
            if (Double.isNaN(d) || Double.isInfinite(d)) return "-";
            double a = Math.abs(d);
            if (a >= 100) return String.format(Locale.ROOT, "%,.0f", d);
            if (a >= 10) return String.format(Locale.ROOT, "%.1f", d);
            return String.format(Locale.ROOT, "%.2f", d);
        }
        if (v instanceof Long || v instanceof Integer || v instanceof Short) return String.format(Locale.ROOT, "%,d", ((Number) v).longValue());
        return v.toString();
    }

    public static void writeJson(Path file, Object value) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) Files.createDirectories(parent);
        JSON.writeValue(file.toFile(), value);
    }

    /**
     * The median of several runs of one configuration: numbers are replaced by their median across
     * {@code runs}, inside nested maps (latency percentiles, histograms) and lists of the same length
     * (series over time) too, element by element; a key some runs lack counts as 0 in a nested map (a
     * histogram's empty bucket); other values are taken from the first run; {@code runs} is added, and
     * {@code per_run}: every run's value, in order, of each top-level figure a reader checks for scatter and
     * warm-up (the rates, {@code *_per_s}, and {@code durable_vs_memory}, {@code elapsed_s}, {@code jit_ms}).
     */
    public static Map<String, Object> median(List<Map<String, Object>> runs) {
        Map<String, Object> out = medianMap(runs);
        out.put("runs", runs.size());
        Map<String, Object> perRun = new LinkedHashMap<>();
        for (String k : out.keySet()) {
            if (!(out.get(k) instanceof Number) || !(k.endsWith("_per_s") || PER_RUN.contains(k))) continue;
            List<Object> values = new ArrayList<>();
            for (Map<String, Object> run : runs) values.add(run.get(k));
            perRun.put(k, values);
        }
        if (!perRun.isEmpty()) out.put("per_run", perRun);
        return out;
    }

    private static final Set<String> PER_RUN = Set.of("durable_vs_memory", "elapsed_s", "jit_ms");

    private static Map<String, Object> medianMap(List<Map<String, Object>> maps) {
        java.util.LinkedHashSet<String> keys = new java.util.LinkedHashSet<>();
        for (Map<String, Object> m : maps) keys.addAll(m.keySet());
        Map<String, Object> out = new LinkedHashMap<>();
        for (String k : keys) {
            List<Object> values = new ArrayList<>();
            for (Map<String, Object> m : maps) values.add(m.get(k));
            out.put(k, medianOf(values));
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    private static Object medianOf(List<Object> values) {
        Object first = null;
        for (Object v : values) if (first == null) first = v;
        if (values.size() < 2 || first == null) return first;
        if (first instanceof Map<?, ?>) {
            List<Map<String, Object>> maps = new ArrayList<>();
            for (Object v : values) maps.add(v instanceof Map<?, ?> m ? (Map<String, Object>) m : Map.of());
            return medianMap(maps);
        }
        if (first instanceof List<?> l) {
            for (Object v : values) if (!(v instanceof List<?> o) || o.size() != l.size()) return first;
            List<Object> out = new ArrayList<>();
            for (int i = 0; i < l.size(); i++) {
                List<Object> column = new ArrayList<>();
                for (Object v : values) column.add(((List<?>) v).get(i));
                out.add(medianOf(column));
            }
            return out;
        }
        if (first instanceof Number) {
            double[] xs = new double[values.size()];
            for (int i = 0; i < xs.length; i++) xs[i] = values.get(i) instanceof Number n ? n.doubleValue() : 0;
            java.util.Arrays.sort(xs);
            double med = xs.length % 2 == 1 ? xs[xs.length / 2] : (xs[xs.length / 2 - 1] + xs[xs.length / 2]) / 2;
            return first instanceof Double || med != Math.rint(med) ? (Object) med : (Object) (long) med;
        }
        return first;
    }

    /** Column keys for {@link #table}: strings, and lists of them (such as {@link Latency#columns}) spliced in. */
    public static List<String> columns(Object... parts) {
        List<String> out = new ArrayList<>();
        for (Object p : parts) {
            if (p instanceof List<?> l) for (Object o : l) out.add((String) o);
            else out.add((String) p);
        }
        return out;
    }

    public static Map<String, Object> row() {
        return new LinkedHashMap<>();
    }
}
