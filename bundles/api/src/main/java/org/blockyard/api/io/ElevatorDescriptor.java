package org.blockyard.api.io;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What an elevator is called and what it can be tuned with (a Linux {@code struct elevator_type}).
 *
 * @param id          stable short id, e.g. {@code deadline}; lower case, at most 16 characters
 *                    ({@code ELV_NAME_MAX})
 * @param aliases     other names it answers to, e.g. {@code as} for {@code anticipatory}
 * @param description one line
 * @param tunables    its tunables, in the order a listing shows them
 */
public record ElevatorDescriptor(String id, List<String> aliases, String description, List<Tunable> tunables) {

    public ElevatorDescriptor {
        if (id == null || !id.matches("[a-z][a-z0-9_-]{0,15}"))
            throw new IllegalArgumentException("elevator id must be 1-16 lower-case letters, digits, '-' or '_': " + id);
        aliases = List.copyOf(aliases);
        for (String a : aliases)
            if (!a.matches("[a-z][a-z0-9_-]{0,15}")) throw new IllegalArgumentException("bad alias " + a);
        tunables = List.copyOf(tunables);
    }

    public Optional<Tunable> tunable(String name) {
        return tunables.stream().filter(t -> t.name().equals(name)).findFirst();
    }

    /**
     * The value of every tunable: {@code overrides} where given, the default elsewhere. An unknown name or a
     * value out of range is refused with {@link IoException.InvalidTunable}.
     */
    public Map<String, Long> resolve(Map<String, Long> overrides) {
        for (String name : overrides.keySet())
            if (tunable(name).isEmpty())
                throw new IoException.InvalidTunable(id + " has no tunable " + name);
        java.util.LinkedHashMap<String, Long> values = new java.util.LinkedHashMap<>();
        for (Tunable t : tunables) {
            long v = overrides.getOrDefault(t.name(), t.defaultValue());
            if (v < t.min() || v > t.max())
                throw new IoException.InvalidTunable(id + "." + t.name() + " = " + v + " is outside ["
                        + t.min() + ", " + t.max() + "] " + t.unit());
            values.put(t.name(), v);
        }
        return Map.copyOf(values);
    }

    /**
     * One tunable (a sysfs file under {@code queue/iosched/}).
     *
     * @param name         sysfs-style name, e.g. {@code read_expire}
     * @param defaultValue the value when none is configured
     * @param min          smallest accepted value
     * @param max          largest accepted value
     * @param unit         e.g. {@code ms}, {@code requests}, {@code bool}
     * @param reason       one line: why the limit exists and why this default
     */
    public record Tunable(String name, long defaultValue, long min, long max, String unit, String reason) {
        public Tunable {
            if (defaultValue < min || defaultValue > max)
                throw new IllegalArgumentException(name + ": default " + defaultValue + " outside [" + min + ", " + max + "]");
        }
    }
}
