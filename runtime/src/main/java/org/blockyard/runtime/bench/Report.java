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

    public static Map<String, Object> row() {
        return new LinkedHashMap<>();
    }
}
