package org.blockyard.benches;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigValueFactory;
import picocli.CommandLine.Option;

/**
 * {@code --deploy DIR}: plugin bundles a benchmark loads beside the shipped ones ({@link InstalledPlugins}), so
 * their elevators and policies can be named like the built-in ones. The folders travel in the configuration
 * ({@link InstalledPlugins#DEPLOY}), which reaches every place that builds an elevator or a policy.
 */
public final class DeployOption {

    @Option(names = "--deploy", paramLabel = "DIR",
            description = "also load the plugin jars in DIR (as a host's deploy folder holds them; or one jar), so their "
                    + "elevators and policies can be named; repeatable")
    List<Path> dirs = new ArrayList<>();

    /** {@code config} with the folders given; loads them now, so a plugin that fails is refused before any run. */
    public Config applyTo(Config config) {
        if (dirs.isEmpty()) return config;
        List<String> paths = dirs.stream().map(p -> p.toAbsolutePath().normalize().toString()).toList();
        Config c = config.withValue(InstalledPlugins.DEPLOY, ConfigValueFactory.fromIterable(paths));
        InstalledPlugins.of(c);
        return c;
    }
}
