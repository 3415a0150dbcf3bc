package org.blockyard.embedded.itest;

/** The embedded bundle in Apache Felix, with Felix's defaults (its system bundle exports the JDK's packages). */
class FelixEmbeddingIT extends EmbeddingScenario {
    @Override
    String factoryClass() {
        return "org.apache.felix.framework.FrameworkFactory";
    }
}
