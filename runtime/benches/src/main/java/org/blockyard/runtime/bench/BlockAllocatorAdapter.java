package org.blockyard.runtime.bench;

import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.function.Consumer;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.BlockAllocator;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.FreeExtentPage;

/** Any {@link BlockAllocator} as an {@link ExtentAllocator}: each call waits for its stage. */
public final class BlockAllocatorAdapter implements ExtentAllocator {
    private final BlockAllocator allocator;
    private final AutoCloseable owner;

    /** @param owner closed with the adapter (the allocator itself, or null) */
    public BlockAllocatorAdapter(BlockAllocator allocator, AutoCloseable owner) {
        this.allocator = allocator;
        this.owner = owner;
    }

    @Override
    public List<Extent> allocate(long wantBlocks, int unitBlocks, long maxExtentBlocks, long hint) {
        try {
            return join(allocator.allocate(wantBlocks, unitBlocks, maxExtentBlocks, hint));
        } catch (AllocationException.NoSpace full) {
            return List.of();
        }
    }

    @Override
    public void release(List<Extent> extents) {
        join(allocator.release(extents));
    }

    @Override
    public double fragmentationScore() {
        return join(allocator.fragmentationScore());
    }

    @Override
    public long freeBlocks() {
        return join(allocator.freeBlocks());
    }

    /** A page of {@code freeExtents} at a time. */
    @Override
    public void forEachFree(Consumer<Extent> each) {
        long from = 0, to = allocator.geometry().totalBlocks();
        while (from >= 0 && from < to) {
            FreeExtentPage p = join(allocator.freeExtents(from, to, 4096));
            p.extents().forEach(each);
            from = p.nextCursor();
        }
    }

    @Override
    public void close() {
        if (owner == null) return;
        try {
            owner.close();
        } catch (Exception e) {
            throw new IllegalStateException("allocator did not close", e);
        }
    }

    private static <T> T join(CompletionStage<T> stage) {
        try {
            return stage.toCompletableFuture().get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) throw r;
            throw new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
