package org.blockyard.runtime.bench;

import java.util.Locale;

/** Byte sizes as people write them: 4096, 64KiB, 256MiB, 1GiB, 1G, 512k. */
public final class Sizes {
    private Sizes() {}

    public static long parse(String text) {
        String s = text.trim().toLowerCase(Locale.ROOT).replace("_", "");
        int i = 0;
        while (i < s.length() && (Character.isDigit(s.charAt(i)) || s.charAt(i) == '.')) i++;
        if (i == 0) throw new IllegalArgumentException("not a size: '" + text + "' (examples: 4096, 64KiB, 256MiB, 1GiB)");
        double n = Double.parseDouble(s.substring(0, i));
        String unit = s.substring(i).trim();
        long mult = switch (unit) {
            case "", "b" -> 1L;
            case "k", "kb", "kib" -> 1L << 10;
            case "m", "mb", "mib" -> 1L << 20;
            case "g", "gb", "gib" -> 1L << 30;
            case "t", "tb", "tib" -> 1L << 40;
            default -> throw new IllegalArgumentException("unknown size unit '" + unit + "' in '" + text + "'");
        };
        double bytes = n * mult;
        if (bytes < 0 || bytes > Long.MAX_VALUE) throw new IllegalArgumentException("size out of range: " + text);
        return (long) bytes;
    }

    public static String format(long bytes) {
        if (bytes >= 1L << 30 && bytes % (1L << 30) == 0) return (bytes >> 30) + " GiB";
        if (bytes >= 1L << 20 && bytes % (1L << 20) == 0) return (bytes >> 20) + " MiB";
        if (bytes >= 1L << 10 && bytes % (1L << 10) == 0) return (bytes >> 10) + " KiB";
        return bytes + " B";
    }
}
