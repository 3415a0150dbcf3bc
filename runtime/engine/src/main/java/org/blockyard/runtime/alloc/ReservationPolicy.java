package org.blockyard.runtime.alloc;

import java.util.List;
import java.util.Map;

import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.AllocationPolicyFactory;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.api.alloc.PolicyDescriptor;
import org.blockyard.api.plugin.Tunable;
import org.blockyard.api.alloc.Extent;

/**
 * The built-in policy {@code reservation}: ext3 reservation windows, in one of two modes.
 *
 * <ul>
 * <li>{@link Mode#EXT3}: ext3's semantics exactly. A window starts at 8 blocks, doubles when more than half
 * of it was used, and stops at 1027 (EXT3_MAX_RESERVE_BLOCKS); files of one directory share their home
 * group (the directory's group); a new window is searched first-fit from the goal, else from the
 * group's first data block. Concurrent sequential writers in one group are therefore cut into pieces of
 * at most one window (4 MiB at 4 KiB blocks) — the behaviour ext3 has.</li>
 * <li>{@link Mode#EXTENDED} (the default): a window keeps doubling while its stream keeps filling it, up
 * to a whole group; each newly opened file gets the home group farthest from every other open file's,
 * and a window that has no goal in a group starts in the middle of the largest gap between the
 * windows already there. N concurrent streams then each get about one extent per group they fill.</li>
 * </ul>
 *
 * <p>{@link #noReservation()} (tunable {@code initial_window_blocks = 0}): windows off (ext3's
 * {@code noreservation} mount option) with ext3's goal and group rules, which reproduces the
 * block-by-block interleaving of concurrent appenders (seed 002). Users select that behaviour by the name
 * {@code no-reservation}, which the plugin bundle {@code org.blockyard.plugin.noreservation} provides.
 */
public final class ReservationPolicy implements AllocationPolicy {

    public enum Mode { EXT3, EXTENDED }

    /** EXT3_DEFAULT_RESERVE_BLOCKS. */
    public static final int EXT3_DEFAULT_WINDOW_BLOCKS = 8;
    /** EXT3_MAX_RESERVE_BLOCKS: 1024 direct blocks + 3 indirect blocks. */
    public static final int EXT3_MAX_WINDOW_BLOCKS = 1027;

    private final String id;
    private final Mode mode;
    private final int initialWindowBlocks;
    private final int maxWindowBlocks; // 0 = a whole group

    private ReservationPolicy(String id, Mode mode, int initialWindowBlocks, int maxWindowBlocks) {
        if (initialWindowBlocks < 0) throw new IllegalArgumentException("initial window below 0 blocks");
        if (maxWindowBlocks < 0) throw new IllegalArgumentException("maximum window below 0 blocks");
        this.id = id;
        this.mode = mode;
        this.initialWindowBlocks = initialWindowBlocks;
        this.maxWindowBlocks = maxWindowBlocks;
    }

    /** Tunable names of {@code reservation}. */
    public static final String EXTENDED_TUNABLE = "extended";
    public static final String INITIAL_TUNABLE = "initial_window_blocks";
    public static final String EXT3_MAX_TUNABLE = "ext3_max_window_blocks";
    public static final String EXTENDED_MAX_TUNABLE = "extended_max_window_blocks";

