package org.blockyard.runtime.alloc;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Extent;

/**
 * What a file knows about its own blocks: its extent map (logical run to physical run), the ext3 goal
 * state ({@code last_alloc_logical_block}, {@code last_alloc_physical_block}), and a mirror of its
 * reservation window (goal size, the group holding it, its length and hits). Owned by one
 * {@link FileActor} (or the global-lock baseline under its lock); not thread-safe.
 *
 * <p>Invariant: mapped runs never overlap, logically or physically; adjacent runs that are contiguous
 * both logically and physically are kept merged, so the map's size is the file's extent count.
 */
public final class FileState {
    public final long id;
    public final String name;
    public final int homeGroup;

    /** logical start -> {physical start, blocks}. */
    private final TreeMap<Long, long[]> map = new TreeMap<>();
    private long mappedBlocks;

    // Preallocation: physical blocks claimed for the file right after its last allocation and not yet
    // mapped; the next sequential getBlocks takes them without asking a group (ext4's inode PA).
    long preLogical = -1;
    long prePhysical = -1;
    int preBlocks;

    long lastLogical = -1;
    long lastPhysical = -1;
    int windowGoalBlocks;
    int windowGroup = -1;
    long windowBlocks;
    long windowHit;
    int writers;

    public FileState(long id, String name, int homeGroup, int initialWindowBlocks) {
        this.id = id;
        this.name = name;
        this.homeGroup = homeGroup;
        this.windowGoalBlocks = initialWindowBlocks;
    }

    /** The mapped run containing {@code logical}, up to {@code max} blocks, or null for a hole. */
    public BlockRun lookup(long logical, int max) {
        Map.Entry<Long, long[]> e = map.floorEntry(logical);
        if (e == null) return null;
        long lstart = e.getKey(), pstart = e.getValue()[0], len = e.getValue()[1];
        if (logical >= lstart + len) return null;
        long off = logical - lstart;
        return new BlockRun(logical, pstart + off, (int) Math.min(max, len - off), false);
    }

    /** Unmapped blocks from {@code logical} up to the next mapped one, capped at {@code max}. */
    public int holeLength(long logical, int max) {
        Long next = map.higherKey(logical);
        return next == null ? max : (int) Math.min(max, next - logical);
    }

    /** The physical block of the nearest mapped logical block before {@code logical}, or -1. */
    public long precedingPhysical(long logical) {
        Map.Entry<Long, long[]> e = map.lowerEntry(logical);
        if (e == null) return -1;
        return e.getValue()[0] + e.getValue()[1] - 1;
    }

    /** Records a fresh allocation and updates the ext3 goal state (ext3_splice_branch). */
    public void map(long logical, long physical, int blocks) {
        Map.Entry<Long, long[]> prev = map.lowerEntry(logical);
        if (prev != null && prev.getKey() + prev.getValue()[1] == logical
                && prev.getValue()[0] + prev.getValue()[1] == physical) {
            prev.getValue()[1] += blocks;
        } else {
            map.put(logical, new long[] {physical, blocks});
            prev = map.floorEntry(logical);
        }
        Map.Entry<Long, long[]> next = map.higherEntry(logical);
        long[] cur = prev.getValue();
        if (next != null && prev.getKey() + cur[1] == next.getKey() && cur[0] + cur[1] == next.getValue()[0]) {
            cur[1] += next.getValue()[1];
            map.remove(next.getKey());
        }
        mappedBlocks += blocks;
        lastLogical = logical + blocks - 1;
        lastPhysical = physical + blocks - 1;
    }

    /** Maps up to {@code count} blocks at {@code logical} from the preallocation; null if it does not continue there. */
    public BlockRun takePrealloc(long logical, int count) {
        if (preBlocks == 0 || logical != preLogical) return null;
        int n = Math.min(count, preBlocks);
        long physical = prePhysical;
        map(logical, physical, n);
        preLogical += n;
        prePhysical += n;
        preBlocks -= n;
        return new BlockRun(logical, physical, n, true);
    }

