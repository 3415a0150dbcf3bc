package org.blockyard.runtime.io.disk;

import java.util.List;

/**
 * Service time of one request on a rotating disk, deterministic: no random numbers, only the
 * model's own virtual clock.
 *
 * <p>service = positioning + rotational wait + transfer
 * <ul>
 *   <li>positioning: none for a request that starts right after the previous one (only the track
 *       or cylinder switch a longer transfer would have made, not counted as a seek); otherwise the seek for the cylinder distance from the head's cylinder (none on the
 *       same cylinder), at least a head switch when the surface changes; writes add the settle
 *       time when the heads moved.</li>
 *   <li>rotational wait: the platter turns continuously; at virtual time t its angle is
 *       {@code t mod revolution}. Sector s of track T starts at angle
 *       {@code skew(T) + s * revolution / sectorsPerTrack}; the model waits until it comes under
 *       the head.</li>
 *   <li>transfer: one revolution per full track, so the rate follows the zone; crossing to the
 *       next track costs a head switch, to the next cylinder a single-cylinder seek.</li>
 * </ul>
 * The virtual clock advances by each service time (the disk is modelled as always busy; idle
 * gaps between requests are the caller's to add to its own clock).
 *
 * <p>Invariant: tracks are skewed so that a transfer running off the end of a track finds the
 * first sector of the next track under the head right after the switch ({@code skew(T)} is the
 * sum of the switch times of all earlier track boundaries, modulo a revolution). So a request
 * that starts where the previous one ended waits for nothing and sequential streams approach the
 * media rate. A target within {@link #ROUNDING_NANOS} behind the head counts as reached: the
 * returned times are whole nanoseconds while the angles are not.
 *
 * <p>Not thread-safe: one owner (the device actor) calls it.
 */
public final class DiskModel {

    /** Tolerance for "the sector is under the head", covering the rounding to whole nanoseconds. */
    static final double ROUNDING_NANOS = 1.0;

    private final DiskProfile profile;
    private final double revolutionNanos;
    private final long[] zoneFirstSector;
    private final long[] zoneFirstCylinder;
    private final int[] zoneSectorsPerTrack;

    private long headCylinder;
    private int headSurface;
    private double clockNanos;
    private long nextSequentialSector = -1;
    private long seeks;
    private long busyNanos;

    public DiskModel(DiskProfile p) {
        if (p == null) throw new IllegalArgumentException("disk profile is null");
        this.profile = p;
        this.revolutionNanos = p.revolutionNanos();
        List<DiskProfile.Zone> zones = p.zones();
        zoneFirstSector = new long[zones.size()];
        zoneFirstCylinder = new long[zones.size()];
        zoneSectorsPerTrack = new int[zones.size()];
        long sector = 0;
        long cylinder = 0;
        for (int i = 0; i < zones.size(); i++) {
            DiskProfile.Zone z = zones.get(i);
            zoneFirstSector[i] = sector;
            zoneFirstCylinder[i] = cylinder;
            zoneSectorsPerTrack[i] = z.sectorsPerTrack();
            sector += (long) z.cylinders() * p.heads() * z.sectorsPerTrack();
            cylinder += z.cylinders();
        }
    }

