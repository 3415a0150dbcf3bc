package org.blockyard.runtime.alloc;

import com.typesafe.config.Config;

import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.Geometry;

/** The configured policy, through a {@link PolicyRegistry}. */
public final class Policies {
    private Policies() {}

    /** The configured policy ({@code blockyard.alloc.policy}); one that is not available falls back to the default, logged. */
    public static AllocationPolicy configured(Config config, Geometry geometry) {
        PolicyRegistry r = PolicyRegistry.fromConfig(config);
        return r.build(r.select(config.getString("blockyard.alloc.policy")).id(), geometry);
    }
}
