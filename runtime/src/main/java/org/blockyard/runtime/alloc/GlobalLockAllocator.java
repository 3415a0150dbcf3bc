package org.blockyard.runtime.alloc;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;

/**
 * The baseline the actors are measured against: the same groups, files, policy and walk, called
 * synchronously by the caller's thread behind one lock that is held across the whole bitmap search —
 * ext3 before the seed 000 patch, when {@code s_rsv_window_lock} covered the scan. Not a product
 * allocator: it exists so that benchmarks can give ratios in the same run.
 */
public final class GlobalLockAllocator {
    private final ReentrantLock lock = new ReentrantLock();
    private final AllocationPolicy policy;
    private final VolumeState volume;
    private final Geometry geometry;
    private final BlockGroup[] groups;
    private final Map<String, FileState> files = new HashMap<>();
    private long nextFileId = 1;

    private final int preallocMin;

    public GlobalLockAllocator(Geometry geometry, AllocationPolicy policy) {
        this(geometry, policy, 64);
    }

    public GlobalLockAllocator(Geometry geometry, AllocationPolicy policy, int preallocMinWindowBlocks) {
        this.policy = policy;
        this.preallocMin = preallocMinWindowBlocks;
        this.geometry = geometry;
        this.volume = new VolumeState(geometry);
        this.groups = new BlockGroup[geometry.groups()];
        for (int g = 0; g < groups.length; g++) {
            groups[g] = new BlockGroup(geometry, g, policy);
            volume.publishFree(g, groups[g].freeBlocks());
        }
    }

    public Geometry geometry() {
        return geometry;
    }

    /** Direct access for setting up benchmark volumes; callers must not run concurrently with it. */
    public BlockGroup group(int g) {
        return groups[g];
    }

    public void republish(int g) {
        volume.publishFree(g, groups[g].freeBlocks());
    }

    public FileState open(String name) {
        lock.lock();
        try {
            FileState f = files.get(name);
            if (f == null) {
                int home = policy.homeGroup(name, volume);
                f = new FileState(nextFileId++, name, home, policy.initialWindowBlocks());
                files.put(name, f);
            }
            if (f.writers++ == 0) volume.fileOpened(f.homeGroup);
            return f;
        } finally {
            lock.unlock();
        }
    }

    public void close(FileState f) {
        lock.lock();
        try {
            if (f.writers == 0) throw new AllocationException.UnknownFile("file " + f.name + " is not open");
            if (--f.writers == 0) {
                dropPrealloc(f);
                if (f.windowGroup >= 0) groups[f.windowGroup].discardWindow(f.id);
                f.windowDiscarded();
                volume.fileClosed(f.homeGroup);
            }
        } finally {
            lock.unlock();
        }
    }

    /** getBlocks with create, under the lock. */
    public BlockRun getBlocks(FileState f, long logical, int max) {
        lock.lock();
        try {
            if (f.writers == 0) throw new AllocationException.UnknownFile("file " + f.name + " is not open");
            BlockRun mapped = f.lookup(logical, max);
            if (mapped != null) return mapped;
            int count = f.holeLength(logical, max);
            BlockRun pre = f.takePrealloc(logical, count);
            if (pre != null) return pre;
            dropPrealloc(f);
            long goal = policy.goal(logical, f.lastLogical, f.lastPhysical, f.precedingPhysical(logical), f.homeGroup,
                    volume);
            GroupWalk walk = new GroupWalk(policy, volume, geometry.groupOf(goal), f.windowGoalBlocks,
                    f.windowGroup >= 0);
            for (int g = walk.next(); g >= 0; g = walk.next()) {
                BlockGroup.Outcome o = groups[g].allocate(f.requestFor(g, walk, goal, count, preallocMin));
                if (walk.reserve()) {
                    int stale = f.windowFrom(g, o);
                    if (stale >= 0) groups[stale].discardWindow(f.id);
                }
                if (o.allocated()) {
                    volume.publishFree(g, groups[g].freeBlocks());
                    return f.mapAllocated(logical, count, o.start(), o.blocks());
                }
            }
            throw new AllocationException.NoSpace("no free block for " + f.name);
        } finally {
            lock.unlock();
        }
    }

    private void dropPrealloc(FileState f) {
        Extent e = f.dropPrealloc();
        if (e != null) {
            int g = geometry.groupOf(e.start());
            groups[g].unclaim(e);
            volume.publishFree(g, groups[g].freeBlocks());
        }
    }

    /** Every file's extents, for checks. */
    public Map<String, List<Extent>> fileExtents() {
        lock.lock();
        try {
            Map<String, List<Extent>> out = new HashMap<>();
            files.forEach((n, f) -> out.put(n, new ArrayList<>(f.extents())));
            return out;
        } finally {
            lock.unlock();
        }
    }
}
