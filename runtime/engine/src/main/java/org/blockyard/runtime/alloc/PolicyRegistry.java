package org.blockyard.runtime.alloc;

import java.util.List;
import java.util.Map;

import com.typesafe.config.Config;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.AllocationPolicyFactory;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.api.alloc.PolicyDescriptor;
import org.blockyard.runtime.plugin.PluginFamily;
import org.blockyard.runtime.plugin.PluginRegistry;

/**
 * The allocation policies an allocator can run: a {@link PluginRegistry} (its rules are every family's) of
 * {@link AllocationPolicyFactory}s, whose errors are {@link AllocationException.InvalidRequest}s. The default,
 * {@code reservation}, is also the last resort; a policy must call itself by the id it was built as.
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

    public PolicyRegistry(List<AllocationPolicyFactory> builtIns, String defaultId) {
        super(POLICIES, builtIns, defaultId);
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

    /** Builds policy {@code id} for {@code geometry} with its tunables. */
    public AllocationPolicy build(String id, Geometry geometry) {
        return build(id, geometry, Map.of());
    }

    public PolicyDescriptor descriptor(String id) {
        return factory(id).descriptor();
    }
}
