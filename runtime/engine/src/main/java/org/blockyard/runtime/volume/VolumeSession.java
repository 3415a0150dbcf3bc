package org.blockyard.runtime.volume;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.AllocationSession;
import org.blockyard.api.alloc.BlockAllocator;
import org.blockyard.api.alloc.Extent;

/**
 * A session of a durable volume's owner over a loan of the actors ({@link BlockAllocator#openSession()} of the
 * {@code ActorBlockAllocator}): an allocation the loan serves takes no message to the group actors; it appends the
 * owner's record on the caller's thread and completes once that record is durable, so the calls of concurrent
 * sessions share commits. A release journals the owner's record first, then gives the blocks to the loan (or, for
 * blocks it did not hand out, to the groups).
 *
 * <p>The loan itself is memory only, as windows are: the groups journalled their claims of the lent blocks, and no
 * owner record names a block that was lent and not handed out, so after a crash the open's reconciliation frees
 * it; a close frees what the loans still held the same way.
 *
 * <p>The loan belongs to the thread that opened the session. When the loan is closed under the session (its
 * thread died), calls go on through the actors' own path until {@link #close()}.
 */
final class VolumeSession implements AllocationSession {
    private final VolumeAllocator volume;
    private final String owner;
    private final AllocationSession loan;
    private final BlockAllocator actors;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** The loan, or the actors once the loan was closed while this session is open. */
    private final AllocationSession via;

    VolumeSession(VolumeAllocator volume, String owner, AllocationSession loan, BlockAllocator actors) {
        this.volume = volume;
        this.owner = owner;
        this.loan = loan;
        this.actors = actors;
        this.via = new AllocationSession() {
            @Override
            public CompletionStage<List<Extent>> allocate(long want, int unit, long maxExtent, long hint) {
                return loan.allocate(want, unit, maxExtent, hint).exceptionallyCompose(e -> loanClosed(e)
                        ? actors.allocate(want, unit, maxExtent, hint) : CompletableFuture.failedFuture(e));
            }

            @Override
            public CompletionStage<Void> release(List<Extent> extents) {
                return loan.release(extents).exceptionallyCompose(e -> loanClosed(e)
                        ? actors.release(extents) : CompletableFuture.failedFuture(e));
            }

            @Override
            public void close() {
                loan.close();
            }
        };
    }

    /** Whether {@code e} is the loan's refusal as closed while this session is open. */
    private boolean loanClosed(Throwable e) {
        Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
        return cause instanceof AllocationException.Closed && !closed.get();
    }

    String owner() {
        return owner;
    }

    @Override
    public CompletionStage<List<Extent>> allocate(long wantBlocks, int unitBlocks, long maxExtentBlocks, long hint) {
        if (closed.get()) return CompletableFuture.failedFuture(closedError());
        return volume.allocate(owner, wantBlocks, unitBlocks, maxExtentBlocks, hint, via);
    }

    @Override
    public CompletionStage<Void> release(List<Extent> extents) {
        if (closed.get()) return CompletableFuture.failedFuture(closedError());
        return volume.release(owner, extents, via);
    }

    /** Gives the loan back (blocks handed out stay the owner's); idempotent. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) loan.close();
    }

    private static AllocationException closedError() {
        return new AllocationException.Closed("the session is closed");
    }

    @Override
    public String toString() {
        return "volume session of owner '" + owner + "' over " + loan;
    }
}
