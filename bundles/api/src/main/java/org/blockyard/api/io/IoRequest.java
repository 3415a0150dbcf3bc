package org.blockyard.api.io;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * One submission to a {@link BlockQueue} (a Linux bio). The queue may merge it with adjacent submissions of
 * the same kind into one device request; its completion is still reported on its own.
 *
 * @param id      the submitter's id for it; echoed in the {@link IoCompletion}
 * @param sector  first sector, in 512-byte units
 * @param sectors length in 512-byte sectors; 0 for a FLUSH, positive otherwise
 * @param op      READ, WRITE or FLUSH
 * @param flags   SYNC, META, AHEAD, FUA (an unmodifiable set; may be empty; FUA only on a WRITE)
 * @param owner   the io context that submits it (a file or process id)
 * @param payload for a real device: the bytes to write, or the buffer a read fills
 *                ({@code sectors * 512} bytes remaining); {@code null} when the data does not matter
 *                (simulated disk, benchmarks that only count)
 */
public record IoRequest(long id, long sector, int sectors, IoOp op, Set<IoFlag> flags, long owner,
                        ByteBuffer payload) {
    public static final int SECTOR_BYTES = 512;

    public IoRequest {
        if (op == null) throw new IllegalArgumentException("op is required");
        if (sector < 0) throw new IllegalArgumentException("negative start sector " + sector);
        if (op == IoOp.FLUSH ? sectors != 0 : sectors <= 0)
            throw new IllegalArgumentException(op + " of " + sectors + " sectors");
        if (payload != null && payload.remaining() != (long) sectors * SECTOR_BYTES)
            throw new IllegalArgumentException("payload of " + payload.remaining() + " bytes for "
                    + sectors + " sectors");
        flags = canonical(flags);
        if (flags.contains(IoFlag.FUA) && op != IoOp.WRITE)
            throw new IllegalArgumentException("FUA on a " + op + ": only a WRITE can be forced");
    }

    /** One shared unmodifiable set per combination of flags: requests are made by the hundred thousand. */
    private static final List<Set<IoFlag>> FLAG_SETS = flagSets();

    private static List<Set<IoFlag>> flagSets() {
        IoFlag[] all = IoFlag.values();
        List<Set<IoFlag>> sets = new ArrayList<>(1 << all.length);
        for (int mask = 0; mask < 1 << all.length; mask++) {
            EnumSet<IoFlag> s = EnumSet.noneOf(IoFlag.class);
            for (IoFlag f : all) if ((mask & 1 << f.ordinal()) != 0) s.add(f);
            sets.add(Collections.unmodifiableSet(s));
        }
        return List.copyOf(sets);
    }

    private static Set<IoFlag> canonical(Set<IoFlag> flags) {
        if (flags == null || flags.isEmpty()) return FLAG_SETS.get(0);
        int mask = 0;
        for (IoFlag f : flags) mask |= 1 << f.ordinal();
        return FLAG_SETS.get(mask);
    }

    public static IoRequest read(long id, long sector, int sectors, long owner) {
        return new IoRequest(id, sector, sectors, IoOp.READ, null, owner, null);
    }

    public static IoRequest write(long id, long sector, int sectors, long owner) {
        return new IoRequest(id, sector, sectors, IoOp.WRITE, null, owner, null);
    }

    public static IoRequest flush(long id, long owner) {
        return new IoRequest(id, 0, 0, IoOp.FLUSH, null, owner, null);
    }

    /** This request with {@code more} flags added. */
    public IoRequest with(IoFlag first, IoFlag... more) {
        EnumSet<IoFlag> f = EnumSet.of(first, more);
        f.addAll(flags);
        return new IoRequest(id, sector, sectors, op, f, owner, payload);
    }

    /** This request carrying {@code data} (exactly {@code sectors * 512} bytes remaining). */
    public IoRequest withPayload(ByteBuffer data) {
        return new IoRequest(id, sector, sectors, op, flags, owner, data);
    }

    /** First sector after the request (exclusive end). */
    public long endSector() {
        return sector + sectors;
    }

    public boolean has(IoFlag flag) {
        return flags.contains(flag);
    }
}
