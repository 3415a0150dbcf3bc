package org.blockyard.runtime.io;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import org.blockyard.api.io.ElevatorFactory;
import org.blockyard.api.io.IoException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The elevators a queue can run, by id and alias, in registration order (the order a listing shows).
 *
 * <p>Rules (seed 000, the "Fall back io scheduler for 2.6.15?" thread, Linux {@code elevator_setup_default}):
 * <ul>
 * <li>The default must be built in; a registry whose default is not is refused at construction, so the
 *     fallback always exists.</li>
 * <li>{@code as} always means {@code anticipatory}; no other elevator may take that alias.</li>
 * <li>{@link #select}: a name that is not available falls back to the default, never silently to noop, and
 *     the fallback is logged with both names.</li>
 * <li>{@link #lookup} (run-time switching, like writing to sysfs): an unknown name is an error.</li>
 * <li>Built-in elevators cannot be unregistered.</li>
 * <li>An elevator the queue retired after a fault ({@link #markFailed}) stays listed with the reason, is
 *     refused by {@link #lookup} ({@link IoException.ElevatorFailed}) and passed over by {@link #select}
 *     until its factory is registered anew (a new bundle version unregisters the old one first).</li>
 * </ul>
 * Not thread-safe: the queue actor owns it; plugin bind/unbind go through the actor.
 */
public final class ElevatorRegistry {
    private static final Logger LOG = LoggerFactory.getLogger(ElevatorRegistry.class);

    /** Reserved alias: {@code as} is the old name of the anticipatory scheduler. */
    public static final Map<String, String> RESERVED_ALIASES = Map.of("as", "anticipatory");

    private final Map<String, ElevatorFactory> byId = new LinkedHashMap<>();
    private final Map<String, String> failures = new LinkedHashMap<>();
    private final Set<String> builtIn;
    private final String defaultId;

    /** The result of resolving a configured or requested name. */
    public record Selection(String requested, String id, boolean fellBack) {}

    public ElevatorRegistry(List<ElevatorFactory> builtIns, String defaultId) {
        for (ElevatorFactory f : builtIns) add(f);
        this.builtIn = Set.copyOf(byId.keySet());
        String d = normalize(defaultId);
        String canonical = RESERVED_ALIASES.getOrDefault(d, d);
        Optional<String> resolved = resolve(canonical);
        if (resolved.isEmpty() || !builtIn.contains(resolved.get()))
            throw new IllegalArgumentException("the default io scheduler '" + defaultId
                    + "' must be built in (built in: " + String.join(", ", builtIn) + ")");
        this.defaultId = resolved.get();
        for (String id : byId.keySet())
            LOG.info("io scheduler {} registered{}", id, id.equals(this.defaultId) ? " (default)" : "");
    }

    /** The registry with the built-in elevators, noop and deadline. */
    public static ElevatorRegistry builtIn(String defaultId) {
        return new ElevatorRegistry(List.of(org.blockyard.runtime.io.elevator.NoopElevator.FACTORY,
                org.blockyard.runtime.io.elevator.DeadlineElevator.FACTORY), defaultId);
    }

    private static String normalize(String name) {
        if (name == null) return "";
        return name.trim().toLowerCase(Locale.ROOT);
    }

    /** Adds a plugin elevator; refused when its id or an alias is taken or it claims a reserved alias. */
    public void register(ElevatorFactory factory) {
        add(factory);
    }

    private void add(ElevatorFactory factory) {
        var d = factory.descriptor();
        if (byId.containsKey(d.id()) || resolve(d.id()).isPresent())
            throw new IllegalArgumentException("io scheduler " + d.id() + " is already registered");
        String reservedFor = RESERVED_ALIASES.get(d.id());
        if (reservedFor != null)
            throw new IllegalArgumentException("'" + d.id() + "' is reserved as an alias of " + reservedFor);
        for (String alias : d.aliases()) {
            String owner = RESERVED_ALIASES.get(alias);
            if (owner != null && !owner.equals(d.id()))
                throw new IllegalArgumentException("alias '" + alias + "' is reserved for " + owner
                        + ", not " + d.id());
            if (resolve(alias).isPresent())
                throw new IllegalArgumentException("alias '" + alias + "' of " + d.id() + " is already taken");
        }
        byId.put(d.id(), factory);
        failures.remove(d.id());
        if (defaultId != null) LOG.info("io scheduler {} registered", d.id());
    }

    /** Removes a plugin elevator; built-in ones stay. Returns whether it was registered. */
    public boolean unregister(String id) {
        if (builtIn.contains(id)) throw new IllegalArgumentException("built-in io scheduler " + id + " cannot be removed");
        failures.remove(id);
        return byId.remove(id) != null;
    }

    /**
     * Records that the queue retired {@code id} after a fault; {@code reason} names the callback and what went
     * wrong ("dispatch threw IllegalStateException: ..."). The first reason stays until it is registered anew.
     */
    public void markFailed(String id, String reason) {
        if (byId.containsKey(id)) failures.putIfAbsent(id, reason);
    }

    public boolean isFailed(String id) {
        return failures.containsKey(id);
    }

    /** Retired elevators and why, in the order they failed. */
    public Map<String, String> failures() {
        return Map.copyOf(failures);
    }

    /** The id that {@code name} (an id or alias) stands for, if registered. */
    public Optional<String> resolve(String name) {
        String n = normalize(name);
        n = RESERVED_ALIASES.getOrDefault(n, n);
        if (byId.containsKey(n)) return Optional.of(n);
        for (var e : byId.entrySet())
            if (e.getValue().descriptor().aliases().contains(n)) return Optional.of(e.getKey());
        return Optional.empty();
    }

    /**
     * The factory for {@code name}, or {@link IoException.UnknownElevator} (sysfs: type not found), or
     * {@link IoException.ElevatorFailed} when it was retired after a fault.
     */
    public ElevatorFactory lookup(String name) {
        String id = resolve(name).orElseThrow(() ->
                new IoException.UnknownElevator("elevator: type " + name + " not found (registered: "
                        + String.join(" ", byId.keySet()) + ")"));
        String reason = failures.get(id);
        if (reason != null)
            throw new IoException.ElevatorFailed("elevator: " + id + " was retired after a fault (" + reason
                    + "); register it anew to use it again");
        return byId.get(id);
    }

    /** Boot-time selection: {@code requested} if available, else the default, logged. */
    public Selection select(String requested) {
        Optional<String> id = resolve(requested);
        if (id.isPresent() && !failures.containsKey(id.get())) return new Selection(requested, id.get(), false);
        if (id.isPresent()) {
            LOG.warn("I/O scheduler {} was retired after a fault ({}); using the default, {}", id.get(),
                    failures.get(id.get()), defaultId);
            return new Selection(requested, defaultId, true);
        }
        String n = normalize(requested);
        String shown = RESERVED_ALIASES.containsKey(n) ? n + " (" + RESERVED_ALIASES.get(n) + ")" : requested;
        LOG.warn("I/O scheduler {} not found; using the default, {}", shown, defaultId);
        return new Selection(requested, defaultId, true);
    }

    public String defaultId() {
        return defaultId;
    }

    public boolean isBuiltIn(String id) {
        return builtIn.contains(id);
    }

    /** Registered ids in registration order. */
    public List<String> ids() {
        return new ArrayList<>(byId.keySet());
    }

    public ElevatorFactory factory(String id) {
        ElevatorFactory f = byId.get(id);
        if (f == null) throw new IoException.UnknownElevator("elevator: type " + id + " not found");
        return f;
    }

    /**
     * {@code noop [deadline]}: every registered id, the active one in brackets, a retired one with its reason:
     * {@code noop [deadline] buggy(failed: dispatch threw IllegalStateException: ...)}.
     */
    public String listing(String activeId) {
        StringBuilder sb = new StringBuilder();
        for (String id : byId.keySet()) {
            if (sb.length() > 0) sb.append(' ');
            sb.append(id.equals(activeId) ? "[" + id + "]" : id);
            String reason = failures.get(id);
            if (reason != null) sb.append("(failed: ").append(reason).append(')');
        }
        return sb.toString();
    }
}
