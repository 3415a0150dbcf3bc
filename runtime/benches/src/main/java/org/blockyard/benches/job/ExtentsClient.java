package org.blockyard.benches.job;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.BlockAllocator;
import org.blockyard.api.alloc.Extent;
import org.blockyard.benches.Aging;

/**
 * One clone of an {@code ioengine=extents} job: a BlueStore-like user of the extent interface, as an actor
 * that pipes each {@code allocate} and {@code release} answer to itself. It allocates {@code bs} (or a
 * {@code bssplit}/{@code bsrange} draw) in units of {@code unit}, extents of at most {@code max_extent},
 * keeping {@code iodepth} calls in flight, until the blocks it holds reach its share of {@code fill_high} of
 * the volume; then it releases whole earlier allocations, picked at random, down to its share of
 * {@code fill_low}, and fills again (Ceph's fill, free, refill). What it holds when it ends stays allocated.
 * An allocation answered NoSpace (another job filled the volume) turns it to releasing; with nothing left to
 * release, it ends.
 *
 * <p>An allocation is <em>split</em> when it comes back in more extents than {@code ceil(want / max_extent)},
 * as the {@code extents} bench counts it.
 */
final class ExtentsClient extends AbstractBehavior<ExtentsClient.Command> {

    interface Command {}

    /** Start; the run's clock counts from {@code originNanos} ({@code System.nanoTime()}), the same for every clone. */
    record Go(long originNanos) implements Command {}

    private record Allocated(long wantBlocks, long sentNanos, List<Extent> extents, Throwable error) implements Command {}

    private record Released(long blocks, Throwable error) implements Command {}

    private final BlockAllocator allocator;
    private final JobStats stats;
    private final JobSpec job;
    private final int blockBytes, unitBlocks;
    private final long maxExtentBlocks, highBlocks, lowBlocks;
    private long originNanos;
    private final Random rnd;
    private final CompletableFuture<Void> done;
    private final List<List<Extent>> held = new ArrayList<>();
    private long heldBlocks, pendingBlocks, issuedBytes;
    private int inFlight;
    private boolean releasing, ended;
    private final boolean giveBack;
    private boolean givingBack;

    /** @param shareBlocks the clone's part of the volume, which the fill marks are fractions of */
    static Behavior<Command> create(BlockAllocator allocator, JobStats stats, long shareBlocks, long seed,
                                    CompletableFuture<Void> done) {
        return create(allocator, stats, shareBlocks, seed, done, false);
    }

    /**
     * As above; with {@code giveBack} the clone releases what it holds before it ends, so that on an allocator
     * that outlives the run (a host's) the run leaves nothing allocated.
     */
    static Behavior<Command> create(BlockAllocator allocator, JobStats stats, long shareBlocks, long seed,
                                    CompletableFuture<Void> done, boolean giveBack) {
        return Behaviors.setup(ctx -> new ExtentsClient(ctx, allocator, stats, shareBlocks, seed, done, giveBack));
    }

    private ExtentsClient(ActorContext<Command> ctx, BlockAllocator allocator, JobStats stats, long shareBlocks,
                          long seed, CompletableFuture<Void> done, boolean giveBack) {
        super(ctx);
        this.giveBack = giveBack;
        this.allocator = allocator;
        this.stats = stats;
        this.job = stats.job;
        this.blockBytes = allocator.geometry().blockSizeBytes();
        this.unitBlocks = (int) (job.unitBytes() / blockBytes);
        this.maxExtentBlocks = job.maxExtentBytes() / blockBytes;
        this.highBlocks = (long) (job.fillHigh() * shareBlocks);
        this.lowBlocks = (long) (job.fillLow() * shareBlocks);
        this.rnd = new Random(seed * 1_000_003L + 7919L * stats.clone + job.name().hashCode());
        this.done = done;
    }

