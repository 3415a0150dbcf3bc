package org.blockyard.runtime.bench;

import java.nio.file.Path;
import java.util.Collection;
import java.util.List;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;

import org.blockyard.runtime.config.BlockyardConfig;

/**
 * A wrong value given on the command line: the message names the option, the value and what is allowed, in
 * one line ({@code --policy 'foo': allowed are reservation, mballoc, no-reservation, global-lock, group-locks}). The
 * command line prints it alone on standard error and exits with code 2, as picocli does for its own parse
 * errors. The checks below are the ones the commands share.
 */
public final class BadOption extends IllegalArgumentException {

    public BadOption(String option, Object value, String allowed) {
        super(option + " '" + value + "': " + allowed);
    }

    /** {@code value} when it is at least {@code min}. */
    public static long atLeast(String option, long value, long min) {
        if (value < min) throw new BadOption(option, value, "must be at least " + min);
        return value;
    }

    /** {@code value} when it lies in {@code [low, high)}, or {@code [low, high]} with {@code highIncluded}. */
    public static double between(String option, double value, double low, double high, boolean highIncluded) {
        if (!(value >= low && (highIncluded ? value <= high : value < high)))
            throw new BadOption(option, value, "must be from " + low + " to " + high + (highIncluded ? "" : ", exclusive"));
        return value;
    }

    /** {@code value} when it is one of {@code allowed} (compared trimmed). */
    public static String oneOf(String option, String value, Collection<String> allowed) {
        if (value == null || !allowed.contains(value.trim()))
            throw new BadOption(option, value, "allowed are " + String.join(", ", allowed));
        return value.trim();
    }

    /** Every name of a comma-separated option in {@code allowed}; at least one name. */
    public static List<String> allOf(String option, List<String> values, Collection<String> allowed) {
        if (values == null || values.isEmpty()) throw new BadOption(option, "", "allowed are " + String.join(", ", allowed));
        for (String v : values) oneOf(option, v, allowed);
        return values.stream().map(String::trim).toList();
    }

    /**
     * The configuration: the defaults with {@code file} (given as {@code --config}) layered over them. A missing,
     * unreadable or malformed file is a {@code BadOption} naming the file and the first problem in it.
     */
    public static Config config(Path file) {
        try {
            return BlockyardConfig.load(file);
        } catch (ConfigException e) {
            throw new BadOption("--config", file, "not a valid configuration: " + firstLine(e.getMessage()));
        } catch (IllegalArgumentException e) {
            if (file == null) throw e;
            throw new BadOption("--config", file, "must be a readable HOCON file (" + firstLine(e.getMessage()) + ")");
        }
    }

    private static String firstLine(String s) {
        if (s == null) return "";
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }
}
