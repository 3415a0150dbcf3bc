package org.blockyard.api.alloc;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.blockyard.api.plugin.Tunable;

/**
 * What an allocation policy is called and what it can be tuned with, the way an
 * {@link org.blockyard.api.io.ElevatorDescriptor} describes an elevator.
 *
 * @param id          stable short id, e.g. {@code reservation}; lower case, at most 32 characters
 * @param aliases     other names it answers to
 * @param description one line
 * @param tunables    its tunables, in the order a listing shows them
 */
public record PolicyDescriptor(String id, List<String> aliases, String description, List<Tunable> tunables) {

    public PolicyDescriptor {
        if (id == null || !id.matches("[a-z][a-z0-9_-]{0,31}"))
            throw new IllegalArgumentException("policy id must be 1-32 lower-case letters, digits, '-' or '_': " + id);
        aliases = List.copyOf(aliases);
        for (String a : aliases)
            if (!a.matches("[a-z][a-z0-9_-]{0,31}")) throw new IllegalArgumentException("bad alias " + a);
        tunables = List.copyOf(tunables);
    }

    public Optional<Tunable> tunable(String name) {
        return tunables.stream().filter(t -> t.name().equals(name)).findFirst();
    }

    /**
     * The value of every tunable: {@code overrides} where given, the default elsewhere. An unknown name or a
     * value out of range is refused with {@link AllocationException.InvalidRequest}.
     */
    public Map<String, Long> resolve(Map<String, Long> overrides) {
        try {
            return Tunable.resolve(id, tunables, overrides);
        } catch (IllegalArgumentException e) {
            throw new AllocationException.InvalidRequest(e.getMessage());
        }
    }
}
