package org.blockyard.benches;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Function;

import org.blockyard.runtime.alloc.ExtentAllocator;

/**
 * The free space of an extent allocator by extent size, in Ceph's power-of-two buckets of bytes: bucket
 * {@code "4096"} holds the free extents of [4096, 8192) bytes, with their count ({@code extents}) and their
 * bytes ({@code bytes}); empty buckets are left out. Over every bucket the bytes add up to the free space.
 */
public final class FreeExtentHistogram {
    private FreeExtentHistogram() {}

    /** The histogram of {@code a}'s free space now; {@code blockBytes} is the size of its blocks. */
    public static Map<String, Object> of(ExtentAllocator a, int blockBytes) {
        long[] counts = new long[64], bytes = new long[64];
        a.forEachFree(e -> {
            long b = e.blocks() * blockBytes;
            int k = 63 - Long.numberOfLeadingZeros(b);
            counts[k]++;
            bytes[k] += b;
        });
        Map<String, Object> out = new LinkedHashMap<>();
        for (int k = 0; k < 64; k++) {
            if (counts[k] == 0) continue;
            Map<String, Object> bucket = new LinkedHashMap<>();
            bucket.put("extents", counts[k]);
            bucket.put("bytes", bytes[k]);
            out.put(Long.toString(1L << k), bucket);
        }
        return out;
    }

    /**
     * Prints the histograms kept under {@code key} in {@code rows} side by side: a line per bucket
     * ({@code 4 KiB} for [4 KiB, 8 KiB)), a column per row headed by {@code label}, each cell the bucket's
     * count of free extents.
     */
    @SuppressWarnings("unchecked")
    public static void print(PrintStream out, String title, List<Map<String, Object>> rows,
                             Function<Map<String, Object>, String> label, String key) {
        TreeSet<Long> buckets = new TreeSet<>();
        for (Map<String, Object> r : rows)
            if (r.get(key) instanceof Map<?, ?> h) for (Object b : h.keySet()) buckets.add(Long.parseLong((String) b));
        if (buckets.isEmpty()) return;
        List<String> columns = new ArrayList<>(List.of("bucket"));
        for (Map<String, Object> r : rows) columns.add(label.apply(r));
        List<Map<String, Object>> lines = new ArrayList<>();
        for (long b : buckets) {
            Map<String, Object> line = Report.row();
            line.put("bucket", Sizes.format(b));
            for (int i = 0; i < rows.size(); i++) {
                Map<String, Object> h = (Map<String, Object>) rows.get(i).get(key);
                Object cell = h == null ? null : h.get(Long.toString(b));
                line.put(columns.get(i + 1), cell instanceof Map<?, ?> m ? m.get("extents") : 0L);
            }
            lines.add(line);
        }
        out.println();
        out.println(title);
        Report.table(out, lines, columns);
    }
}
