package org.blockyard.runtime.io.disk;

import java.util.ArrayList;
import java.util.List;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;

/**
 * The mechanics of one rotating disk, as DiskSim describes it: rotation speed, zoned layout,
 * the Ruemmler–Wilkes ("HPL") seek curve and the head-switch and write-settle delays.
 *
 * <p>Seek time for a move of {@code d} cylinders:
 * <pre>
 *   d = 0            0
 *   d = 1            singleCylinderSeekNanos
 *   1 &lt; d &lt; D        shortSeekBaseNanos + shortSeekNanosPerSqrtCylinder * sqrt(d)
 *   d &gt;= D           longSeekBaseNanos  + longSeekNanosPerCylinder * d
 * </pre>
 * with {@code D = seekBoundaryCylinders}. The curve must not fall anywhere (checked at the two
 * joins; each piece rises on its own).
 *
 * <p>Layout: zones are listed from the outer edge (cylinder 0) inward; each zone has a number of
 * cylinders and a number of 512-byte sectors per track, which must not grow inward. Sectors fill a
 * track, then the next head of the cylinder, then the next cylinder. {@code capacitySectors} may
 * be smaller than the geometry (spares); it may not be larger.
 *
 * @param capacitySectors addressable 512-byte sectors
 * @param rpm spindle speed, revolutions per minute
 * @param cylinders total cylinders; equals the sum of the zones' cylinders
 * @param heads recording surfaces (tracks per cylinder)
 * @param zones outer to inner
 * @param singleCylinderSeekNanos move to the adjacent cylinder (also the cost of a cylinder switch
 *        inside a sequential transfer)
 * @param seekBoundaryCylinders first distance of the linear (long-seek) regime
 * @param shortSeekBaseNanos constant of the square-root regime
 * @param shortSeekNanosPerSqrtCylinder multiplier of sqrt(distance) in the square-root regime
 * @param longSeekBaseNanos constant of the linear regime
 * @param longSeekNanosPerCylinder multiplier of the distance in the linear regime
 * @param headSwitchNanos switch to another surface of the same cylinder
 * @param writeSettleNanos extra settling before a write after the heads moved
 */
