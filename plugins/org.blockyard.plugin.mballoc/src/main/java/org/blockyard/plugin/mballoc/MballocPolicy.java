package org.blockyard.plugin.mballoc;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;

/**
 * A policy modelled on ext4's multi-block allocator ({@code fs/ext4/mballoc.c}) as far as the SPI reaches;
 * it never sees a bitmap, so mballoc's buddy scans and allocation criteria stay with the runtime.
 *
 * <ul>
 * <li><b>Windows</b> ({@link #nextWindowBlocks}): {@code ext4_mb_normalize_request}. A window is a power of
 * two between {@code min_window_kib} (16 KiB) and {@code max_window_kib} (8 MiB), at least the request; the
 * predicted size doubles when more than half of the previous window was used (the file has grown into it).
 * A request larger than the cap is taken as it is. Windows of 64 blocks and more become the file's
 * preallocation in the runtime, so this is ext4's inode preallocation, capped where ext4 caps it.</li>
 * <li><b>Home group</b> ({@link #homeGroup}): ext4 places a file near its directory, and small files of
 * different CPUs go to different per-CPU locality groups. The SPI has no CPU, so the rule is per concurrent
 * writer: from the directory's group, the first of the next {@code orlov_scan_groups} groups that has at
 * least the average free space of those groups (Orlov's test) and fewer than {@code locality_max_open}
 * open files. Files of one directory written one after another share a group; concurrent writers of one
 * directory each get their own group nearby.</li>
 * <li><b>Goal</b> ({@link #goal}): ext3/ext4 find_goal (after the last block, else after the preceding
 * one, else the home group); and for a stream ({@code stream_req_blocks}, ext4 {@code mb_stream_req}) whose
 * goal group has less than {@code stream_min_free_kib} free, a group with nearly the most free space among
 * the scanned ones, looked for from halfway along them, instead of the next group round-robin, which is
 * usually the neighbour stream's group.</li>
 * <li><b>Group filter</b> ({@link #mayReserveIn}): ext4's {@code CR_GOAL_LEN_SLOW} test, free &ge; window,
 * for every group (ext3 accepts a non-goal group with more than half a window free). {@link #groupAfter}
 * has no volume, so it cannot order groups by free space: it stays linear from the goal group, as mballoc
 * walks within one criterion; free space steers placement only through the home group and the goal.</li>
 * <li><b>Search start</b> ({@link #windowSearchStart}): a continuing goal is kept. A small file's window
 * (below {@code stream_req_blocks}) starts behind the last small window in the group, so small files of a
 * locality group are packed one after another as ext4's group preallocation packs them. A stream's window
 * starts in the largest gap between the group's windows (after the first half of a gap that follows a
 * window, left to that window's stream), rounded up to a multiple of its power-of-two size from the group
 * start when it still fits, like mballoc's buddy-aligned {@code CR_POWER2_ALIGNED} pass.</li>
 * </ul>
 *
 * <p>Immutable: every field is final and set by the factory, so one instance serves every actor at once.
 */
final class MballocPolicy implements AllocationPolicy {

    static final String ID = "mballoc";

    private final int streamReqBlocks;
    private final int minWindowBlocks;
    private final int maxWindowBlocks;
    private final int localityMaxOpen;
    private final int scanGroups;
    private final long streamMinFreeBlocks;
    private final Map<String, Object> stats;

    MballocPolicy(Geometry geometry, int streamReqBlocks, long minWindowKib, long maxWindowKib, int localityMaxOpen,
                  int scanGroups, long streamMinFreeKib) {
        int block = geometry.blockSizeBytes();
        this.streamReqBlocks = streamReqBlocks;
        this.minWindowBlocks = (int) Math.max(1, ceilPow2(minWindowKib * 1024 / block));
        this.maxWindowBlocks = (int) Math.max(minWindowBlocks, floorPow2(Math.max(1, maxWindowKib * 1024 / block)));
        this.localityMaxOpen = localityMaxOpen;
        this.scanGroups = scanGroups;
        this.streamMinFreeBlocks = streamMinFreeKib * 1024 / block; // 0: streams never move
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("min_window_blocks", minWindowBlocks);
        s.put("max_window_blocks", maxWindowBlocks);
        s.put("stream_req_blocks", streamReqBlocks);
        s.put("stream_min_free_blocks", streamMinFreeBlocks);
        this.stats = java.util.Collections.unmodifiableMap(s);
    }

