package org.blockyard.runtime.io.bench;

import java.util.List;

import org.blockyard.api.io.ElevatorFactory;
import org.blockyard.plugin.anticipatory.AnticipatoryElevatorFactory;
import org.blockyard.plugin.cfq.CfqElevatorFactory;
import org.blockyard.runtime.io.ElevatorRegistry;

/**
 * The plugin elevators the benchmarks compare by name, without an OSGi framework: the plugins this module is
 * built with, registered the way a host registers their services (as {@code BenchPolicies} does for
 * allocation policies).
 */
public final class BenchElevators {
    private BenchElevators() {}

    /** The plugin elevators on this module's class path, in the order a listing shows them. */
    public static final List<ElevatorFactory> PLUGINS = List.of(new AnticipatoryElevatorFactory(),
            new CfqElevatorFactory());

    /** Registers every plugin not yet in {@code registry}; answers it. */
    public static ElevatorRegistry registerWith(ElevatorRegistry registry) {
        for (ElevatorFactory f : PLUGINS)
            if (registry.resolve(f.descriptor().id()).isEmpty()) registry.register(f);
        return registry;
    }
}
