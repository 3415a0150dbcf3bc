package org.blockyard.runtime.alloc;

import java.util.List;
import java.util.Map;

import com.typesafe.config.Config;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.AllocationPolicyFactory;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.api.alloc.PolicyDescriptor;
import org.blockyard.api.plugin.Tunable;
import org.blockyard.runtime.plugin.PluginFamily;
import org.blockyard.runtime.plugin.PluginRegistry;

/**
 * The allocation policies an allocator can run: a {@link PluginRegistry} (its rules are every family's) of
 * {@link AllocationPolicyFactory}s, whose errors are {@link AllocationException.InvalidRequest}s. The default,
 * {@code reservation}, is also the last resort; a policy must call itself by the id it was built as. The
 * configured tunables ({@code blockyard.alloc.reservation}) are kept here, under those set at run time.
 */
public final class PolicyRegistry extends PluginRegistry<AllocationPolicyFactory, Geometry, AllocationPolicy> {

    public static final String RESERVATION = "reservation";

    private static final PluginFamily<AllocationPolicyFactory, Geometry, AllocationPolicy> POLICIES =
            new PluginFamily<>() {
                @Override public String noun() { return "allocation policy"; }

                @Override
                public Described describe(AllocationPolicyFactory factory) {
                    PolicyDescriptor d = factory.descriptor();
                    return new Described(d.id(), d.aliases(), d.description(), d.tunables());
                }

                @Override
                public AllocationPolicy create(AllocationPolicyFactory factory, Geometry geometry,
                                               Map<String, Long> tunables) {
                    return factory.create(geometry, tunables);
                }

                @Override public String idOf(AllocationPolicy policy) { return policy.id(); }
                @Override public RuntimeException unknown(String message) { return invalid(message); }
                @Override public RuntimeException retired(String message) { return invalid(message); }
                @Override public RuntimeException badTunable(String message) { return invalid(message); }
                @Override public RuntimeException failedToStart(String message, RuntimeException cause) {
                    return invalid(message);
                }

                private RuntimeException invalid(String message) {
                    return new AllocationException.InvalidRequest(message);
                }
            };

    /** Configured tunable values by policy id, checked; under the run-time values. */
    private final Map<String, Map<String, Long>> configured;

    public PolicyRegistry(List<AllocationPolicyFactory> builtIns, String defaultId) {
        this(builtIns, defaultId, Map.of());
    }

    private PolicyRegistry(List<AllocationPolicyFactory> builtIns, String defaultId,
                           Map<String, Map<String, Long>> configured) {
        super(POLICIES, builtIns, defaultId);
        this.configured = Map.copyOf(configured);
        for (String id : this.configured.keySet()) values(id); // refuses a value out of range
    }

    /**
     * The built-in policy, {@code reservation}, the default. Others ({@code no-reservation} and the rest) are
     * plugins: registered from OSGi services by a host, or by the code that starts the allocator.
     */
    public static PolicyRegistry builtIn() {
        return new PolicyRegistry(List.of(ReservationPolicy.FACTORY), RESERVATION);
    }

    /** The built-in policies with {@code blockyard.alloc.reservation} configured as reservation's tunables. */
    public static PolicyRegistry fromConfig(Config config) {
        Config c = config.getConfig("blockyard.alloc.reservation");
        String mode = c.getString("mode");
        if (!mode.equals("ext3") && !mode.equals("extended"))
            throw new IllegalArgumentException("blockyard.alloc.reservation.mode is '" + mode
                    + "'; it must be ext3 or extended");
        Map<String, Long> reservation = Map.of(
                ReservationPolicy.EXTENDED_TUNABLE, mode.equals("extended") ? 1L : 0L,
                ReservationPolicy.INITIAL_TUNABLE, c.getLong("initial-window-blocks"),
                ReservationPolicy.EXT3_MAX_TUNABLE, c.getLong("ext3-max-window-blocks"),
                ReservationPolicy.EXTENDED_MAX_TUNABLE, c.getLong("extended-max-window-blocks"));
        return new PolicyRegistry(List.of(ReservationPolicy.FACTORY), RESERVATION, Map.of(RESERVATION, reservation));
    }

    private Map<String, Long> configured(String id) {
        return configured.getOrDefault(id, Map.of());
    }

    /** Builds policy {@code id} for {@code geometry} with its tunables. */
    public AllocationPolicy build(String id, Geometry geometry) {
        return build(id, geometry, configured(id));
    }

    /** Every tunable of policy {@code id} with its value now. */
    public Map<Tunable, Long> tunables(String id) {
        return tunables(id, configured(id));
    }

    /** Every tunable's value of policy {@code id}, by name. */
    public Map<String, Long> values(String id) {
        return values(id, configured(id));
    }

    public PolicyDescriptor descriptor(String id) {
        return factory(id).descriptor();
    }
}
