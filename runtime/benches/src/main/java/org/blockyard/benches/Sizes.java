package org.blockyard.benches;

import java.util.Locale;

/**
 * Byte sizes as people write them, the one parser of every benchmark: 4096, 64KiB, 256MiB, 16Mi, 1GiB, 1G,
 * 512k. Units are binary whatever their spelling (a block device's sizes are), so 16MB is 16 MiB everywhere.
 */
public final class Sizes {
    private Sizes() {}

    /** For picocli options: a size of 0 bytes or more (the command checks its own lower bound). */
    public static final class Converter implements picocli.CommandLine.ITypeConverter<Long> {
        @Override
        public Long convert(String value) {
            try {
                return parse(value);
            } catch (IllegalArgumentException e) {
                throw new picocli.CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }

    public static long parse(String text) {
        String s = text.trim().toLowerCase(Locale.ROOT).replace("_", "");
        int i = 0;
        while (i < s.length() && (Character.isDigit(s.charAt(i)) || s.charAt(i) == '.')) i++;
        if (i == 0) throw new IllegalArgumentException("not a size: '" + text + "' (examples: 4096, 64KiB, 256MiB, 1GiB)");
        double n = Double.parseDouble(s.substring(0, i));
        String unit = s.substring(i).trim();
        long mult = switch (unit) {
            case "", "b" -> 1L;
            case "k", "kb", "ki", "kib" -> 1L << 10;
            case "m", "mb", "mi", "mib" -> 1L << 20;
            case "g", "gb", "gi", "gib" -> 1L << 30;
            case "t", "tb", "ti", "tib" -> 1L << 40;
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
