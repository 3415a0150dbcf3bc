package org.blockyard.runtime.config;

import java.nio.file.Files;
import java.nio.file.Path;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;

/** Loads the configuration: system properties, then an optional user file, then config/blockyard.conf. */
public final class BlockyardConfig {
    private BlockyardConfig() {}

    /** The defaults with system-property overrides. */
    public static Config load() {
        return load(null);
    }

    /** The defaults, layered under {@code userFile} when given, with system-property overrides on top. */
    public static Config load(Path userFile) {
        Config defaults = ConfigFactory.parseResources(BlockyardConfig.class.getClassLoader(), "blockyard.conf");
        if (defaults.isEmpty()) throw new IllegalStateException("blockyard.conf is missing from the class path");
        Config user = ConfigFactory.empty();
        if (userFile != null) {
            if (!Files.isReadable(userFile))
                throw new IllegalArgumentException("configuration file not readable: " + userFile);
            user = ConfigFactory.parseFile(userFile.toFile());
        }
        return ConfigFactory.systemProperties()
                .withFallback(user)
                .withFallback(defaults)
                .withFallback(ConfigFactory.defaultReference(BlockyardConfig.class.getClassLoader()))
                .resolve();
    }
}
