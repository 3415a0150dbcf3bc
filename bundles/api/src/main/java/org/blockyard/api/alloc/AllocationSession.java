package org.blockyard.api.alloc;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;

import org.osgi.annotation.versioning.ProviderType;

/**
 * A caller thread's own way into the extent calls of a {@link BlockAllocator}: open one per thread that
 * allocates and releases often, make that thread's calls through it, and close it when the thread is done.
 * The calls mean exactly what the allocator's calls of the same name mean, with the same checks and the same
 * typed errors; what differs is who waits for whom.
 *
 * <p>An allocator may lend a session free space ahead of need (the actor allocator does: runs cut best-fit
 * from a group's free runs, booked in the group so that nobody else can take them). A call the loan can
 * serve, and a release of blocks the session handed out, completes on the caller's thread before the method
 * returns, with no message to wait for; any other call takes the allocator's own path. Space on loan counts
 * as free in {@link BlockAllocator#freeBlocks()}, is reported by {@link AllocatorStats#loanedBlocks()}, and
 * goes back when the session closes, after it was idle for a while, when its thread dies, when the policy
 * is switched, and before any allocation is refused with {@link AllocationException.NoSpace}.
 *
 * <p>A session is meant for one thread at a time; calls from several threads are safe but contend. A call
 * with a {@code hint} takes the allocator's own path, so a hint is honoured as it is without a session.
 * After {@link #close()} every call is refused with {@link AllocationException.Closed}; blocks allocated
 * through the session stay allocated, and can be released through any session or the allocator.
 */
@ProviderType
public interface AllocationSession extends AutoCloseable {

    /** As {@link BlockAllocator#allocate}. */
    CompletionStage<List<Extent>> allocate(long wantBlocks, int unitBlocks, long maxExtentBlocks, long hint);

    /** As {@link BlockAllocator#release}: all of the extents are checked first, so a bad one frees none. */
    CompletionStage<Void> release(List<Extent> extents);

    /** Gives back what the session holds on loan and waits (boundedly) for the groups to take it; idempotent. */
    @Override
    void close();

    /**
     * A session that forwards every call to {@code allocator}: what an allocator without loans offers, so that
     * a caller can open sessions on any allocator.
     */
    static AllocationSession forwarding(BlockAllocator allocator) {
        AtomicBoolean closed = new AtomicBoolean();
        return new AllocationSession() {
            @Override
            public CompletionStage<List<Extent>> allocate(long wantBlocks, int unitBlocks, long maxExtentBlocks,
                                                          long hint) {
                if (closed.get()) return CompletableFuture.failedFuture(closedError());
                return allocator.allocate(wantBlocks, unitBlocks, maxExtentBlocks, hint);
            }

            @Override
            public CompletionStage<Void> release(List<Extent> extents) {
                if (closed.get()) return CompletableFuture.failedFuture(closedError());
                return allocator.release(extents);
            }

            @Override
            public void close() {
                closed.set(true);
            }
        };
    }

    private static AllocationException closedError() {
        return new AllocationException.Closed("the session is closed");
    }
}
