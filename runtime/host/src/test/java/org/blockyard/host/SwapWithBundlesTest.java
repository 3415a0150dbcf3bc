package org.blockyard.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.blockyard.benches.Swap;
import org.blockyard.runtime.config.BlockyardConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** bench swap in a host: switches by name while plugin bundles come and go, nothing lost, twice or wrong. */
class SwapWithBundlesTest {

    @TempDir
    Path tmp;

    @Test
    void switchingWhilePluginBundlesAreInstalledUpdatedAndUninstalledLosesNothing() throws Exception {
        PluginChurn churn = PluginChurn.of(Path.of("target", "plugins"), tmp);
        Swap.Spec spec = new Swap.Spec(1.5, 20, List.of("noop", "deadline", "fifo"),
                List.of("no-reservation", "reservation"), 2, 1L << 20, churn.actions());
        Map<String, Object> r = Swap.run(spec, BlockyardConfig.load(), null, churn.engine());

        assertEquals(40L, r.get("swaps"));
        assertEquals(20L, r.get("bundle_events"), "one install, update or uninstall per switch: " + r);
        assertTrue((Long) r.get("requests_submitted") > 0, "requests went through the elevator: " + r);
        assertEquals(r.get("requests_submitted"), r.get("requests_completed"), "every request completed: " + r);
        assertEquals(0L, r.get("requests_lost"));
        assertEquals(0L, r.get("requests_issued_twice"));
        assertEquals(2L << 20, r.get("bytes_verified"));
        assertEquals(0L, r.get("verify_errors"), "the files read back as written");
        HostFixture.assertNoThreadsLeft();
    }
}