    /** The built-in {@code reservation} policy: ext3's reservation windows, or the extended mode. */
    public static final AllocationPolicyFactory FACTORY = new AllocationPolicyFactory() {
        private final PolicyDescriptor descriptor = new PolicyDescriptor(PolicyRegistry.RESERVATION, List.of(),
                "ext3 reservation windows per file (extended: windows grow to a group, streams start apart)",
                List.of(new Tunable(EXTENDED_TUNABLE, 1, 0, 1, "bool",
                                "1: windows keep doubling up to a whole group and new streams start apart; 0: ext3 exactly"),
                        new Tunable(INITIAL_TUNABLE, EXT3_DEFAULT_WINDOW_BLOCKS, 0, 1 << 20, "blocks",
                                "a file's first window (EXT3_DEFAULT_RESERVE_BLOCKS): small, since most files are small;"
                                        + " 0 turns windows off, as ext3's noreservation mount option"),
                        new Tunable(EXT3_MAX_TUNABLE, EXT3_MAX_WINDOW_BLOCKS, 1, 1 << 20, "blocks",
                                "largest window in ext3 mode: 1024 direct + 3 indirect blocks (EXT3_MAX_RESERVE_BLOCKS)"),
                        new Tunable(EXTENDED_MAX_TUNABLE, 0, 0, 1 << 30, "blocks",
                                "largest window in extended mode; 0 = a whole group (a window never leaves its group)")));

        @Override
        public PolicyDescriptor descriptor() {
            return descriptor;
        }

        @Override
        public AllocationPolicy create(Geometry geometry, Map<String, Long> t) {
            boolean extended = t.get(EXTENDED_TUNABLE) == 1;
            return of(extended ? Mode.EXTENDED : Mode.EXT3, (int) (long) t.get(INITIAL_TUNABLE),
                    (int) (long) (extended ? t.get(EXTENDED_MAX_TUNABLE) : t.get(EXT3_MAX_TUNABLE)));
        }
    };

    public static ReservationPolicy ext3() {
        return new ReservationPolicy("reservation", Mode.EXT3, EXT3_DEFAULT_WINDOW_BLOCKS, EXT3_MAX_WINDOW_BLOCKS);
    }

    public static ReservationPolicy extended() {
        return new ReservationPolicy("reservation", Mode.EXTENDED, EXT3_DEFAULT_WINDOW_BLOCKS, 0);
    }

    public static ReservationPolicy of(Mode mode, int initialWindowBlocks, int maxWindowBlocks) {
        return new ReservationPolicy("reservation", mode, initialWindowBlocks, maxWindowBlocks);
    }

    /**
     * Windows off, ext3 goal and group rules: ext3 mounted with {@code noreservation} (the
     * {@code initial_window_blocks = 0} setting of this policy). The policy users select by the name
     * {@code no-reservation} is the plugin bundle {@code org.blockyard.plugin.noreservation}.
     */
    public static ReservationPolicy noReservation() {
        return new ReservationPolicy("reservation", Mode.EXT3, 0, 0);
    }