    /**
     * Serves one request and returns its service time; moves the head to the request's last sector
     * and the clock past the request.
     *
     * @param sector first 512-byte sector, below {@link #capacitySectors()}
     * @param sectors length, at least 1; the request must end within the capacity
     */
    public long serviceNanos(boolean write, long sector, int sectors) {
        long capacity = profile.capacitySectors();
        if (sectors <= 0) throw new IllegalArgumentException("request of " + sectors + " sectors; at least 1 is needed");
        if (sector < 0 || sector >= capacity)
            throw new IllegalArgumentException("sector " + sector + " outside the disk (0.." + (capacity - 1) + ")");
        if (sectors > capacity - sector)
            throw new IllegalArgumentException("request " + sector + " + " + sectors + " runs past the end of the disk ("
                    + capacity + " sectors)");

        int zone = zoneOf(sector);
        int perTrack = zoneSectorsPerTrack[zone];
        long sectorsPerCylinder = (long) perTrack * profile.heads();
        long offset = sector - zoneFirstSector[zone];
        long cylinder = zoneFirstCylinder[zone] + offset / sectorsPerCylinder;
        int surface = (int) (offset % sectorsPerCylinder / perTrack);
        int inTrack = (int) (offset % perTrack);

        double positioning = 0;
        long distance = Math.abs(cylinder - headCylinder);
        if (sector == nextSequentialSector) {
            // the stream goes on: only the switch a longer transfer would have paid
            if (distance > 0) positioning = profile.singleCylinderSeekNanos();
            else if (surface != headSurface) positioning = profile.headSwitchNanos();
        } else if (distance > 0) {
            seeks++;
            positioning = profile.exactSeekNanos(distance);
            if (surface != headSurface) positioning = Math.max(positioning, profile.headSwitchNanos());
        } else if (surface != headSurface) {
            positioning = profile.headSwitchNanos();
        }
        if (write && positioning > 0 && sector != nextSequentialSector) positioning += profile.writeSettleNanos();

        double headAngle = floorMod(clockNanos + positioning);
        double target = floorMod(skewNanos(cylinder, surface) + inTrack * revolutionNanos / perTrack);
        double wait = floorMod(target - headAngle);
        if (wait > revolutionNanos - ROUNDING_NANOS) wait = 0;

        double transfer = 0;
        int left = sectors;
        while (true) {
            int run = Math.min(left, perTrack - inTrack);
            transfer += run * revolutionNanos / perTrack;
            left -= run;
            if (left == 0) break;
            inTrack = 0;
            if (++surface == profile.heads()) {
                surface = 0;
                cylinder++;
                transfer += profile.singleCylinderSeekNanos();
                if (zone + 1 < zoneFirstCylinder.length && cylinder == zoneFirstCylinder[zone + 1]) {
                    zone++;
                    perTrack = zoneSectorsPerTrack[zone];
                }
            } else {
                transfer += profile.headSwitchNanos();
            }
        }

        double total = positioning + wait + transfer;
        long nanos = Math.round(total);
        clockNanos += total;
        busyNanos += nanos;
        headCylinder = cylinder;
        headSurface = surface;
        nextSequentialSector = sector + sectors;
        return nanos;
    }

    /** Requests that moved the heads to another cylinder. */
    public long seeks() {
        return seeks;
    }

    public long capacitySectors() {
        return profile.capacitySectors();
    }

    /** Sum of the service times returned so far. */
    public long busyNanos() {
        return busyNanos;
    }

    public DiskProfile profile() {
        return profile;
    }

    /** The cylinder the heads are on. */
    public long headCylinder() {
        return headCylinder;
    }

    /** Cylinder of {@code sector} (for callers that order requests by position). */
    public long cylinderOf(long sector) {
        if (sector < 0 || sector >= profile.geometrySectors())
            throw new IllegalArgumentException("sector " + sector + " outside the disk");
        int zone = zoneOf(sector);
        return zoneFirstCylinder[zone] + (sector - zoneFirstSector[zone]) / ((long) zoneSectorsPerTrack[zone] * profile.heads());
    }

    private int zoneOf(long sector) {
        int zone = zoneFirstSector.length - 1;
        while (zoneFirstSector[zone] > sector) zone--;
        return zone;
    }

    /** Angle (as time into a revolution) where track (cylinder, surface) starts; see the class comment. */
    private double skewNanos(long cylinder, int surface) {
        long track = cylinder * profile.heads() + surface;
        long headSwitches = track - cylinder;
        return floorMod(headSwitches * (double) profile.headSwitchNanos()
                + cylinder * (double) profile.singleCylinderSeekNanos());
    }

    private double floorMod(double nanos) {
        double r = nanos - Math.floor(nanos / revolutionNanos) * revolutionNanos;
        return r >= revolutionNanos ? 0 : r;
    }
}
