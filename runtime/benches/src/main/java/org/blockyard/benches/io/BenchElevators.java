package org.blockyard.benches.io;

import java.util.List;

import com.typesafe.config.Config;

import org.blockyard.api.io.ElevatorFactory;
import org.blockyard.benches.InstalledPlugins;
import org.blockyard.runtime.io.ElevatorRegistry;

/**
 * The plugin elevators the benchmarks compare by name, without an OSGi framework: every installed plugin
 * ({@link InstalledPlugins}: the bundles the CLI ships, and those of {@code --deploy}, which {@code config}
 * carries), registered the way a host registers their services (as {@code BenchPolicies} does for
 * allocation policies).
 */
public final class BenchElevators {
    private BenchElevators() {}

    /** Registers every shipped plugin not yet in {@code registry}; answers it. */
    public static ElevatorRegistry registerWith(ElevatorRegistry registry) {
        return registerWith(registry, InstalledPlugins.shipped().elevators());
    }

    /** Registers every installed plugin (the shipped ones and {@code config}'s deployed ones) not yet in {@code registry}. */
    public static ElevatorRegistry registerWith(ElevatorRegistry registry, Config config) {
        return registerWith(registry, InstalledPlugins.of(config).elevators());
    }

    private static ElevatorRegistry registerWith(ElevatorRegistry registry, List<ElevatorFactory> plugins) {
        for (ElevatorFactory f : plugins)
            if (registry.resolve(f.descriptor().id()).isEmpty()) registry.register(f);
        return registry;
    }
}
