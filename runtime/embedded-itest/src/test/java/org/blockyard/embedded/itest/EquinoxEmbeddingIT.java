package org.blockyard.embedded.itest;

import java.util.Map;

/** The embedded bundle in Eclipse Equinox. */
class EquinoxEmbeddingIT extends EmbeddingScenario {
    @Override
    String factoryClass() {
        return "org.eclipse.osgi.launch.EquinoxFactory";
    }

    /** No boot delegation beyond java.*: a package the bundle does not import must fail, as in Felix. */
    @Override
    Map<String, String> frameworkProperties() {
        return Map.of("osgi.compatibility.bootdelegation", "false");
    }
}
