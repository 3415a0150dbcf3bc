package org.blockyard.runtime.alloc;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import com.typesafe.config.Config;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.AllocationPolicyFactory;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.api.alloc.PolicyDescriptor;
import org.blockyard.api.plugin.Tunable;

/**
 * The allocation policies an allocator can run, by id and alias, in registration order: the built-in ones
 * and those plugins register while their bundles are active. The policy counterpart of the elevator
 * registry, with the same rules:
 * <ul>
 * <li>The default must be built in, so the fallback always exists.</li>
 * <li>{@link #select} (configuration, start-up): a name that is not available falls back to the default,
 *     logged with both names. {@link #lookup} (a switch asked for at run time): an unknown name is an error.</li>
 * <li>Built-in policies cannot be unregistered; a plugin with an id or alias already taken is refused.</li>
 * <li>A policy retired for a fault ({@link #markFailed}) is listed with the reason and cannot be selected
 *     until its plugin registers it anew.</li>
 * <li>Tunables are kept per id ({@link #setTunable}) and applied whenever that policy is built.</li>
 * </ul>
 * Thread-safe: the allocator's actors, the shell and OSGi service callbacks all call it.
 */
public final class PolicyRegistry {
    private static final Logger LOG = LoggerFactory.getLogger(PolicyRegistry.class);

    public static final String RESERVATION = "reservation";

    private final Map<String, AllocationPolicyFactory> byId = new LinkedHashMap<>();
    private final Map<String, Map<String, Long>> tunables = new HashMap<>();
    private final Map<String, String> failed = new LinkedHashMap<>();
    private final Set<String> builtIn;
    private final String defaultId;

    /** The result of resolving a configured or requested name. */
    public record Selection(String requested, String id, boolean fellBack) {}

    public PolicyRegistry(List<AllocationPolicyFactory> builtIns, String defaultId) {
        for (AllocationPolicyFactory f : builtIns) add(f);
        this.builtIn = Set.copyOf(byId.keySet());
        Optional<String> d = resolve(defaultId);
        if (d.isEmpty() || !builtIn.contains(d.get()))
            throw new IllegalArgumentException("the default allocation policy '" + defaultId + "' must be built in"
                    + " (built in: " + String.join(", ", builtIn) + ")");
        this.defaultId = d.get();
    }

    /**
     * The built-in policy, {@code reservation}, the default. Others ({@code no-reservation} and the rest) are
     * plugins: registered from OSGi services by a host, or by the code that starts the allocator.
     */
    public static PolicyRegistry builtIn() {
        return new PolicyRegistry(List.of(ReservationPolicy.FACTORY), RESERVATION);
    }

    /** The built-in policies with {@code blockyard.alloc.reservation} applied as reservation's tunables. */
    public static PolicyRegistry fromConfig(Config config) {
        PolicyRegistry r = builtIn();
        Config c = config.getConfig("blockyard.alloc.reservation");
        String mode = c.getString("mode");
        if (!mode.equals("ext3") && !mode.equals("extended"))
            throw new IllegalArgumentException("blockyard.alloc.reservation.mode is '" + mode
                    + "'; it must be ext3 or extended");
        r.setTunable(RESERVATION, ReservationPolicy.EXTENDED_TUNABLE, mode.equals("extended") ? 1 : 0);
        r.setTunable(RESERVATION, ReservationPolicy.INITIAL_TUNABLE, c.getLong("initial-window-blocks"));
        r.setTunable(RESERVATION, ReservationPolicy.EXT3_MAX_TUNABLE, c.getLong("ext3-max-window-blocks"));
        r.setTunable(RESERVATION, ReservationPolicy.EXTENDED_MAX_TUNABLE, c.getLong("extended-max-window-blocks"));
        return r;
    }

    private static String normalize(String name) {
        return name == null ? "" : name.trim().toLowerCase(Locale.ROOT);
    }

    /** Adds a plugin's policy; refused when its id or an alias is taken. Clears an earlier failure of that id. */
    public synchronized void register(AllocationPolicyFactory factory) {
        add(factory);
        failed.remove(factory.descriptor().id());
        LOG.info("allocation policy {} registered", factory.descriptor().id());
    }

    private void add(AllocationPolicyFactory factory) {
        PolicyDescriptor d = factory.descriptor();
        if (resolve(d.id()).isPresent())
            throw new IllegalArgumentException("allocation policy " + d.id() + " is already registered");
        for (String alias : d.aliases())
            if (resolve(alias).isPresent())
                throw new IllegalArgumentException("alias '" + alias + "' of " + d.id() + " is already taken");
        byId.put(d.id(), factory);
    }

    /** Removes a plugin's policy; built-in ones stay. Answers whether it was registered. */
    public synchronized boolean unregister(String id) {
        if (builtIn.contains(id))
            throw new IllegalArgumentException("built-in allocation policy " + id + " cannot be removed");
        boolean was = byId.remove(id) != null;
        if (was) LOG.info("allocation policy {} unregistered", id);
        return was;
    }

