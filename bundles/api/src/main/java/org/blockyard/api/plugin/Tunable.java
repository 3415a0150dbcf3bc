package org.blockyard.api.plugin;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One tunable of a plugin (a sysfs file under {@code queue/iosched/}, or a mount option).
 *
 * @param name         sysfs-style name, e.g. {@code read_expire}
 * @param defaultValue the value when none is configured
 * @param min          smallest accepted value
 * @param max          largest accepted value
 * @param unit         e.g. {@code ms}, {@code requests}, {@code blocks}, {@code bool}
 * @param reason       one line: why the limit exists and why this default
 */
public record Tunable(String name, long defaultValue, long min, long max, String unit, String reason) {
    public Tunable {
        if (name == null || !name.matches("[a-z][a-z0-9_]{0,31}"))
            throw new IllegalArgumentException("tunable name must be 1-32 lower-case letters, digits or '_': " + name);
        if (defaultValue < min || defaultValue > max)
            throw new IllegalArgumentException(name + ": default " + defaultValue + " outside [" + min + ", " + max + "]");
    }

    /**
     * The value of every tunable in {@code tunables}: {@code overrides} where given, the default elsewhere,
     * in the order of {@code tunables}.
     *
     * @throws IllegalArgumentException naming {@code owner} for an unknown name or a value out of range
     */
    public static Map<String, Long> resolve(String owner, List<Tunable> tunables, Map<String, Long> overrides) {
        for (String name : overrides.keySet())
            if (tunables.stream().noneMatch(t -> t.name().equals(name)))
                throw new IllegalArgumentException(owner + " has no tunable " + name);
        Map<String, Long> values = new LinkedHashMap<>();
        for (Tunable t : tunables) {
            Long given = overrides.get(t.name());
            long v = given != null ? given : t.defaultValue();
            if (v < t.min() || v > t.max())
                throw new IllegalArgumentException(owner + "." + t.name() + " = " + v + " is outside ["
                        + t.min() + ", " + t.max() + "] " + t.unit());
            values.put(t.name(), v);
        }
        return java.util.Collections.unmodifiableMap(values);
    }
}