public record DiskProfile(
        long capacitySectors,
        int rpm,
        int cylinders,
        int heads,
        List<Zone> zones,
        long singleCylinderSeekNanos,
        long seekBoundaryCylinders,
        long shortSeekBaseNanos,
        long shortSeekNanosPerSqrtCylinder,
        long longSeekBaseNanos,
        long longSeekNanosPerCylinder,
        long headSwitchNanos,
        long writeSettleNanos) {

    /** Bytes per sector, as blktrace and the block layer count them. */
    public static final int SECTOR_BYTES = 512;

    /**
     * A band of cylinders with the same number of sectors per track.
     *
     * @param cylinders cylinders in the zone, at least 1
     * @param sectorsPerTrack 512-byte sectors on each track of the zone, at least 1
     */
    public record Zone(int cylinders, int sectorsPerTrack) {
        public Zone {
            if (cylinders < 1) throw new IllegalArgumentException("a zone needs at least 1 cylinder, got " + cylinders);
            if (sectorsPerTrack < 1)
                throw new IllegalArgumentException("a zone needs at least 1 sector per track, got " + sectorsPerTrack);
        }
    }

    public DiskProfile {
        if (rpm < 1 || rpm > 100_000) throw new IllegalArgumentException("rpm " + rpm + " outside 1..100000");
        if (cylinders < 1) throw new IllegalArgumentException("cylinders " + cylinders + " must be at least 1");
        if (heads < 1) throw new IllegalArgumentException("heads " + heads + " must be at least 1");
        if (zones == null || zones.isEmpty()) throw new IllegalArgumentException("at least one zone is needed");
        zones = List.copyOf(zones);
        long zoneCylinders = 0;
        long geometry = 0;
        for (int i = 0; i < zones.size(); i++) {
            Zone z = zones.get(i);
            if (i > 0 && z.sectorsPerTrack() > zones.get(i - 1).sectorsPerTrack())
                throw new IllegalArgumentException("zone " + i + " has " + z.sectorsPerTrack()
                        + " sectors per track, more than the zone outside it (" + zones.get(i - 1).sectorsPerTrack()
                        + "); zones are listed outer to inner");
            zoneCylinders += z.cylinders();
            geometry += (long) z.cylinders() * heads * z.sectorsPerTrack();
        }
        if (zoneCylinders != cylinders)
            throw new IllegalArgumentException("zones add up to " + zoneCylinders + " cylinders, but the disk has " + cylinders);
        if (capacitySectors < 1 || capacitySectors > geometry)
            throw new IllegalArgumentException("capacity " + capacitySectors + " sectors outside 1.." + geometry
                    + " (the zones hold " + geometry + ")");
        requireNonNegative("single-cylinder seek", singleCylinderSeekNanos);
        requireNonNegative("short-seek base", shortSeekBaseNanos);
        requireNonNegative("short-seek multiplier", shortSeekNanosPerSqrtCylinder);
        requireNonNegative("long-seek base", longSeekBaseNanos);
        requireNonNegative("long-seek multiplier", longSeekNanosPerCylinder);
        requireNonNegative("head switch", headSwitchNanos);
        requireNonNegative("write settle", writeSettleNanos);
        if (seekBoundaryCylinders < 2)
            throw new IllegalArgumentException("seek boundary " + seekBoundaryCylinders + " cylinders must be at least 2");
        double two = seekBoundaryCylinders > 2
                ? shortSeekBaseNanos + shortSeekNanosPerSqrtCylinder * Math.sqrt(2)
                : longSeekBaseNanos + longSeekNanosPerCylinder * 2.0;
        if (cylinders > 2 && singleCylinderSeekNanos > two)
            throw new IllegalArgumentException("single-cylinder seek " + singleCylinderSeekNanos
                    + " ns exceeds the 2-cylinder seek " + Math.round(two) + " ns; seek time must not fall with distance");
        if (seekBoundaryCylinders > 2 && seekBoundaryCylinders < cylinders) {
            double shortEnd = shortSeekBaseNanos + shortSeekNanosPerSqrtCylinder * Math.sqrt(seekBoundaryCylinders - 1);
            double longStart = longSeekBaseNanos + (double) longSeekNanosPerCylinder * seekBoundaryCylinders;
            if (shortEnd > longStart)
                throw new IllegalArgumentException("the square-root regime ends at " + Math.round(shortEnd)
                        + " ns but the linear regime starts at " + Math.round(longStart)
                        + " ns; seek time must not fall at the boundary (" + seekBoundaryCylinders + " cylinders)");
        }
    }

    private static void requireNonNegative(String what, long nanos) {
        if (nanos < 0) throw new IllegalArgumentException(what + " time " + nanos + " ns is negative");
    }

    /**
     * A 7200 rpm disk after DiskSim's validated Seagate Barracuda ST32171W: 5 surfaces, 5172
     * cylinders, 11 zones from 186 down to 119 sectors per track; single-cylinder seek 1.943 ms;
     * the HPL curve fitted to the measured seeks (d = 10, 100, 500 for the square-root part,
     * 1000..4986 for the linear part; full stroke 17.1 ms, mean over random cylinder pairs 9.3 ms);
     * head switch 0.1 ms. The measured zone boundaries were not at hand, so the zones are equal in
     * cylinders with sectors per track interpolated, which gives 3,944,490 sectors (the real disk
     * has 4,110,000). The Barracuda data has no write settle; 0.65 ms is DiskSim's HP C2247A value.
     */
    public static DiskProfile default7200() {
        int[] sectorsPerTrack = {186, 179, 173, 166, 159, 153, 146, 139, 132, 126, 119};
        List<Zone> zones = new ArrayList<>();
        for (int i = 0; i < sectorsPerTrack.length; i++)
            zones.add(new Zone(i < sectorsPerTrack.length - 1 ? 470 : 472, sectorsPerTrack[i]));
        return new DiskProfile(3_944_490L, 7200, 5172, 5, zones,
                1_943_000L, 1000L, 1_933_000L, 192_700L, 5_886_000L, 2_171L,
                100_000L, 650_000L);
    }

    /**
     * Reads the profile from {@code blockyard.io.disk} of a full configuration (see
     * config/blockyard.conf for the keys, their units and defaults).
     *
     * @throws ConfigException when a key is missing or has the wrong type
     * @throws IllegalArgumentException when the values do not describe a disk
     */
    public static DiskProfile fromConfig(Config c) {
        Config d = c.getConfig("blockyard.io.disk");
        try {
            List<Zone> zones = new ArrayList<>();
            for (Config z : d.getConfigList("zones"))
                zones.add(new Zone(z.getInt("cylinders"), z.getInt("sectors-per-track")));
            return new DiskProfile(
                    d.getLong("capacity-sectors"),
                    d.getInt("rpm"),
                    d.getInt("cylinders"),
                    d.getInt("heads"),
                    zones,
                    d.getDuration("seek.single-cylinder").toNanos(),
                    d.getLong("seek.boundary-cylinders"),
                    d.getDuration("seek.short-base").toNanos(),
                    d.getDuration("seek.short-per-sqrt-cylinder").toNanos(),
                    d.getDuration("seek.long-base").toNanos(),
                    d.getDuration("seek.long-per-cylinder").toNanos(),
                    d.getDuration("head-switch").toNanos(),
                    d.getDuration("write-settle").toNanos());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("blockyard.io.disk: " + e.getMessage(), e);
        }
    }

    /** One revolution, in nanoseconds (8,333,333.3 at 7200 rpm). */
    public double revolutionNanos() {
        return 60e9 / rpm;
    }

    /** Sectors the zones hold (at least {@link #capacitySectors()}). */
    public long geometrySectors() {
        long sum = 0;
        for (Zone z : zones) sum += (long) z.cylinders() * heads * z.sectorsPerTrack();
        return sum;
    }

    /** Seek time for a move of {@code distanceCylinders} (see the class comment). */
    public long seekNanos(long distanceCylinders) {
        if (distanceCylinders < 0) throw new IllegalArgumentException("seek distance " + distanceCylinders + " is negative");
        return Math.round(exactSeekNanos(distanceCylinders));
    }

    double exactSeekNanos(long d) {
        if (d == 0) return 0;
        if (d == 1) return singleCylinderSeekNanos;
        if (d < seekBoundaryCylinders) return shortSeekBaseNanos + shortSeekNanosPerSqrtCylinder * Math.sqrt(d);
        return longSeekBaseNanos + (double) longSeekNanosPerCylinder * d;
    }

    /** Seek from the outermost to the innermost cylinder. */
    public long fullStrokeSeekNanos() {
        return seekNanos(cylinders - 1L);
    }

    /** Media rate of zone {@code zone} (0 = outermost): one track per revolution. */
    public double mediaBytesPerSecond(int zone) {
        return zones.get(zone).sectorsPerTrack() * (double) SECTOR_BYTES * 1e9 / revolutionNanos();
    }
}
