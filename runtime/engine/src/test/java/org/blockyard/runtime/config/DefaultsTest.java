package org.blockyard.runtime.config;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.typesafe.config.ConfigFactory;
import org.junit.jupiter.api.Test;

/** An embedder that loads its configuration the usual way gets the engine's defaults. */
class DefaultsTest {

    @Test
    void theEngineDefaultsReachAnyTypesafeConfigUser() {
        ConfigFactory.invalidateCaches();
        var plain = ConfigFactory.load();
        var ours = BlockyardConfig.load();
        assertEquals(ours.getString("blockyard.alloc.policy"), plain.getString("blockyard.alloc.policy"));
        assertEquals(ours.getInt("blockyard.volume.blocks-per-group"), plain.getInt("blockyard.volume.blocks-per-group"));
        assertEquals(ours.getString("blockyard.io.scheduler"), plain.getString("blockyard.io.scheduler"));
    }
}
