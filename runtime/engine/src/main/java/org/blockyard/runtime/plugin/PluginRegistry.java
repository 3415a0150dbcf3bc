package org.blockyard.runtime.plugin;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.blockyard.api.plugin.Tunable;

/**
 * The plugins of one family that an engine part can run, by id and alias, in registration order (the order
 * a listing shows): the built-in ones and those registered while their bundles are active. One set of rules
 * for every family (seed 000, the "Fall back io scheduler for 2.6.15?" thread, Linux
 * {@code elevator_setup_default}); {@code ElevatorRegistry} and {@code PolicyRegistry} only say what their
 * family is ({@link PluginFamily}).
 * <ul>
 * <li>The default must be built in; a registry whose default is not is refused at construction, so the
 *     fallback always exists.</li>
 * <li>A reserved alias ({@link PluginFamily#reservedAliases}) always means its id; no other plugin may take
 *     it or be called by it. An id or alias already taken is refused; built-in plugins cannot be
 *     unregistered.</li>
 * <li>{@link #select} (configuration, start-up): a name that is not available (not registered, or retired)
 *     falls back to the default, never silently to anything else, and the log names both and why.
 *     {@link #lookup} (a switch asked for at run time, like writing to sysfs): such a name is an error.</li>
 * <li>A plugin retired after a fault ({@link #markFailed}) stays listed with the first reason, is refused by
 *     {@link #lookup} and passed over by {@link #select} until it is registered anew (a new bundle revision
 *     unregisters the old one first). The last resort ({@link PluginFamily#lastResort}) is never retired.</li>
 * <li>Tunables: a product is built with every tunable of its descriptor, from its default, the configured
 *     value the caller hands {@link #build}, and the value set at run time ({@link #setTunable}, checked
 *     against the registered descriptor before it is kept), the last winning. Values set at run time are
 *     kept by id: they outlive the plugin's departure and apply again when it comes back; a new revision
 *     that no longer takes one drops it, logged, when it registers.</li>
 * </ul>
 * Thread-safe: the engine's actors, a shell and OSGi callbacks all call it. Plugin code (a descriptor, a
 * factory) is never called with the lock held, except {@code descriptor()} once when it registers.
 *
 * @param <F> the factory
 * @param <C> what a factory builds from
 * @param <P> what it builds
 */
public class PluginRegistry<F, C, P> {
    private static final Logger LOG = LoggerFactory.getLogger(PluginRegistry.class);

    /** The result of resolving a configured or requested name. */
    public record Selection(String requested, String id, boolean fellBack) {}

    /** A registered factory and its descriptor as read when it registered. */
    private record Entry<F>(F factory, PluginFamily.Described info) {}

    private final PluginFamily<F, C, P> family;
    private final Map<String, Entry<F>> byId = new LinkedHashMap<>();
    /** Retired ids and the first reason; only registered ids. */
    private final Map<String, String> failures = new LinkedHashMap<>();
    /** Values set at run time, by id; each checked against the descriptor registered when it was set. */
    private final Map<String, Map<String, Long>> runTime = new HashMap<>();
    private final Set<String> builtIn;
    private final String defaultId;
    private final String lastResortId;

    protected PluginRegistry(PluginFamily<F, C, P> family, List<F> builtIns, String defaultId) {
        this.family = family;
        for (F f : builtIns) add(f);
        this.builtIn = Set.copyOf(byId.keySet());
        Optional<String> d = resolve(defaultId);
        if (d.isEmpty() || !builtIn.contains(d.get()))
            throw new IllegalArgumentException("the default " + family.noun() + " '" + defaultId
                    + "' must be built in (built in: " + String.join(", ", byId.keySet()) + ")");
        this.defaultId = d.get();
        this.lastResortId = family.lastResort() != null ? family.lastResort() : this.defaultId;
        LOG.debug("{}s built in: {} (default {})", family.noun(), byId.keySet(), this.defaultId);
    }

    /** What this registry's plugins are called in messages. */
    public String noun() {
        return family.noun();
    }

    /** {@code factory}'s descriptor, read now; may throw (a plugin's code). */
    public PluginFamily.Described describe(F factory) {
        return family.describe(factory);
    }

    private static String normalize(String name) {
        return name == null ? "" : name.trim().toLowerCase(Locale.ROOT);
    }

    // ---- names ----

    /** Adds a plugin; refused (IllegalArgumentException) when a name of it is taken or reserved for another. */
    public synchronized void register(F factory) {
        String id = add(factory);
        failures.remove(id);
        dropRefusedTunables(id);
        LOG.info("{} {} registered", family.noun(), id);
    }

    private String add(F factory) {
        PluginFamily.Described d = family.describe(factory);
        if (resolve(d.id()).isPresent())
            throw new IllegalArgumentException(family.noun() + " " + d.id() + " is already registered");
        String refusal = reservedRefusal(d);
        if (refusal != null) throw new IllegalArgumentException(refusal);
        for (String alias : d.aliases())
            if (resolve(alias).isPresent())
                throw new IllegalArgumentException("alias '" + alias + "' of " + d.id() + " is already taken");
        byId.put(d.id(), new Entry<>(factory, d));
        return d.id();
    }

