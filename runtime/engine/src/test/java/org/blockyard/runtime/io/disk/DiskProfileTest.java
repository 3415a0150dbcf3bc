package org.blockyard.runtime.io.disk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.blockyard.runtime.config.BlockyardConfig;
import org.junit.jupiter.api.Test;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;

class DiskProfileTest {

    private static final DiskProfile P = DiskProfile.default7200();

    @Test
    void theShippedConfigurationDescribesTheDefault7200RpmDisk() {
        assertEquals(P, DiskProfile.fromConfig(BlockyardConfig.load()));
    }

    @Test
    void theDefaultMatchesTheBarracudaFigures() {
        assertEquals(7200, P.rpm());
        assertEquals(8_333_333.3, P.revolutionNanos(), 0.1);
        assertEquals(P.geometrySectors(), P.capacitySectors());
        assertEquals(11, P.zones().size());
        assertEquals(11.4e6, P.mediaBytesPerSecond(0), 0.1e6);
        assertEquals(7.3e6, P.mediaBytesPerSecond(10), 0.1e6);
        // measured seeks: 10 -> 2.351, 100 -> 4.158, 500 -> 6.137, 1000 -> 8.114, 4000 -> 14.615 ms
        assertEquals(2_351_000, P.seekNanos(10), 250_000);
        assertEquals(4_158_000, P.seekNanos(100), 350_000);
        assertEquals(6_137_000, P.seekNanos(500), 150_000);
        assertEquals(8_114_000, P.seekNanos(1000), 100_000);
        assertEquals(14_615_000, P.seekNanos(4000), 100_000);
    }

    @Test
    void meanSeekOverRandomCylinderPairsIsAboutNineMilliseconds() {
        int c = P.cylinders();
        double sum = 0;
        for (int d = 1; d < c; d++) sum += 2.0 * (c - d) * P.seekNanos(d);
        double mean = sum / ((double) c * c);
        assertEquals(9.3e6, mean, 0.2e6);
    }

    private static Config withDisk(String overrides) {
        return ConfigFactory.parseString(overrides).withFallback(BlockyardConfig.load()).resolve();
    }

    @Test
    void zonesThatDoNotCoverTheCylindersAreRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> DiskProfile.fromConfig(withDisk("blockyard.io.disk.cylinders = 5000")));
        assertTrue(e.getMessage().startsWith("blockyard.io.disk: zones add up to 5172 cylinders"), e.getMessage());
    }

    @Test
    void zonesMustNotGrowInward() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> DiskProfile.fromConfig(withDisk(
                "blockyard.io.disk { cylinders = 20, capacity-sectors = 100, "
                        + "zones = [{cylinders = 10, sectors-per-track = 100}, {cylinders = 10, sectors-per-track = 120}] }")));
        assertTrue(e.getMessage().contains("outer to inner"), e.getMessage());
    }

    @Test
    void capacityBeyondTheGeometryIsRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> DiskProfile.fromConfig(withDisk("blockyard.io.disk.capacity-sectors = 4110000")));
        assertTrue(e.getMessage().contains("3944490"), e.getMessage());
    }

    @Test
    void aSeekCurveThatFallsAtTheBoundaryIsRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> DiskProfile.fromConfig(withDisk("blockyard.io.disk.seek.long-base = 1ms")));
        assertTrue(e.getMessage().contains("must not fall at the boundary"), e.getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> DiskProfile.fromConfig(withDisk("blockyard.io.disk.seek.single-cylinder = 3ms")));
    }

    @Test
    void missingOrMistypedKeysNameTheKey() {
        ConfigException e = assertThrows(ConfigException.class,
                () -> DiskProfile.fromConfig(withDisk("blockyard.io.disk.rpm = fast")));
        assertTrue(e.getMessage().contains("rpm"), e.getMessage());
        assertThrows(ConfigException.class, () -> DiskProfile.fromConfig(ConfigFactory.parseString("blockyard {}")));
    }

    @Test
    void negativeTimesAndEmptyZonesAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> new DiskProfile(10, 7200, 1, 1,
                List.of(new DiskProfile.Zone(1, 10)), 1, 2, 1, 1, 1, 1, -1, 0));
        assertThrows(IllegalArgumentException.class, () -> new DiskProfile(10, 7200, 1, 1, List.of(), 1, 2, 1, 1, 1, 1, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> new DiskProfile.Zone(0, 10));
        assertThrows(IllegalArgumentException.class, () -> P.seekNanos(-1));
    }
}
