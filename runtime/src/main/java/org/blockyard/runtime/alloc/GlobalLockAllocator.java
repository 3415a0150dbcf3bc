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
 * The baseline the actors are measured against: the same groups, files, policy, checks and
 * {@link FileAllocation} steps (walk, discard of preallocations before "no space"), called
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
    private final FileAllocation.Groups effects = new FileAllocation.Groups() {
        @Override
        public void unclaim(Extent e) {
            int g = geometry.groupOf(e.start());
            groups[g].unclaim(e);
            republish(g);
        }

        @Override
        public void discardWindow(int group, long file) {
            groups[group].discardWindow(file);
        }
    };

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
        return getBlocks(f, logical, max, true);
    }

    /** getBlocks under the lock: the same {@link FileAllocation} steps as a file actor, as direct calls. */
    public BlockRun getBlocks(FileState f, long logical, int max, boolean create) {
        lock.lock();
        try {
            FileAllocation a = new FileAllocation(f, policy, volume, preallocMin, effects, logical, max, create);
            FileAllocation.Step s = a.start();
            while (true) {
                if (s instanceof FileAllocation.Ask ask) {
                    int g = ask.group();
                    BlockGroup.Outcome o = groups[g].allocate(ask.request());
                    if (o.allocated()) republish(g);
                    s = a.answer(g, o);
                } else if (s instanceof FileAllocation.DropPreallocations) {
                    s = a.preallocationsDropped(dropPreallocationsLocked());
                } else {
                    return ((FileAllocation.Answer) s).reply().get();
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /** Every open file gives back its unused preallocation; answers the blocks freed. */
    public long dropPreallocations() {
        lock.lock();
        try {
            return dropPreallocationsLocked();
        } finally {
            lock.unlock();
        }
    }

    private long dropPreallocationsLocked() {
        long freed = 0;
        for (FileState f : files.values()) {
            Extent e = f.dropPrealloc();
            if (e == null) continue;
            effects.unclaim(e);
            freed += e.blocks();
        }
        return freed;
    }

    /** Frees every block at {@code fromLogical} and beyond; checked in every group first, so a refusal changes nothing. */
    public long truncate(FileState f, long fromLogical) {
        lock.lock();
        try {
            AllocationException bad = FileAllocation.checkTruncate(f, fromLogical);
            if (bad != null) throw bad;
            long blocks = freeAllOrNone(f.extentsFrom(fromLogical));
            dropPrealloc(f);
            if (f.windowGroup >= 0) groups[f.windowGroup].discardWindow(f.id);
            f.windowDiscarded();
            f.truncate(fromLogical);
            return blocks;
        } finally {
            lock.unlock();
        }
    }

    /** Converts the unwritten runs in the range to written; answers how many blocks changed state. */
    public long markWritten(FileState f, long logical, long blocks) {
        lock.lock();
        try {
            AllocationException bad = FileAllocation.checkRange(f, "markWritten", logical, blocks);
            if (bad != null) throw bad;
            return f.markWritten(logical, blocks);
        } finally {
            lock.unlock();
        }
    }

    /** Unmaps and frees the unwritten runs in the range (and the preallocation); answers the blocks freed. */
    public long discardUnwritten(FileState f, long logical, long blocks) {
        lock.lock();
        try {
            AllocationException bad = FileAllocation.checkRange(f, "discardUnwritten", logical, blocks);
            if (bad != null) throw bad;
            freeAllOrNone(f.unwrittenIn(logical, blocks));
            dropPrealloc(f);
            return f.discardUnwritten(logical, blocks);
        } finally {
            lock.unlock();
        }
    }

    /** Checks the extents in every group, then frees them; throws, freeing nothing, if any group refuses. */
    private long freeAllOrNone(List<Extent> extents) {
        Map<Integer, List<Extent>> byGroup = FileActor.splitByGroup(geometry, extents);
        for (var e : byGroup.entrySet()) {
            AllocationException bad = groups[e.getKey()].checkFree(e.getValue());
            if (bad != null) throw bad;
        }
        long blocks = 0;
        for (var e : byGroup.entrySet()) {
            groups[e.getKey()].free(e.getValue());
            republish(e.getKey());
            for (Extent x : e.getValue()) blocks += x.blocks();
        }
        return blocks;
    }

    /** Frees extents the way the extent interface's release does (tests: blocks freed behind a file's back). */
    public void release(List<Extent> extents) {
        lock.lock();
        try {
            freeAllOrNone(extents);
        } finally {
            lock.unlock();
        }
    }

    private void dropPrealloc(FileState f) {
        Extent e = f.dropPrealloc();
        if (e != null) effects.unclaim(e);
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
