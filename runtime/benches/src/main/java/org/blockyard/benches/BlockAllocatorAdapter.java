package org.blockyard.benches;

import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Supplier;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.AllocationSession;
import org.blockyard.api.alloc.BlockAllocator;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.FreeExtentPage;
import org.blockyard.runtime.alloc.ExtentAllocator;

/**
 * Any {@link BlockAllocator} as an {@link ExtentAllocator}: each call waits for its stage, at most
 * {@value #DEADLINE_MINUTES} minutes. With sessions, each calling thread makes its calls through a session of
 * its own ({@link BlockAllocator#openSession()}), as an engine's threads would; the score and the free extents
 * are read at a quiet point, after the sessions gave their loans back (they borrow again on their next call).
 */
public final class BlockAllocatorAdapter implements ExtentAllocator {
    static final int DEADLINE_MINUTES = 10;

    private final BlockAllocator allocator;
    private final AutoCloseable owner;
    private final boolean sessions;
    private final List<AllocationSession> opened = new CopyOnWriteArrayList<>();
    private final ThreadLocal<AllocationSession> session;
    private final Supplier<CompletionStage<Long>> reclaim;

    /** @param owner closed with the adapter (the allocator itself, or null) */
    public BlockAllocatorAdapter(BlockAllocator allocator, AutoCloseable owner) {
        this(allocator, owner, false, null);
    }

    /**
     * @param sessions whether each thread calls through a session of its own
     * @param reclaim  gives every session's loan back before the score and the free extents are read (or null)
     */
    public BlockAllocatorAdapter(BlockAllocator allocator, AutoCloseable owner, boolean sessions,
                                 Supplier<CompletionStage<Long>> reclaim) {
        this.allocator = allocator;
        this.owner = owner;
        this.sessions = sessions;
        this.reclaim = reclaim;
        this.session = ThreadLocal.withInitial(() -> {
            AllocationSession s = allocator.openSession();
            opened.add(s);
            return s;
        });
    }

    @Override
    public List<Extent> allocate(long wantBlocks, int unitBlocks, long maxExtentBlocks, long hint) {
        try {
            return join(sessions ? session.get().allocate(wantBlocks, unitBlocks, maxExtentBlocks, hint)
                    : allocator.allocate(wantBlocks, unitBlocks, maxExtentBlocks, hint));
        } catch (AllocationException.NoSpace full) {
            return List.of();
        }
    }

    @Override
    public void release(List<Extent> extents) {
        join(sessions ? session.get().release(extents) : allocator.release(extents));
    }

    @Override
    public double fragmentationScore() {
        quiet();
        return join(allocator.fragmentationScore());
    }

    private void quiet() {
        if (reclaim != null) join(reclaim.get());
    }

    @Override
    public long freeBlocks() {
        return join(allocator.freeBlocks());
    }

    /** A page of {@code freeExtents} at a time. */
    @Override
    public void forEachFree(Consumer<Extent> each) {
        quiet();
        long from = 0, to = allocator.geometry().totalBlocks();
        while (from >= 0 && from < to) {
            FreeExtentPage p = join(allocator.freeExtents(from, to, 4096));
            p.extents().forEach(each);
            from = p.nextCursor();
        }
    }

    @Override
    public void close() {
        for (AllocationSession s : opened) s.close();
        if (owner == null) return;
        try {
            owner.close();
        } catch (Exception e) {
            throw new IllegalStateException("allocator did not close", e);
        }
    }

    private static <T> T join(CompletionStage<T> stage) {
        try {
            return stage.toCompletableFuture().get(DEADLINE_MINUTES, TimeUnit.MINUTES);
        } catch (TimeoutException e) {
            throw new IllegalStateException("no answer within " + DEADLINE_MINUTES + " minutes", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) throw r;
            throw new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