    /** Why {@code d} claims a reserved alias it may not, or null. */
    private String reservedRefusal(PluginFamily.Described d) {
        String reservedFor = family.reservedAliases().get(d.id());
        if (reservedFor != null) return "'" + d.id() + "' is reserved as an alias of " + reservedFor;
        for (String alias : d.aliases()) {
            String owner = family.reservedAliases().get(alias);
            if (owner != null && !owner.equals(d.id()))
                return "alias '" + alias + "' is reserved for " + owner + ", not " + d.id();
        }
        return null;
    }

    /**
     * Why {@code factory} cannot join this registry's built-in plugins: a name it answers to is a built-in's,
     * or it claims a reserved alias; null when it can. Registered plugins are not looked at: a binder knows
     * which bundle holds each and says so. May throw what the factory's descriptor throws.
     */
    public String refusalBesideBuiltIns(F factory) {
        PluginFamily.Described d = family.describe(factory);
        synchronized (this) {
            String refusal = reservedRefusal(d);
            if (refusal != null) return refusal;
            List<String> names = new ArrayList<>(d.aliases());
            names.add(0, d.id());
            for (String n : names) {
                Optional<String> taken = resolve(n);
                if (taken.isPresent() && builtIn.contains(taken.get())) return "'" + n + "' is a built-in " + family.noun();
            }
            return null;
        }
    }

    /** Removes a plugin; built-in ones stay (IllegalArgumentException). Answers whether it was registered. */
    public synchronized boolean unregister(String id) {
        if (builtIn.contains(id))
            throw new IllegalArgumentException("built-in " + family.noun() + " " + id + " cannot be removed");
        failures.remove(id);
        boolean was = byId.remove(id) != null;
        if (was) LOG.info("{} {} unregistered", family.noun(), id);
        return was;
    }

    /** The id {@code name} (an id, an alias, a reserved alias) stands for, if registered. */
    public synchronized Optional<String> resolve(String name) {
        String n = normalize(name);
        n = family.reservedAliases().getOrDefault(n, n);
        if (byId.containsKey(n)) return Optional.of(n);
        for (var e : byId.entrySet())
            if (e.getValue().info().aliases().contains(n)) return Optional.of(e.getKey());
        return Optional.empty();
    }

    /** The id of {@code name} for a switch at run time: not registered or retired is the family's error. */
    public synchronized String lookup(String name) {
        String id = resolve(name).orElseThrow(() -> family.unknown("no " + family.noun() + " '" + name
                + "' (registered: " + String.join(" ", byId.keySet()) + ")"));
        String reason = failures.get(id);
        if (reason != null)
            throw family.retired(family.noun() + " " + id + " was retired after a fault (" + reason
                    + "); it can be selected again once its plugin registers it anew");
        return id;
    }

    /** Start-up selection: {@code requested} if available, else the default, logged with both names and why. */
    public synchronized Selection select(String requested) {
        Optional<String> id = resolve(requested);
        if (id.isPresent() && !failures.containsKey(id.get())) return new Selection(requested, id.get(), false);
        if (id.isPresent()) {
            LOG.warn("{} {} was retired after a fault ({}); using the default, {}", family.noun(), id.get(),
                    failures.get(id.get()), defaultId);
        } else {
            String n = normalize(requested);
            String reserved = family.reservedAliases().get(n);
            LOG.warn("{} {} not found; using the default, {}", family.noun(),
                    reserved != null ? n + " (" + reserved + ")" : requested, defaultId);
        }
        return new Selection(requested, defaultId, true);
    }

    public String defaultId() {
        return defaultId;
    }

    public boolean isBuiltIn(String id) {
        return builtIn.contains(id);
    }

    /** Registered ids in registration order. */
    public synchronized List<String> ids() {
        return new ArrayList<>(byId.keySet());
    }

    /** The factory of {@code id}; not registered is the family's error. */
    public synchronized F factory(String id) {
        return entry(id).factory();
    }

    /** The descriptor of {@code id} as read when it registered. */
    public synchronized PluginFamily.Described described(String id) {
        return entry(id).info();
    }

    private Entry<F> entry(String id) {
        Entry<F> e = byId.get(id);
        if (e == null)
            throw family.unknown("no " + family.noun() + " '" + id + "' (registered: "
                    + String.join(" ", byId.keySet()) + ")");
        return e;
    }

    // ---- faults ----

    /**
     * Retires {@code id} after a fault; {@code reason} names the call and what went wrong ("dispatch threw
     * IllegalStateException: ..."). The first reason stays until it is registered anew; an id not registered
     * and the last resort are left alone.
     */
    public synchronized void markFailed(String id, String reason) {
        if (!byId.containsKey(id) || id.equals(lastResortId)) return;
        failures.putIfAbsent(id, reason);
    }

    public synchronized boolean isFailed(String id) {
        return failures.containsKey(id);
    }

    /** Retired ids and why. */
    public synchronized Map<String, String> failures() {
        return Map.copyOf(failures);
    }