    /** The id {@code name} (an id or alias) stands for, if registered. */
    public synchronized Optional<String> resolve(String name) {
        String n = normalize(name);
        if (byId.containsKey(n)) return Optional.of(n);
        for (var e : byId.entrySet())
            if (e.getValue().descriptor().aliases().contains(n)) return Optional.of(e.getKey());
        return Optional.empty();
    }

    /**
     * The id of {@code name} for a switch at run time: unknown or failed is an
     * {@link AllocationException.InvalidRequest} naming what is registered.
     */
    public synchronized String lookup(String name) {
        String id = resolve(name).orElseThrow(() -> new AllocationException.InvalidRequest("no allocation policy '"
                + name + "' (registered: " + String.join(" ", byId.keySet()) + ")"));
        String why = failed.get(id);
        if (why != null)
            throw new AllocationException.InvalidRequest("allocation policy " + id + " was retired after a fault ("
                    + why + "); it can be selected again once its plugin registers it anew");
        return id;
    }

    /** Start-up selection: {@code requested} if available, else the default, logged with both names. */
    public synchronized Selection select(String requested) {
        Optional<String> id = resolve(requested);
        if (id.isPresent() && !failed.containsKey(id.get())) return new Selection(requested, id.get(), false);
        LOG.warn("allocation policy {} not found; using the default, {}", requested, defaultId);
        return new Selection(requested, defaultId, true);
    }

    /** Builds policy {@code id} for {@code geometry} with its tunables; a factory that throws is refused. */
    public AllocationPolicy build(String id, Geometry geometry) {
        AllocationPolicyFactory f;
        Map<String, Long> values;
        synchronized (this) {
            f = factory(id);
            values = f.descriptor().resolve(tunables.getOrDefault(id, Map.of()));
        }
        AllocationPolicy p;
        try {
            p = f.create(geometry, values);
        } catch (RuntimeException e) {
            throw new AllocationException.InvalidRequest("allocation policy " + id + " failed to start: " + e);
        }
        if (p == null || !id.equals(p.id()))
            throw new AllocationException.InvalidRequest("allocation policy " + id + " built a policy that calls itself "
                    + (p == null ? "nothing" : p.id()));
        return p;
    }

    /** Sets tunable {@code name} of policy {@code id} for the next build; a bad name or value changes nothing. */
    public synchronized void setTunable(String id, String name, long value) {
        AllocationPolicyFactory f = factory(id);
        Map<String, Long> next = new HashMap<>(tunables.getOrDefault(id, Map.of()));
        next.put(name, value);
        f.descriptor().resolve(next); // refuses an unknown name or a value out of range
        tunables.put(id, Map.copyOf(next));
    }

    /** Every tunable of policy {@code id} with its value now. */
    public synchronized Map<Tunable, Long> tunables(String id) {
        AllocationPolicyFactory f = factory(id);
        Map<String, Long> values = f.descriptor().resolve(tunables.getOrDefault(id, Map.of()));
        Map<Tunable, Long> out = new LinkedHashMap<>();
        for (Tunable t : f.descriptor().tunables()) out.put(t, values.get(t.name()));
        return out;
    }

    /** Retires {@code id} after a fault: listed with {@code reason}, refused by {@link #lookup} until registered anew. */
    public synchronized void markFailed(String id, String reason) {
        if (builtIn.contains(id) && id.equals(defaultId)) return; // the last resort stays selectable
        failed.put(id, reason);
    }

    public synchronized Map<String, String> failures() {
        return Map.copyOf(failed);
    }

    public String defaultId() {
        return defaultId;
    }

    public boolean isBuiltIn(String id) {
        return builtIn.contains(id);
    }

    public synchronized List<String> ids() {
        return new ArrayList<>(byId.keySet());
    }

    public synchronized PolicyDescriptor descriptor(String id) {
        return factory(id).descriptor();
    }

    private AllocationPolicyFactory factory(String id) {
        AllocationPolicyFactory f = byId.get(id);
        if (f == null)
            throw new AllocationException.InvalidRequest("no allocation policy '" + id + "' (registered: "
                    + String.join(" ", byId.keySet()) + ")");
        return f;
    }

    /** {@code no-reservation [reservation]}: every registered id, the active one in brackets, failed ones marked. */
    public synchronized String listing(String activeId) {
        StringBuilder sb = new StringBuilder();
        for (String id : byId.keySet()) {
            if (sb.length() > 0) sb.append(' ');
            sb.append(id.equals(activeId) ? "[" + id + "]" : id);
            if (failed.containsKey(id)) sb.append("(failed: ").append(failed.get(id)).append(')');
        }
        return sb.toString();
    }
}
