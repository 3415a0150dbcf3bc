package org.blockyard.benches;

import java.util.ArrayList;
import java.util.List;

import com.typesafe.config.Config;

import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.AllocationPolicyFactory;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.runtime.alloc.ActorBlockAllocator;
import org.blockyard.runtime.alloc.PolicyRegistry;

/**
 * The policies the benchmarks compare by name, without an OSGi framework: the built-in ones and every
 * installed plugin ({@link InstalledPlugins}: the shipped bundles and those of {@code --deploy}, which
 * {@code config} carries), registered the way a host registers their services.
 */
public final class BenchPolicies {
    private BenchPolicies() {}

    /** The built-in registry with {@code config} applied and the installed plugins registered. */
    public static PolicyRegistry registry(Config config) {
        PolicyRegistry r = PolicyRegistry.fromConfig(config);
        for (AllocationPolicyFactory f : InstalledPlugins.of(config).policies()) r.register(f);
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
        List<String> out = new ArrayList<>(registry(config).ids());
        out.addAll(List.of(extra));
        return out;
    }

    /**
     * Every name of a comma-separated {@code option} trimmed, each an installed policy's id or alias or one of
     * {@code extra}; else a {@link BadOption} listing them all. At least one name.
     */
    public static List<String> check(String option, List<String> values, Config config, String... extra) {
        PolicyRegistry r = registry(config);
        String hint = "installed are " + String.join(", ", r.ids())
                + (extra.length == 0 ? "" : "; also " + String.join(", ", extra)) + " (a plugin of your own: --deploy DIR)";
        if (values == null || values.isEmpty()) throw new BadOption(option, "", hint);
        for (String v : values)
            if (v == null || (r.resolve(v).isEmpty() && !List.of(extra).contains(v.trim()))) throw new BadOption(option, v, hint);
        return values.stream().map(String::trim).toList();
    }

    /** Registers the installed plugins with a running allocator, so it can switch to them by name. */
    public static void registerWith(ActorBlockAllocator allocator, Config config) {
        for (AllocationPolicyFactory f : InstalledPlugins.of(config).policies())
            if (allocator.policies().resolve(f.descriptor().id()).isEmpty()) allocator.registerPolicy(f);
    }
}
