package org.blockyard.runtime.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

/** Benchmark results: rows of named figures, printed as a table and written as JSON. */
public final class Report {
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private Report() {}

    /** Prints {@code rows} with the given columns (keys; a dotted key reads a nested map). */
    public static void table(PrintStream out, List<Map<String, Object>> rows, List<String> columns) {
        List<String[]> cells = new ArrayList<>();
        cells.add(columns.toArray(String[]::new));
        for (Map<String, Object> row : rows) {
            String[] line = new String[columns.size()];
            for (int i = 0; i < columns.size(); i++) line[i] = format(get(row, columns.get(i)));
            cells.add(line);
        }
        int[] width = new int[columns.size()];
        for (String[] line : cells) for (int i = 0; i < line.length; i++) width[i] = Math.max(width[i], line[i].length());
        for (int r = 0; r < cells.size(); r++) {
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < width.length; i++) {
                String c = cells.get(r)[i];
                sb.append(i == 0 ? String.format("%-" + width[i] + "s", c) : String.format("  %" + width[i] + "s", c));
            }
            out.println(sb);
            if (r == 0) out.println("-".repeat(sb.length()));
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

    static String format(Object v) {
        if (v == null) return "-";
        if (v instanceof Double d) {
            double a = Math.abs(d);
            if (a >= 1e6) return String.format("%,.0f", d);
            if (a >= 100) return String.format("%.0f", d);
            if (a >= 10) return String.format("%.1f", d);
            return String.format("%.2f", d);
        }
        if (v instanceof Long || v instanceof Integer) return String.format("%,d", ((Number) v).longValue());
        return v.toString();
    }

    public static void writeJson(Path file, Object value) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) Files.createDirectories(parent);
        JSON.writeValue(file.toFile(), value);
    }

    /**
     * The median of several runs of one configuration: numbers (and numbers inside nested maps such as
     * latency percentiles) are replaced by their median across {@code runs}, other values taken from the
     * first; {@code runs} is added.
     */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> median(List<Map<String, Object>> runs) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (Map.Entry<String, Object> e : runs.get(0).entrySet()) {
            String k = e.getKey();
            Object v = e.getValue();
            if (v instanceof Map<?, ?>) {
                List<Map<String, Object>> inner = new ArrayList<>();
                for (Map<String, Object> r : runs) inner.add((Map<String, Object>) r.get(k));
                Map<String, Object> m = median(inner);
                m.remove("runs");
                out.put(k, m);
            } else if (v instanceof Number && runs.size() > 1) {
                double[] xs = new double[runs.size()];
                for (int i = 0; i < xs.length; i++) xs[i] = ((Number) runs.get(i).get(k)).doubleValue();
                java.util.Arrays.sort(xs);
                double med = xs.length % 2 == 1 ? xs[xs.length / 2] : (xs[xs.length / 2 - 1] + xs[xs.length / 2]) / 2;
                out.put(k, v instanceof Double || med != Math.rint(med) ? (Object) med : (Object) (long) med);
            } else {
                out.put(k, v);
            }
        }
        out.put("runs", runs.size());
        return out;
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