    @Override
    public String id() {
        return ID;
    }

    /** ext4's smallest normalised size, 16 KiB. */
    @Override
    public int initialWindowBlocks() {
        return minWindowBlocks;
    }

    @Override
    public int nextWindowBlocks(int previousBlocks, long usedBlocks, long windowBlocks, int requestBlocks,
                                int groupDataBlocks) {
        long predicted = Math.max(previousBlocks, minWindowBlocks);
        // The file filled more than half of its window: it is at least that big, predict twice its size.
        if (windowBlocks > 0 && usedBlocks > windowBlocks / 2) predicted = predicted * 2;
        long size;
        if (requestBlocks > maxWindowBlocks) size = requestBlocks; // ext4: a request above 8 MiB as it is
        else size = Math.min(ceilPow2(Math.max(predicted, requestBlocks)), maxWindowBlocks);
        return (int) Math.max(1, Math.min(size, groupDataBlocks));
    }

    @Override
    public int homeGroup(String file, Volume volume) {
        int groups = volume.geometry().groups();
        int dir = directoryGroup(file, groups);
        int n = Math.min(groups, scanGroups);
        long total = 0;
        for (int i = 0; i < n; i++) total += volume.freeBlocks((dir + i) % groups);
        long average = total / n;
        int fallback = dir, fallbackOpen = Integer.MAX_VALUE;
        long fallbackFree = -1;
        for (int i = 0; i < n; i++) {
            int g = (dir + i) % groups;
            int open = volume.openFiles(g);
            long free = volume.freeBlocks(g);
            if (free > 0 && free >= average && open < localityMaxOpen) return g;
            if (free > 0 && (open < fallbackOpen || open == fallbackOpen && free > fallbackFree)) {
                fallback = g;
                fallbackOpen = open;
                fallbackFree = free;
            }
        }
        return fallback; // every scanned group is crowded or below average: the least crowded, then the emptiest
    }

    /** The directory's group: files of one directory start their search at the same group. */
    static int directoryGroup(String file, int groups) {
        int slash = file.lastIndexOf('/');
        String dir = slash <= 0 ? "/" : file.substring(0, slash);
        return Math.floorMod(dir.hashCode() * 0x9E3779B1, groups);
    }

    @Override
    public long goal(long logicalBlock, long lastLogical, long lastPhysical, long precedingPhysical, int homeGroup,
                     Volume volume) {
        Geometry g = volume.geometry();
        long goal;
        if (lastLogical >= 0 && lastPhysical >= 0 && logicalBlock == lastLogical + 1 && lastPhysical + 1 < g.totalBlocks())
            goal = lastPhysical + 1;
        else if (precedingPhysical >= 0) goal = Math.min(precedingPhysical + 1, g.totalBlocks() - 1);
        else return g.groupStart(homeGroup) + g.systemBlocks(homeGroup);
        if (logicalBlock < streamReqBlocks) return goal; // a small file stays in its locality group
        int group = g.groupOf(goal);
        if (volume.freeBlocks(group) >= streamMinFreeBlocks) return goal;
        int best = emptiestGroup(group, volume);
        if (best == group || volume.freeBlocks(best) < streamMinFreeBlocks) return goal;
        // A new start in the emptiest group: its first data block, which windowSearchStart reads as "no goal".
        return g.groupStart(best) + g.systemBlocks(best);
    }

