package org.blockyard.api.io;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.blockyard.api.plugin.Tunable;

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
        try {
            return Tunable.resolve(id, tunables, overrides);
        } catch (IllegalArgumentException e) {
            throw new IoException.InvalidTunable(e.getMessage());
        }
    }
}
