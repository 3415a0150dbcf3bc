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
 * {@code bench powerloss} in small: many crash states per cut point, built from the recorded write stream of a
 * mixed load, all recover to what was acknowledged before their cut, fsck finds them clean, and so do power cuts
 * of their repairs; a second run of the same seed records the same stream and finds the same.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class PowerLossTest {
    @TempDir
    Path dir;

    @Test
    void everyCrashStateOfAMixedLoadHoldsWhatWasAcknowledgedBeforeItsCut() throws Exception {
        PowerLoss.Spec spec = new PowerLoss.Spec(4, 30, 20, 600, 150, true, 10);
        PowerLoss.Result r = new PowerLoss(spec, BlockyardConfig.load(), dir).run(null);
        assertTrue(r.ops() > 120 && r.flushes() > 40, "a load with flushes to cut at: " + r);
        assertEquals(30, r.cuts());
        assertTrue(r.states() > 30 * 5, "several states per cut point: " + r.states());
        assertTrue(r.failures().isEmpty(), () -> r.failures().size() + " states did not hold: " + r.failures());
        assertEquals(r.states(), r.recovered());
        assertEquals(3, r.full(), "every tenth cut's first state opened from a file");
        assertEquals(1, r.repairs(), "the first of them repaired, and the repair cut by power");
    }

    @Test
    void aSeedReplaysTheSameStreamTheSameStatesAndTheSameFindings() throws Exception {
        PowerLoss.Spec spec = new PowerLoss.Spec(5, 8, 8, 64, 100, true, 0);
        PowerLoss.Result r = new PowerLoss(spec, BlockyardConfig.load(), dir).run(null);
        PowerLoss.Result again = new PowerLoss(spec, BlockyardConfig.load(), dir).run(null);
        assertEquals(r.streamDigest(), again.streamDigest(), "the same seed records the same write stream");
        assertEquals(r.events(), again.events());
        assertEquals(r.reportDigest(), again.reportDigest(), "and builds the same states, finding the same");
        assertEquals(r.states(), again.states());
    }
}