    /**
     * Where a stream leaving group {@code from} goes: among the {@code orlov_scan_groups} groups after it, the
     * first, counting from the one halfway along, with at least 7/8 of the largest free count seen. Starting
     * halfway (rather than at the emptiest group) sends streams that leave neighbouring groups at about the
     * same time to different groups, where "the emptiest" would be the same group for all of them.
     */
    private int emptiestGroup(int from, Volume volume) {
        int groups = volume.geometry().groups();
        int n = Math.min(groups - 1, scanGroups);
        if (n <= 0) return from;
        long most = 0;
        for (int i = 1; i <= n; i++) most = Math.max(most, volume.freeBlocks((from + i) % groups));
        long enough = most - most / 8;
        int half = (n + 1) / 2;
        for (int i = 0; i < n; i++) {
            int g = (from + 1 + (half + i) % n) % groups;
            if (volume.freeBlocks(g) >= enough) return g;
        }
        return from;
    }

    /** ext4 CR_GOAL_LEN_SLOW: a group is asked for a window only if it has at least the window free. */
    @Override
    public boolean mayReserveIn(long freeBlocks, int windowBlocks, boolean goalGroup) {
        return freeBlocks >= windowBlocks;
    }

    @Override
    public long windowSearchStart(long goal, int windowBlocks, GroupView group) {
        if (goal >= 0 && goal != group.firstDataBlock()) return goal;
        List<Extent> windows = group.windows();
        if (windowBlocks < streamReqBlocks) return behindLastSmallWindow(windows, group);
        return alignedInLargestGap(windows, windowBlocks, group);
    }

    /** ext4's locality-group preallocation is used front to back: small files go behind the last small one. */
    private long behindLastSmallWindow(List<Extent> windows, GroupView group) {
        long cursor = group.firstDataBlock();
        for (Extent w : windows)
            if (w.blocks() < streamReqBlocks) cursor = Math.max(cursor, w.start() + w.blocks());
        return cursor < group.end() ? cursor : group.firstDataBlock();
    }

    /** The start of the largest gap, leaving the first half of a gap after a window to that window's stream. */
    private static long alignedInLargestGap(List<Extent> windows, int windowBlocks, GroupView group) {
        long first = group.firstDataBlock(), end = group.end();
        long bestStart = first, bestEnd = end, bestRoom = -1;
        long cursor = first;
        boolean afterWindow = false;
        for (int i = 0; i <= windows.size(); i++) {
            long gapEnd = i < windows.size() ? windows.get(i).start() : end;
            if (gapEnd > cursor) {
                long start = afterWindow ? cursor + (gapEnd - cursor) / 2 : cursor;
                if (gapEnd - start > bestRoom) {
                    bestRoom = gapEnd - start;
                    bestStart = start;
                    bestEnd = gapEnd;
                }
            }
            if (i < windows.size()) {
                Extent w = windows.get(i);
                cursor = Math.max(cursor, w.start() + w.blocks());
                afterWindow = true;
            }
        }
        // Buddy alignment: a multiple of the (power-of-two) window, if it still fits in the gap. Blocks are
        // aligned absolutely, which is group-relative too whenever groups are a power of two long.
        long unit = floorPow2(windowBlocks);
        long aligned = bestStart + Math.floorMod(-bestStart, unit);
        if (aligned + windowBlocks <= bestEnd && aligned < end) return aligned;
        return bestStart < end ? bestStart : first;
    }

    static long ceilPow2(long n) {
        if (n <= 1) return 1;
        return Long.highestOneBit(n - 1) << 1;
    }

    static long floorPow2(long n) {
        return n <= 1 ? 1 : Long.highestOneBit(n);
    }

    @Override
    public Map<String, Object> stats() {
        return stats;
    }

    @Override
    public String toString() {
        return ID + "(" + minWindowBlocks + ".." + maxWindowBlocks + " blocks, stream_req " + streamReqBlocks + ")";
    }
}
