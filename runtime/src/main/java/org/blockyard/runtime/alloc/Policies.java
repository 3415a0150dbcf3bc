package org.blockyard.runtime.alloc;

import com.typesafe.config.Config;

import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.Geometry;

/** Building a policy by name for one run (benchmarks, configuration), through a {@link PolicyRegistry}. */
public final class Policies {
    private Policies() {}

    /**
     * The policy {@code name} from the built-in registry with {@code config} applied, for {@code geometry}:
     * an unknown name is an {@link org.blockyard.api.alloc.AllocationException.InvalidRequest} naming what
     * exists (a benchmark asked for it explicitly).
     */
    public static AllocationPolicy byId(String name, Config config, Geometry geometry) {
        PolicyRegistry r = PolicyRegistry.fromConfig(config);
        return r.build(r.lookup(name), geometry);
    }

    /** The configured policy ({@code blockyard.alloc.policy}); one that is not available falls back to the default, logged. */
    public static AllocationPolicy configured(Config config, Geometry geometry) {
        PolicyRegistry r = PolicyRegistry.fromConfig(config);
        return r.build(r.select(config.getString("blockyard.alloc.policy")).id(), geometry);
    }
}