    /** Gives up the preallocation; answers it (to be freed in its group), or null when there is none. */
    public Extent dropPrealloc() {
        if (preBlocks == 0) return null;
        Extent e = new Extent(prePhysical, preBlocks);
        preBlocks = 0;
        preLogical = prePhysical = -1;
        return e;
    }

    /** Blocks to ask for beyond a request, to keep as preallocation: the window's size once it is big. */
    int prefetch(int preallocMinWindowBlocks) {
        return preallocMinWindowBlocks > 0 && windowGoalBlocks >= preallocMinWindowBlocks ? windowGoalBlocks : 0;
    }

    /**
     * The request this file sends group {@code group} for {@code count} blocks at {@code goal}, in the
     * pass {@code walk} is in: the goal only in the goal group; with a window, the prefetch for the
     * preallocation and the mirror of a window held in another group (a group knows its own).
     */
    BlockGroup.Request requestFor(int group, GroupWalk walk, long goal, int count, int preallocMinWindowBlocks) {
        boolean here = windowGroup == group;
        return new BlockGroup.Request(id, walk.isGoalGroup(group) ? goal : -1, count,
                walk.reserve() ? prefetch(preallocMinWindowBlocks) : 0, windowGoalBlocks,
                here ? 0 : windowBlocks, here ? 0 : windowHit, walk.reserve(), goal != lastPhysical + 1);
    }

    /** Maps a fresh run of which the first {@code count} blocks were asked for; keeps the rest as preallocation. */
    public BlockRun mapAllocated(long logical, int count, long physical, int blocks) {
        int mapped = Math.min(count, blocks);
        map(logical, physical, mapped);
        if (blocks > mapped) {
            preLogical = logical + mapped;
            prePhysical = physical + mapped;
            preBlocks = blocks - mapped;
        }
        return new BlockRun(logical, physical, mapped, true);
    }

    /** Unmaps everything at {@code fromLogical} and beyond; answers the physical extents released. */
    public List<Extent> truncate(long fromLogical) {
        List<Extent> freed = new ArrayList<>();
        Map.Entry<Long, long[]> head = map.lowerEntry(fromLogical);
        if (head != null && head.getKey() + head.getValue()[1] > fromLogical) {
            long keep = fromLogical - head.getKey();
            long[] v = head.getValue();
            freed.add(new Extent(v[0] + keep, v[1] - keep));
            v[1] = keep;
        }
        var tail = map.tailMap(fromLogical, true);
        for (long[] v : tail.values()) freed.add(new Extent(v[0], v[1]));
        tail.clear();
        for (Extent e : freed) mappedBlocks -= e.blocks();
        if (lastLogical >= fromLogical) {
            Map.Entry<Long, long[]> last = map.lastEntry();
            lastLogical = last == null ? -1 : last.getKey() + last.getValue()[1] - 1;
            lastPhysical = last == null ? -1 : last.getValue()[0] + last.getValue()[1] - 1;
        }
        return freed;
    }

    /** Physical extents in logical order. */
    public List<Extent> extents() {
        List<Extent> out = new ArrayList<>(map.size());
        for (long[] v : map.values()) out.add(new Extent(v[0], v[1]));
        return out;
    }

    public int extentCount() {
        return map.size();
    }

    public long mappedBlocks() {
        return mappedBlocks;
    }

    /**
     * Takes the window mirror from a group's answer to a request made with a window. Answers the group
     * whose window the file must now discard (its window moved to {@code group}), or -1.
     */
    int windowFrom(int group, BlockGroup.Outcome o) {
        windowGoalBlocks = o.windowGoalBlocks();
        if (o.windowBlocks() <= 0) return -1;
        int old = windowGroup != group ? windowGroup : -1;
        windowGroup = group;
        windowBlocks = o.windowBlocks();
        windowHit = o.windowHit();
        return old;
    }

    void windowDiscarded() {
        windowGroup = -1;
        windowBlocks = 0;
        windowHit = 0;
    }
}