    /**
     * {@code noop [deadline]}: every registered id, the active one in brackets, a retired one with its reason:
     * {@code noop [deadline] buggy(failed: dispatch threw IllegalStateException: ...)}.
     */
    public synchronized String listing(String activeId) {
        StringBuilder sb = new StringBuilder();
        for (String id : byId.keySet()) {
            if (sb.length() > 0) sb.append(' ');
            sb.append(id.equals(activeId) ? "[" + id + "]" : id);
            String reason = failures.get(id);
            if (reason != null) sb.append("(failed: ").append(reason).append(')');
        }
        return sb.toString();
    }

    // ---- tunables and building ----

    /**
     * Builds {@code id} for {@code context} with its tunables: {@code configured} (by name; may be empty) under
     * the values set at run time. A value out of range or a name the plugin lacks is the family's tunable
     * error; a factory that throws, or builds nothing or another id, the family's start error.
     */
    public P build(String id, C context, Map<String, Long> configured) {
        F factory;
        Map<String, Long> values;
        synchronized (this) {
            factory = entry(id).factory();
            values = values(id, configured);
        }
        P p;
        try {
            p = family.create(factory, context, values);
        } catch (RuntimeException e) {
            throw family.failedToStart(family.noun() + " " + id + " failed to start: " + e, e);
        }
        if (p == null)
            throw family.failedToStart(family.noun() + " " + id + " failed to start: its factory built nothing", null);
        String says = family.idOf(p);
        if (says != null && !says.equals(id))
            throw family.failedToStart(family.noun() + " " + id + " built one that calls itself " + says, null);
        return p;
    }

    /** Every tunable's value of {@code id}: its default, {@code configured} over it, the run-time value over both. */
    public synchronized Map<String, Long> values(String id, Map<String, Long> configured) {
        PluginFamily.Described d = entry(id).info();
        Map<String, Long> given = new HashMap<>(configured);
        given.putAll(runTime.getOrDefault(id, Map.of()));
        try {
            return Tunable.resolve(id, d.tunables(), given);
        } catch (IllegalArgumentException e) {
            throw family.badTunable(e.getMessage());
        }
    }

    /** Every tunable of {@code id} with its value: its default, {@code configured}, the run-time value. */
    public synchronized Map<Tunable, Long> tunables(String id, Map<String, Long> configured) {
        PluginFamily.Described d = entry(id).info();
        Map<String, Long> values = values(id, configured);
        Map<Tunable, Long> out = new LinkedHashMap<>();
        for (Tunable t : d.tunables()) out.put(t, values.get(t.name()));
        return out;
    }

    /**
     * Sets tunable {@code name} of registered plugin {@code id} for every product built from now on; a name it
     * lacks or a value out of range is the family's error and changes nothing.
     */
    public synchronized void setTunable(String id, String name, long value) {
        PluginFamily.Described d = entry(id).info();
        Map<String, Long> next = new LinkedHashMap<>(runTime.getOrDefault(id, Map.of()));
        next.put(name, value);
        try {
            Tunable.resolve(id, d.tunables(), next);
        } catch (IllegalArgumentException e) {
            throw family.badTunable(e.getMessage());
        }
        runTime.put(id, Map.copyOf(next));
    }

    /** Drops the value set at run time for tunable {@code name} of {@code id}: the configured one, or the default, applies. */
    public synchronized void resetTunable(String id, String name) {
        Map<String, Long> set = runTime.get(id);
        if (set == null || !set.containsKey(name)) return;
        Map<String, Long> next = new LinkedHashMap<>(set);
        next.remove(name);
        runTime.put(id, Map.copyOf(next));
    }

    /** The values set at run time for {@code id} (possibly none). */
    public synchronized Map<String, Long> runTimeValues(String id) {
        return runTime.getOrDefault(id, Map.of());
    }

    /** The run-time values a just registered {@code id} refuses (a revision without that tunable) go, logged. */
    private void dropRefusedTunables(String id) {
        Map<String, Long> set = runTime.get(id);
        if (set == null) return;
        List<Tunable> has = byId.get(id).info().tunables();
        Map<String, Long> kept = new LinkedHashMap<>();
        set.forEach((name, value) -> {
            try {
                Tunable.resolve(id, has, Map.of(name, value));
                kept.put(name, value);
            } catch (IllegalArgumentException e) {
                LOG.warn("{} {}: the value set before it registered again is dropped: {}", family.noun(), id,
                        e.getMessage());
            }
        });
        runTime.put(id, Map.copyOf(kept));
    }

    /** The run-time values of this registry's tunables as a shell sets and reads them. */
    public TunableValues tunableValues() {
        return new TunableValues(this);
    }

    /** {@link #setTunable} and {@link #runTimeValues} under the names a shell uses. */
    public static final class TunableValues {
        private final PluginRegistry<?, ?, ?> registry;

        private TunableValues(PluginRegistry<?, ?, ?> registry) {
            this.registry = registry;
        }

        /** Sets a value of a registered plugin; refused values change nothing. */
        public void set(String id, String name, long value) {
            registry.setTunable(id, name, value);
        }

        /** The values set for {@code id} (possibly none). */
        public Map<String, Long> overrides(String id) {
            return registry.runTimeValues(id);
        }
    }
}
