package org.blockyard.runtime.alloc;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.locks.ReentrantLock;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.AllocatorStats;
import org.blockyard.api.alloc.BlockAllocator;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.FreeExtentPage;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.api.alloc.MapRequest;

/**
 * The baseline the actors are measured against: the same groups, files, policy, checks and
 * {@link FileAllocation} steps (walk, discard of preallocations before "no space"), called
 * synchronously by the caller's thread behind one lock that is held across the whole bitmap search —
 * ext3 before the seed 000 patch, when {@code s_rsv_window_lock} covered the scan. Not a product
 * allocator: it exists so that benchmarks can give ratios in the same run.
 *
 * <p>It is a {@link BlockAllocator} like the actors, with the same checks ({@link FileAllocation},
 * {@link ExtentChecks}) and the same extent walk ({@link ExtentWalk}), so benchmarks and contract tests
 * drive both through one interface; every stage it answers is already complete. Benchmarks that want
 * no map lookup per call use the {@link FileState} handles ({@link #openFile}).
 */
public final class GlobalLockAllocator extends CallerThreadAllocator {
    private final ReentrantLock lock = new ReentrantLock();
    private final Map<String, FileState> files = new HashMap<>();
    private long nextFileId = 1;
    private long extentCursor = -1;

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
        this(geometry, policy, 8);
    }

    public GlobalLockAllocator(Geometry geometry, AllocationPolicy policy, int preallocMinWindowBlocks) {
        super(geometry, policy, preallocMinWindowBlocks);
    }

    /** Opens {@code name} and answers its state, the handle the benchmark calls take. */
    public FileState openFile(String name) {
        lock.lock();
        try {
            if (name == null || name.isBlank()) throw new AllocationException.InvalidRequest("a file needs a non-empty name");
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

    /**
     * getBlocks under the lock: the same {@link FileAllocation} steps as a file actor, as direct calls; a
     * request that starts where the file's gap ends has blocks reserved for the gap first, as the actors do
     * ({@link FileState#gapEndingAt}).
     */
    public BlockRun getBlocks(FileState f, long logical, int max, boolean create) {
        lock.lock();
        try {
            FileAllocation reserving = create ? FileAllocation.forGap(f, policy, volume, preallocMin, effects, logical) : null;
            if (reserving != null) run(reserving); // a refusal leaves the request its own answer
            Reply<BlockRun> r = FileAllocation.atOnce(f, logical, max, create);
            if (r == null) r = run(new FileAllocation(f, policy, volume, preallocMin, effects, logical, max, create));
            f.answered(logical, max, create, r);
            return r.get();
        } finally {
            lock.unlock();
        }
    }

    /** Takes {@code a}'s steps to their answer. */
    private Reply<BlockRun> run(FileAllocation a) {
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
                return ((FileAllocation.Answer) s).reply();
            }
        }
    }

    /** Every open file gives back its unused preallocation; answers the blocks freed. Under the lock. */
    private long dropPreallocationsLocked() {
        long freed = 0;
        for (FileState f : files.values()) {
            for (Extent e : f.dropPreallocations()) {
                effects.unclaim(e);
                freed += e.blocks();
            }
        }
        return freed;
    }

    /** Frees every block at {@code fromLogical} and beyond; checked in every group first, so a refusal changes nothing. */
    public long truncate(FileState f, long fromLogical) {
        lock.lock();
        try {
            AllocationException bad = FileAllocation.checkTruncate(f, fromLogical);
            if (bad != null) throw bad;
            return truncateChecked(f, fromLogical);
        } finally {
            lock.unlock();
        }
    }

    /** {@link #truncate(FileState, long)} past its check (a delete's truncate of a closed file); caller holds the lock. */
    private long truncateChecked(FileState f, long fromLogical) {
        long blocks = freeAllOrNone(f.extentsFrom(fromLogical));
        dropPrealloc(f);
        if (f.windowGroup >= 0) groups[f.windowGroup].discardWindow(f.id);
        f.windowDiscarded();
        f.truncate(fromLogical);
        return blocks;
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
        return discard(f, logical, blocks, false);
    }

    /** Unmaps and frees every run in the range, written or not (and the preallocation); answers the blocks freed. */
    public long punchHole(FileState f, long logical, long blocks) {
        return discard(f, logical, blocks, true);
    }

    private long discard(FileState f, long logical, long blocks, boolean punch) {
        lock.lock();
        try {
            AllocationException bad = FileAllocation.checkRange(f, punch ? "punchHole" : "discardUnwritten", logical, blocks);
            if (bad != null) throw bad;
            freeAllOrNone(f.mappedIn(logical, blocks, punch));
            dropPrealloc(f);
            return f.discard(logical, blocks, punch);
        } finally {
            lock.unlock();
        }
    }

    /** Checks the extents in every group, then frees them; throws, freeing nothing, if any group refuses. */
    private long freeAllOrNone(List<Extent> extents) {
        Map<Integer, List<Extent>> byGroup = ExtentChecks.splitByGroup(geometry, extents);
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


    /** Gives back the file's preallocation and a gap's reservation. */
    private void dropPrealloc(FileState f) {
        for (Extent e : f.dropPreallocations()) effects.unclaim(e);
    }

    @Override
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

    // ---- BlockAllocator ------------------------------------------------------------------------------

    private FileState openState(String name) {
        lock.lock();
        try {
            FileState f = files.get(name);
            if (f == null || f.writers == 0)
                throw new AllocationException.UnknownFile(f == null ? "file " + name + " was never opened"
                        : "file " + name + " is not open (closed by its last writer)");
            return f;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public CompletionStage<Void> open(String file) {
        return done(() -> {
            openFile(file);
            return null;
        });
    }

    @Override
    public CompletionStage<BlockRun> getBlocks(String file, long logicalBlock, int maxBlocks, boolean create) {
        return done(() -> getBlocks(openState(file), logicalBlock, maxBlocks, create));
    }

    /** The whole batch under one acquisition of the lock, in order; the first refusal ends it. */
    @Override
    public CompletionStage<List<BlockRun>> getBlocks(String file, List<MapRequest> requests) {
        return done(() -> {
            if (requests == null || requests.size() > MAX_BATCH)
                throw new AllocationException.InvalidRequest("a batch holds 0 to " + MAX_BATCH + " requests, not "
                        + (requests == null ? "null" : requests.size()));
            FileState f = openState(file);
            List<BlockRun> runs = new ArrayList<>(requests.size());
            lock.lock(); // reentrant: each call below takes it again, cheaply, and no other caller slips in between
            try {
                for (MapRequest r : requests) {
                    if (r == null)
                        throw new AllocationException.InvalidRequest("request " + runs.size() + " of the batch is null");
                    runs.add(getBlocks(f, r.logicalBlock(), r.maxBlocks(), r.create()));
                }
            } finally {
                lock.unlock();
            }
            return List.copyOf(runs);
        });
    }

    @Override
    public CompletionStage<Long> truncate(String file, long fromLogicalBlock) {
        return done(() -> truncate(openState(file), fromLogicalBlock));
    }

    @Override
    public CompletionStage<Long> markWritten(String file, long logicalBlock, long blocks) {
        return done(() -> markWritten(openState(file), logicalBlock, blocks));
    }

    @Override
    public CompletionStage<Long> discardUnwritten(String file, long logicalBlock, long blocks) {
        return done(() -> discardUnwritten(openState(file), logicalBlock, blocks));
    }

    @Override
    public CompletionStage<Long> punchHole(String file, long logicalBlock, long blocks) {
        return done(() -> punchHole(openState(file), logicalBlock, blocks));
    }

    @Override
    public CompletionStage<Void> close(String file) {
        return done(() -> {
            close(openState(file));
            return null;
        });
    }

    @Override
    public CompletionStage<Void> delete(String file) {
        return done(() -> {
            lock.lock();
            try {
                FileState f = files.get(file);
                if (f == null)
                    throw new AllocationException.UnknownFile("file " + file + " does not exist; nothing deleted");
                if (f.writers > 0)
                    throw new AllocationException.InvalidRequest("file " + file + " is open (" + f.writers
                            + " writers): close it first; nothing deleted");
                truncateChecked(f, 0);
                files.remove(file);
                return null;
            } finally {
                lock.unlock();
            }
        });
    }

    @Override
    public CompletionStage<List<Extent>> fileExtents(String file) {
        return done(() -> {
            lock.lock();
            try {
                FileState f = files.get(file);
                if (f == null) throw new AllocationException.UnknownFile("file " + file + " was never opened");
                return f.extents();
            } finally {
                lock.unlock();
            }
        });
    }

    /** The same walk as the actors', each group asked by a direct call, under the lock. */
    @Override
    public CompletionStage<List<Extent>> allocate(long wantBlocks, int unitBlocks, long maxExtentBlocks, long hint) {
        return done(() -> {
            ExtentChecks.allocate(geometry, wantBlocks, unitBlocks, maxExtentBlocks, hint);
            lock.lock();
            try {
                List<Extent> got = new ArrayList<>();
                ExtentWalk walk = new ExtentWalk(volume, wantBlocks, unitBlocks, maxExtentBlocks, hint, extentCursor);
                claim(walk, got);
                if (walk.remaining() > 0 && dropPreallocationsLocked() > 0) {
                    walk = new ExtentWalk(volume, walk.remaining(), unitBlocks, maxExtentBlocks, hint, extentCursor);
                    claim(walk, got);
                }
                if (got.isEmpty())
                    throw new AllocationException.NoSpace("no free extent of " + unitBlocks
                            + " aligned block(s) for a request of " + wantBlocks + " blocks");
                extentCursor = got.get(got.size() - 1).end();
                return List.copyOf(got);
            } finally {
                lock.unlock();
            }
        });
    }

    private void claim(ExtentWalk walk, List<Extent> got) {
        for (int g = walk.next(); g >= 0; g = walk.next()) {
            List<Extent> claimed = groups[g].claimExtents(walk.claimFor(g));
            if (!claimed.isEmpty()) republish(g);
            got.addAll(claimed);
            walk.took(claimed);
        }
    }

    @Override
    public CompletionStage<Void> release(List<Extent> extents) {
        return done(() -> {
            if (extents == null || extents.isEmpty()) return null;
            List<Extent> sorted = ExtentChecks.release(geometry, extents);
            lock.lock();
            try {
                freeAllOrNone(sorted);
                return null;
            } finally {
                lock.unlock();
            }
        });
    }

    @Override
    public CompletionStage<FreeExtentPage> freeExtents(long fromBlock, long toBlock, int maxCount) {
        return done(() -> {
            ExtentChecks.freeExtents(geometry, fromBlock, toBlock, maxCount);
            if (fromBlock == toBlock) return new FreeExtentPage(List.of(), -1);
            FreeRunPage page = new FreeRunPage(toBlock, maxCount);
            lock.lock();
            try {
                for (int g = geometry.groupOf(fromBlock); g < groups.length && geometry.groupStart(g) < toBlock; g++)
                    if (!page.add(groups[g].freeRuns(fromBlock, toBlock, page.wanted()))) break;
            } finally {
                lock.unlock();
            }
            return page.page();
        });
    }

    @Override
    public CompletionStage<AllocatorStats> stats() {
        lock.lock();
        try {
            int windows = 0;
            for (BlockGroup g : groups) windows += g.windowCount();
            return CompletableFuture.completedFuture(new AllocatorStats(volume.totalFreeBlocks(), geometry.dataBlocks(),
                    windows, 0, 0, 0, 0));
        } finally {
            lock.unlock();
        }
    }
}
