package org.blockyard.benches;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;

import org.junit.jupiter.api.Test;

import org.blockyard.runtime.config.BlockyardConfig;

/** A short BlueStore-style aging run through the extent interface. */
class ExtentAgingTest {

    @Test
    void anAgedVolumeServesAtMostTwoPercentOfAllocationsInMoreThanOneExtent() {
        // 1 GiB: 8 groups of 128 MiB; fill to 85%, free to 65%, refill, four times; 64 KiB units.
        Aging.Spec spec = new Aging.Spec(1L << 30, 64 << 10, 0.85, 0.65, 4, 16L << 20, 4L << 20, 4L << 20, 1);
        Map<String, Object> row = Aging.run(Aging.BLOCKYARD, spec, BlockyardConfig.load(), null);
        assertEquals(0L, row.get("short_allocations"));
        double split = (Double) row.get("split_pct");
        assertTrue(split <= 2.0, split + "% of " + row.get("allocations") + " allocations were split");
    }
}
