package org.blockyard.benches;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import org.blockyard.runtime.config.BlockyardConfig;

/**
 * {@code bench powerloss} in small: crash states built from the recorded write stream of a mixed load all recover
 * to what was acknowledged before their cut, fsck finds them clean, and so do power cuts of their repairs.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class PowerLossTest {
    @TempDir
    Path dir;

    @Test
    void everyCrashStateOfAMixedLoadHoldsWhatWasAcknowledgedBeforeItsCut() throws Exception {
        PowerLoss.Result r = new PowerLoss(new PowerLoss.Spec(4, 40, 200, true), BlockyardConfig.load(), dir).run(null);
        assertTrue(r.ops() > 150 && r.flushes() > 50, "a load with flushes to cut at: " + r);
        assertEquals(40, r.states());
        assertTrue(r.failures().isEmpty(), () -> r.failures().size() + " states did not hold: " + r.failures());
        assertEquals(40, r.recovered());
        assertEquals(40 / PowerLoss.REPAIR_EVERY, r.repairs(), "every fourth state repaired, and the repair cut by power");
    }
}
