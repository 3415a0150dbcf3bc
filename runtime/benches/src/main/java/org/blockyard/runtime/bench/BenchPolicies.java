package org.blockyard.runtime.bench;

import java.util.List;

import com.typesafe.config.Config;

import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.AllocationPolicyFactory;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.plugin.mballoc.MballocPolicyFactory;
import org.blockyard.plugin.noreservation.NoReservationPolicyFactory;
import org.blockyard.runtime.alloc.ActorBlockAllocator;
import org.blockyard.runtime.alloc.PolicyRegistry;

/**
 * The policies the benchmarks compare by name, without an OSGi framework: the built-in ones and the plugins
 * this module is built with, registered the way a host registers their services.
 */
public final class BenchPolicies {
    private BenchPolicies() {}

    /** The plugin policies on this module's class path. */
    public static final List<AllocationPolicyFactory> PLUGINS = List.of(new NoReservationPolicyFactory(),
            new MballocPolicyFactory());

    /** The built-in registry with {@code config} applied and the plugins registered. */
    public static PolicyRegistry registry(Config config) {
        PolicyRegistry r = PolicyRegistry.fromConfig(config);
        for (AllocationPolicyFactory f : PLUGINS) r.register(f);
        return r;
    }

    /**
     * Policy {@code name} for {@code geometry}; an unknown name is an
     * {@link org.blockyard.api.alloc.AllocationException.InvalidRequest} naming what exists (a benchmark asked for it).
     */
    public static AllocationPolicy byId(String name, Config config, Geometry geometry) {
        PolicyRegistry r = registry(config);
        return r.build(r.lookup(name), geometry);
    }

    /** The policy names a benchmark takes: every registered id, then {@code extra} (such as global-lock). */
    public static List<String> names(Config config, String... extra) {
        List<String> out = new java.util.ArrayList<>(registry(config).ids());
        out.addAll(List.of(extra));
        return out;
    }

    /** Registers the plugins with a running allocator, so it can switch to them by name. */
    public static void registerWith(ActorBlockAllocator allocator) {
        for (AllocationPolicyFactory f : PLUGINS) allocator.registerPolicy(f);
    }
}
