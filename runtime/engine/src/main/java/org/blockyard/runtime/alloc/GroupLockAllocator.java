package org.blockyard.runtime.alloc;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
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
 * The peer a user would write with locks instead of actors: the same groups, files, policy, checks,
 * {@link FileAllocation} steps and {@link ExtentWalk} as {@link GlobalLockAllocator}, called synchronously
 * on the caller's thread, but with one lock per group and one per file instead of one for everything, as
 * ext4 locks each group ({@code ext4_lock_group}) and XFS each allocation group (the AGF buffer lock).
 * Not a product allocator: it exists so that benchmarks can give ratios in the same run.
 *
 * <h2>Locks</h2>
 * <ul>
 *   <li>Group {@code g}'s lock guards {@code groups[g]} (bitmap, run index, windows). Its holder republishes
 *       the group's figures in {@link VolumeState} (free count, longest free run, run sizes present) before
 *       it lets go.</li>
 *   <li>A file's lock ({@link File}) guards its {@link FileState}: extent map, goal, what it keeps to ask
 *       for its next window, preallocation, writers. Calls on one file are served one at a time, calls on
 *       different files run at once.</li>
 *   <li>The file table is a concurrent map; a deleted file is marked under its lock before it leaves the
 *       map, so a caller that found it retries with the name's next file.</li>
 * </ul>
 * Walks take no lock: the group walk of a file allocation ({@link GroupWalk}) and the extent walk read the
 * published figures, as mballoc chooses a group from its free count and largest free order read without
 * the group lock ({@code ext4_mb_good_group_nolock}), then locks it and checks again
 * ({@code ext4_mb_good_group}); here the chosen group is locked and its own state decides. A stale figure
 * costs a wasted visit, or a group passed over by a call that races with a free there, never a block
 * handed out twice.
 *
 * <h2>Order</h2>
 * A file's lock may be held while one group's lock is taken; a group's lock is never held while a file's
 * lock is waited for. A call that needs several groups at once (a release, truncate or discard that must be
 * all or nothing) takes their locks in ascending group order, checks every group, then frees, so a refusal
 * changes nothing; everything else holds at most one group lock at a time (a large allocation visits its
 * groups one after the other). Giving back preallocations before "no space" takes other files' locks: from
 * a file call (a file lock held) only with {@code tryLock}, skipping a file that is busy with a call of its
 * own, which keeps its preallocation for that call; from an extent call (no lock held) by waiting.
 * No cycle of waits can form, so no deadlock.
 *
 * <h2>Exactness</h2>
 * {@link #freeBlocks()} and {@link #fragmentationScore()} are the published sums: exact once no call is in
 * flight. {@link #freeExtents} pages group by group, each group read under its lock.
 */
public final class GroupLockAllocator extends CallerThreadAllocator {

    /** An opened file: its state and the lock that guards it; the handle the benchmark calls take. */
    public static final class File {
        final FileState state;
        final ReentrantLock lock = new ReentrantLock();
        boolean deleted; // guarded by lock: the file left the table, its name now opens a new one

        File(FileState state) {
            this.state = state;
        }

        public String name() {
            return state.name;
        }
    }

    private final ReentrantLock[] locks;
    private final ConcurrentHashMap<String, File> files = new ConcurrentHashMap<>();
    private final AtomicLong nextFileId = new AtomicLong(1);
    private volatile long extentCursor = -1; // a hint only: racing writers may leave either one's

    private final FileAllocation.Groups effects = new FileAllocation.Groups() {
        @Override
        public void unclaim(Extent e) {
            int g = geometry.groupOf(e.start());
            locks[g].lock();
            try {
                groups[g].unclaim(e);
                republish(g);
            } finally {
                locks[g].unlock();
            }
        }

        @Override
        public void discardWindow(int group, long file) {
            locks[group].lock();
            try {
                groups[group].discardWindow(file);
            } finally {
                locks[group].unlock();
            }
        }
    };

    public GroupLockAllocator(Geometry geometry, AllocationPolicy policy) {
        this(geometry, policy, 8);
    }

    public GroupLockAllocator(Geometry geometry, AllocationPolicy policy, int preallocMinWindowBlocks) {
        super(geometry, policy, preallocMinWindowBlocks);
        this.locks = new ReentrantLock[geometry.groups()];
        for (int g = 0; g < locks.length; g++) locks[g] = new ReentrantLock();
    }

    /** The published figures, for checks. */
    VolumeState volume() {
        return volume;
    }

    // ---- files, by handle ------------------------------------------------------------------------------

    /** Opens {@code name} (adding a writer) and answers its handle, which the handle calls take. */
    public File openFile(String name) {
        if (name == null || name.isBlank()) throw new AllocationException.InvalidRequest("a file needs a non-empty name");
        while (true) {
            File f = files.get(name);
            if (f == null) {
                File fresh = new File(new FileState(nextFileId.getAndIncrement(), name, policy.homeGroup(name, volume),
                        policy.initialWindowBlocks()));
                f = files.putIfAbsent(name, fresh);
                if (f == null) f = fresh;
            }
            f.lock.lock();
            try {
                if (f.deleted) continue; // deleted meanwhile: the name opens a new file
                if (f.state.writers++ == 0) volume.fileOpened(f.state.homeGroup);
                return f;
            } finally {
                f.lock.unlock();
            }
        }
    }

    public void close(File handle) {
        handle.lock.lock();
        try {
            FileState f = handle.state;
            if (f.writers == 0) throw new AllocationException.UnknownFile("file " + f.name + " is not open");
            if (--f.writers == 0) {
                dropPrealloc(f);
                if (f.windowGroup >= 0) effects.discardWindow(f.windowGroup, f.id);
                f.windowDiscarded();
                volume.fileClosed(f.homeGroup);
            }
        } finally {
            handle.lock.unlock();
        }
    }

    /** getBlocks with create, under the file's lock. */
    public BlockRun getBlocks(File f, long logical, int max) {
        return getBlocks(f, logical, max, true);
    }

    /**
     * getBlocks under the file's lock: the same {@link FileAllocation} steps as the global-lock baseline, each
     * group asked under its own lock.
     */
    public BlockRun getBlocks(File handle, long logical, int max, boolean create) {
        handle.lock.lock();
        try {
            FileState f = handle.state;
            FileAllocation reserving = create ? FileAllocation.forGap(f, policy, volume, preallocMin, effects, logical) : null;
            if (reserving != null) run(reserving); // a refusal leaves the request its own answer
            Reply<BlockRun> r = FileAllocation.atOnce(f, logical, max, create);
            if (r == null) r = run(new FileAllocation(f, policy, volume, preallocMin, effects, logical, max, create));
            f.answered(logical, max, create, r);
            return r.get();
        } finally {
            handle.lock.unlock();
        }
    }

    /** Takes {@code a}'s steps to their answer; the file's lock is held, no group's. */
    private Reply<BlockRun> run(FileAllocation a) {
        FileAllocation.Step s = a.start();
        while (true) {
            if (s instanceof FileAllocation.Ask ask) {
                int g = ask.group();
                BlockGroup.Outcome o;
                locks[g].lock();
                try {
                    o = groups[g].allocate(ask.request());
                    if (o.allocated()) republish(g);
                } finally {
                    locks[g].unlock();
                }
                s = a.answer(g, o);
            } else if (s instanceof FileAllocation.DropPreallocations) {
                s = a.preallocationsDropped(dropPreallocations(false));
            } else {
                return ((FileAllocation.Answer) s).reply();
            }
        }
    }

    /**
     * Every open file gives back its unused preallocation; answers the blocks freed. With {@code wait}
     * (the caller holds no lock) each file's lock is waited for; without (a file call, its own file's lock
     * held) a file busy with a call of its own is skipped. No group lock may be held.
     */
    private long dropPreallocations(boolean wait) {
        long freed = 0;
        for (File other : files.values()) {
            if (wait) other.lock.lock();
            else if (!other.lock.tryLock()) continue;
            try {
                for (Extent e : other.state.dropPreallocations()) {
                    effects.unclaim(e);
                    freed += e.blocks();
                }
            } finally {
                other.lock.unlock();
            }
        }
        return freed;
    }

    /** Frees every block at {@code fromLogical} and beyond; checked in every group first, so a refusal changes nothing. */
    public long truncate(File handle, long fromLogical) {
        handle.lock.lock();
        try {
            AllocationException bad = FileAllocation.checkTruncate(handle.state, fromLogical);
            if (bad != null) throw bad;
            return truncateChecked(handle.state, fromLogical);
        } finally {
            handle.lock.unlock();
        }
    }

    /** {@link #truncate(File, long)} past its check (a delete's truncate of a closed file); the file's lock is held. */
    private long truncateChecked(FileState f, long fromLogical) {
        long blocks = freeAllOrNone(f.extentsFrom(fromLogical));
        dropPrealloc(f);
        if (f.windowGroup >= 0) effects.discardWindow(f.windowGroup, f.id);
        f.windowDiscarded();
        f.truncate(fromLogical);
        return blocks;
    }

    /** Converts the unwritten runs in the range to written; answers how many blocks changed state. */
    public long markWritten(File handle, long logical, long blocks) {
        handle.lock.lock();
        try {
            AllocationException bad = FileAllocation.checkRange(handle.state, "markWritten", logical, blocks);
            if (bad != null) throw bad;
            return handle.state.markWritten(logical, blocks);
        } finally {
            handle.lock.unlock();
        }
    }

    /** Unmaps and frees the unwritten runs in the range (and the preallocation); answers the blocks freed. */
    public long discardUnwritten(File handle, long logical, long blocks) {
        return discard(handle, logical, blocks, false);
    }

    /** Unmaps and frees every run in the range, written or not (and the preallocation); answers the blocks freed. */
    public long punchHole(File handle, long logical, long blocks) {
        return discard(handle, logical, blocks, true);
    }

    private long discard(File handle, long logical, long blocks, boolean punch) {
        handle.lock.lock();
        try {
            FileState f = handle.state;
            AllocationException bad = FileAllocation.checkRange(f, punch ? "punchHole" : "discardUnwritten", logical, blocks);
            if (bad != null) throw bad;
            freeAllOrNone(f.mappedIn(logical, blocks, punch));
            dropPrealloc(f);
            return f.discard(logical, blocks, punch);
        } finally {
            handle.lock.unlock();
        }
    }

    /**
     * Frees the extents all or none: locks every group they touch in ascending order, checks each, and frees
     * only when none refuses; throws the first refusal, freeing nothing.
     */
    private long freeAllOrNone(List<Extent> extents) {
        if (extents.isEmpty()) return 0;
        Map<Integer, List<Extent>> byGroup = ExtentChecks.splitByGroup(geometry, extents); // ascending groups
        int[] held = new int[byGroup.size()];
        int n = 0;
        try {
            for (int g : byGroup.keySet()) {
                locks[g].lock();
                held[n++] = g;
            }
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
        } finally {
            while (n > 0) locks[held[--n]].unlock();
        }
    }

    /** Gives back the file's preallocation and a gap's reservation. */
    private void dropPrealloc(FileState f) {
        for (Extent e : f.dropPreallocations()) effects.unclaim(e);
    }

    /** Each file read under its lock. */
    @Override
    public Map<String, List<Extent>> fileExtents() {
        Map<String, List<Extent>> out = new HashMap<>();
        for (File f : files.values()) {
            f.lock.lock();
            try {
                if (!f.deleted) out.put(f.state.name, new ArrayList<>(f.state.extents()));
            } finally {
                f.lock.unlock();
            }
        }
        return out;
    }

    /** Every open file's preallocations and gaps' reservations (held, not mapped), for checks. */
    List<Extent> preallocated() {
        List<Extent> out = new ArrayList<>();
        for (File f : files.values()) {
            f.lock.lock();
            try {
                if (!f.deleted) out.addAll(f.state.preallocated());
            } finally {
                f.lock.unlock();
            }
        }
        return out;
    }

    // ---- BlockAllocator ------------------------------------------------------------------------------

    /** What a call on an open file does, given its handle, under the file's lock. */
    private interface OnOpen<T> {
        T apply(File f);
    }

    /**
     * Runs {@code body} under the lock of the open file {@code name}; refuses a name never opened (or deleted)
     * and a file closed by its last writer, as the global-lock baseline does.
     */
    private <T> T onOpen(String name, OnOpen<T> body) {
        while (true) {
            File f = files.get(name);
            if (f == null) throw new AllocationException.UnknownFile("file " + name + " was never opened");
            f.lock.lock();
            try {
                if (f.deleted) continue;
                if (f.state.writers == 0)
                    throw new AllocationException.UnknownFile("file " + name + " is not open (closed by its last writer)");
                return body.apply(f);
            } finally {
                f.lock.unlock();
            }
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
        return done(() -> onOpen(file, f -> getBlocks(f, logicalBlock, maxBlocks, create)));
    }

    /** The whole batch under one acquisition of the file's lock, in order; the first refusal ends it. */
    @Override
    public CompletionStage<List<BlockRun>> getBlocks(String file, List<MapRequest> requests) {
        return done(() -> {
            if (requests == null || requests.size() > MAX_BATCH)
                throw new AllocationException.InvalidRequest("a batch holds 0 to " + MAX_BATCH + " requests, not "
                        + (requests == null ? "null" : requests.size()));
            return onOpen(file, f -> {
                List<BlockRun> runs = new ArrayList<>(requests.size());
                for (MapRequest r : requests) {
                    if (r == null)
                        throw new AllocationException.InvalidRequest("request " + runs.size() + " of the batch is null");
                    runs.add(getBlocks(f, r.logicalBlock(), r.maxBlocks(), r.create()));
                }
                return List.copyOf(runs);
            });
        });
    }

    @Override
    public CompletionStage<Long> truncate(String file, long fromLogicalBlock) {
        return done(() -> onOpen(file, f -> truncate(f, fromLogicalBlock)));
    }

    @Override
    public CompletionStage<Long> markWritten(String file, long logicalBlock, long blocks) {
        return done(() -> onOpen(file, f -> markWritten(f, logicalBlock, blocks)));
    }

    @Override
    public CompletionStage<Long> discardUnwritten(String file, long logicalBlock, long blocks) {
        return done(() -> onOpen(file, f -> discardUnwritten(f, logicalBlock, blocks)));
    }

    @Override
    public CompletionStage<Long> punchHole(String file, long logicalBlock, long blocks) {
        return done(() -> onOpen(file, f -> punchHole(f, logicalBlock, blocks)));
    }

    @Override
    public CompletionStage<Void> close(String file) {
        return done(() -> onOpen(file, f -> {
            close(f);
            return null;
        }));
    }

    @Override
    public CompletionStage<Void> delete(String file) {
        return done(() -> {
            while (true) {
                File f = files.get(file);
                if (f == null) throw new AllocationException.UnknownFile("file " + file + " does not exist; nothing deleted");
                f.lock.lock();
                try {
                    if (f.deleted) continue;
                    if (f.state.writers > 0)
                        throw new AllocationException.InvalidRequest("file " + file + " is open (" + f.state.writers
                                + " writers): close it first; nothing deleted");
                    truncateChecked(f.state, 0);
                    f.deleted = true;
                    files.remove(file, f);
                    return null;
                } finally {
                    f.lock.unlock();
                }
            }
        });
    }

    @Override
    public CompletionStage<List<Extent>> fileExtents(String file) {
        return done(() -> {
            while (true) {
                File f = files.get(file);
                if (f == null) throw new AllocationException.UnknownFile("file " + file + " was never opened");
                f.lock.lock();
                try {
                    if (f.deleted) continue;
                    return f.state.extents();
                } finally {
                    f.lock.unlock();
                }
            }
        });
    }

    /** The same walk as the other peers', over the published figures; each group claimed under its lock. */
    @Override
    public CompletionStage<List<Extent>> allocate(long wantBlocks, int unitBlocks, long maxExtentBlocks, long hint) {
        return done(() -> {
            ExtentChecks.allocate(geometry, wantBlocks, unitBlocks, maxExtentBlocks, hint);
            List<Extent> got = new ArrayList<>();
            long cursor = extentCursor;
            ExtentWalk walk = new ExtentWalk(volume, wantBlocks, unitBlocks, maxExtentBlocks, hint, cursor);
            claim(walk, got);
            if (walk.remaining() > 0 && dropPreallocations(true) > 0) {
                walk = new ExtentWalk(volume, walk.remaining(), unitBlocks, maxExtentBlocks, hint, cursor);
                claim(walk, got);
            }
            if (got.isEmpty())
                throw new AllocationException.NoSpace("no free extent of " + unitBlocks
                        + " aligned block(s) for a request of " + wantBlocks + " blocks");
            extentCursor = got.get(got.size() - 1).end();
            return List.copyOf(got);
        });
    }

    /** Asks each group the walk chooses, one at a time, under that group's lock alone. */
    private void claim(ExtentWalk walk, List<Extent> got) {
        for (int g = walk.next(); g >= 0; g = walk.next()) {
            List<Extent> claimed;
            locks[g].lock();
            try {
                claimed = groups[g].claimExtents(walk.claimFor(g));
                if (!claimed.isEmpty()) republish(g);
            } finally {
                locks[g].unlock();
            }
            got.addAll(claimed);
            walk.took(claimed);
        }
    }

    @Override
    public CompletionStage<Void> release(List<Extent> extents) {
        return done(() -> {
            if (extents == null || extents.isEmpty()) return null;
            freeAllOrNone(ExtentChecks.release(geometry, extents));
            return null;
        });
    }

    @Override
    public CompletionStage<FreeExtentPage> freeExtents(long fromBlock, long toBlock, int maxCount) {
        return done(() -> {
            ExtentChecks.freeExtents(geometry, fromBlock, toBlock, maxCount);
            if (fromBlock == toBlock) return new FreeExtentPage(List.of(), -1);
            FreeRunPage page = new FreeRunPage(toBlock, maxCount);
            for (int g = geometry.groupOf(fromBlock); g < groups.length && geometry.groupStart(g) < toBlock; g++) {
                List<Extent> runs;
                locks[g].lock();
                try {
                    runs = groups[g].freeRuns(fromBlock, toBlock, page.wanted());
                } finally {
                    locks[g].unlock();
                }
                if (!page.add(runs)) break;
            }
            return page.page();
        });
    }

    @Override
    public CompletionStage<AllocatorStats> stats() {
        int windows = 0;
        for (int g = 0; g < groups.length; g++) {
            locks[g].lock();
            try {
                windows += groups[g].windowCount();
            } finally {
                locks[g].unlock();
            }
        }
        return CompletableFuture.completedFuture(new AllocatorStats(volume.totalFreeBlocks(), geometry.dataBlocks(),
                windows, 0, 0, 0, 0));
    }
}