    public Mode mode() {
        return mode;
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public int initialWindowBlocks() {
        return initialWindowBlocks;
    }

    @Override
    public int nextWindowBlocks(int previousBlocks, long usedBlocks, long windowBlocks, int requestBlocks,
                                int groupDataBlocks) {
        if (previousBlocks <= 0) return 0;
        int cap = maxWindowBlocks > 0 ? Math.min(maxWindowBlocks, groupDataBlocks) : groupDataBlocks;
        long next = previousBlocks;
        // alloc_new_reservation: more than half of the old window used -> double (capped).
        if (windowBlocks > 0 && usedBlocks > windowBlocks / 2) next = Math.min((long) previousBlocks * 2, cap);
        // ext3_try_to_allocate_with_rsv: the window is at least the request.
        next = Math.max(next, Math.min(requestBlocks, groupDataBlocks));
        return (int) next;
    }

    @Override
    public int homeGroup(String file, Volume volume) {
        int groups = volume.geometry().groups();
        if (mode == Mode.EXT3) return directoryGroup(file, groups);
        // The allocator's own volume keeps an index; a scan answers the same for any other view.
        return volume instanceof VolumeState v ? v.spreadGroup() : spreadGroup(volume);
    }

    /** ext3 puts a regular file in its directory's group: files of one directory share it. */
    static int directoryGroup(String file, int groups) {
        int slash = file.lastIndexOf('/');
        String dir = slash <= 0 ? "/" : file.substring(0, slash);
        return Math.floorMod(dir.hashCode() * 0x9E3779B1, groups);
    }

    /**
     * The group in the middle of the longest circular run of groups that no open file calls home, so
     * that each new stream has the most room to grow before it meets another one. Groups with less
     * than half their data blocks free count as taken. With no such group, the least crowded group
     * with the most free space.
     */
    static int spreadGroup(Volume volume) {
        Geometry g = volume.geometry();
        int groups = g.groups();
        long halfData = (g.blocksPerGroup() - g.systemBlocksPerGroup()) / 2;
        // One pass: the longest circular run of free groups (wrapping runs are joined at the end), and the
        // least crowded group with the most free space in case every group is taken.
        int firstRunLen = -1, bestStart = -1, bestLen = 0, runStart = 0, runLen = 0;
        int fallback = 0, fallbackOpen = Integer.MAX_VALUE;
        long fallbackFree = -1;
        for (int i = 0; i < groups; i++) {
            int open = volume.openFiles(i);
            long free = volume.freeBlocks(i);
            if (open < fallbackOpen || open == fallbackOpen && free > fallbackFree) {
                fallback = i;
                fallbackOpen = open;
                fallbackFree = free;
            }
            boolean taken = open > 0 || free < halfData;
            if (!taken) {
                if (runLen++ == 0) runStart = i;
                continue;
            }
            if (firstRunLen < 0) firstRunLen = runLen;
            if (runLen > bestLen) { bestLen = runLen; bestStart = runStart; }
            runLen = 0;
        }
        if (firstRunLen < 0) return 0; // no group is taken: an empty volume starts at group 0
        if (runLen + firstRunLen > bestLen) { bestLen = runLen + firstRunLen; bestStart = runLen > 0 ? runStart : 0; }
        if (bestLen == 0) return fallback;
        // The run follows a taken group whose stream grows forward into it: start in its middle.
        return (bestStart + bestLen / 2) % groups;
    }

    @Override
    public long goal(long logicalBlock, long lastLogical, long lastPhysical, long precedingPhysical, int homeGroup,
                     Volume volume) {
        Geometry g = volume.geometry();
        // ext3_find_goal: the sequential-append fast path.
        if (lastLogical >= 0 && lastPhysical >= 0 && logicalBlock == lastLogical + 1 && lastPhysical + 1 < g.totalBlocks())
            return lastPhysical + 1;
        // ext3_find_near: near the block of the preceding logical block.
        if (precedingPhysical >= 0) return Math.min(precedingPhysical + 1, g.totalBlocks() - 1);
        // Else the home group (uncoloured: writers of one directory share the goal, as in seed 002).
        return g.groupStart(homeGroup) + g.systemBlocks(homeGroup);
    }

    /**
     * ext3: the goal, else the group's first data block. Extended: the goal when it continues something
     * (the block after the file's last or preceding block); a new file's default goal — its home group's
     * first data block, which nothing can continue since the system zone precedes it — or no goal at all
     * means "a new stream": it starts in the middle of the largest gap between the windows already there.
     */
    @Override
    public long windowSearchStart(long goal, int windowBlocks, GroupView group) {
        if (mode == Mode.EXT3) return goal >= 0 ? goal : group.firstDataBlock();
        if (goal >= 0 && goal != group.firstDataBlock()) return goal;
        return middleOfLargestGap(group);
    }

    /** Where a stream without a goal starts in a group: apart from the streams already there. */
    static long middleOfLargestGap(GroupView group) {
        List<Extent> windows = group.windows();
        if (windows.isEmpty()) return group.firstDataBlock();
        long bestStart = group.firstDataBlock();
        long bestRoom = -1;
        long cursor = group.firstDataBlock();
        boolean precededByWindow = false;
        for (int i = 0; i <= windows.size(); i++) {
            long gapEnd = i < windows.size() ? windows.get(i).start() : group.end();
            if (gapEnd > cursor) {
                // After a window, leave its stream the first half of the gap to grow into.
                long start = precededByWindow ? cursor + (gapEnd - cursor) / 2 : cursor;
                long room = gapEnd - start;
                if (room > bestRoom) { bestRoom = room; bestStart = start; }
            }
            if (i < windows.size()) {
                cursor = Math.max(cursor, windows.get(i).end());
                precededByWindow = true;
            }
        }
        return bestStart;
    }

    @Override
    public String toString() {
        return id + (initialWindowBlocks > 0 ? "(" + mode.name().toLowerCase() + ")" : "");
    }
}