    @Override
    public Receive<Command> createReceive() {
        return newReceiveBuilder()
                .onMessage(Go.class, this::onGo)
                .onMessage(Allocated.class, this::onAllocated)
                .onMessage(Released.class, this::onReleased)
                .build();
    }

    private Behavior<Command> onGo(Go go) {
        originNanos = go.originNanos();
        return step();
    }

    private long now() {
        return System.nanoTime() - originNanos;
    }

    /** Sends calls while a slot is free and there is something to do; ends the clone when there is not. */
    private Behavior<Command> step() {
        while (inFlight < job.iodepth() && !ended) {
            if (releasing && (heldBlocks <= lowBlocks || held.isEmpty())) releasing = false;
            if (!releasing && heldBlocks + pendingBlocks >= highBlocks && !held.isEmpty()) releasing = true;
            if (releasing) {
                release();
            } else if (stats.more(now(), issuedBytes) && heldBlocks + pendingBlocks < highBlocks) {
                allocate();
            } else {
                break;
            }
        }
        if (inFlight > 0) return this; // an answer comes, and with it the next step
        if (giveBack && !held.isEmpty()) {
            List<Extent> all = new ArrayList<>();
            for (List<Extent> h : held) all.addAll(h);
            long blocks = heldBlocks;
            held.clear();
            heldBlocks = 0;
            givingBack = true;
            inFlight++;
            getContext().pipeToSelf(allocator.release(all), (v, error) -> new Released(blocks, error));
            return this;
        }
        stats.finish(now());
        done.complete(null);
        return Behaviors.stopped();
    }

    private void allocate() {
        long bytes = Math.min(job.bs().next(rnd), job.bytesPerClone() - issuedBytes); // the last one may be smaller
        long want = Math.max(1, (bytes + blockBytes - 1) / blockBytes);
        want = (want + unitBlocks - 1) / unitBlocks * unitBlocks;
        long wantBlocks = want;
        pendingBlocks += want;
        issuedBytes += want * blockBytes;
        inFlight++;
        stats.sent(inFlight);
        long sent = now();
        getContext().pipeToSelf(allocator.allocate(want, unitBlocks, maxExtentBlocks, -1),
                (extents, error) -> new Allocated(wantBlocks, sent, extents, error));
    }

    private void release() {
        List<Extent> victim = Aging.removeRandom(held, rnd);
        long blocks = Aging.blocks(victim);
        heldBlocks -= blocks;
        inFlight++;
        getContext().pipeToSelf(allocator.release(victim), (v, error) -> new Released(blocks, error));
    }

    private Behavior<Command> onAllocated(Allocated m) {
        inFlight--;
        pendingBlocks -= m.wantBlocks();
        if (m.error() != null) {
            Throwable e = m.error() instanceof CompletionException && m.error().getCause() != null ? m.error().getCause() : m.error();
            if (!(e instanceof AllocationException.NoSpace)) return fail(e);
            stats.count("enospc", 1);
            if (held.isEmpty()) ended = true;
            else releasing = true;
            return step();
        }
        long got = Aging.blocks(m.extents());
        held.add(m.extents());
        heldBlocks += got;
        long now = now();
        if (stats.answered(now, 1, got * blockBytes)) {
            stats.clat.record(now - m.sentNanos());
            if (Aging.split(m.wantBlocks(), maxExtentBlocks, m.extents().size())) {
                stats.count("split_allocations", 1);
                stats.count("split_extents", m.extents().size());
            }
            if (got < m.wantBlocks()) stats.count("short_allocations", 1);
        }
        return step();
    }

    private Behavior<Command> onReleased(Released m) {
        inFlight--;
        if (m.error() != null) return fail(m.error());
        if (!givingBack && now() - stats.measureFromNanos >= 0) {
            stats.count("releases", 1);
            stats.count("released_bytes", m.blocks() * blockBytes);
        }
        return step();
    }

    private Behavior<Command> fail(Throwable e) {
        done.completeExceptionally(e);
        return Behaviors.stopped();
    }
}
