package org.blockyard.benches;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import org.blockyard.api.alloc.BlockAllocator;
import org.blockyard.api.alloc.BlockRun;

/**
 * A closed-loop client of the stall bench, through the {@link BlockAllocator} interface only: it appends
 * to one file, {@code chunkBlocks} per {@code getBlocks} call, one call in flight; when the file reaches
 * {@code fileBlocks} it truncates it to 0 (so its group never fills) and starts again. Only the
 * {@code getBlocks} calls are timed and counted; the truncates fall inside the client's interval between
 * calls.
 *
 * <p>It never blocks a thread: each answer that is not complete yet continues the loop in its callback,
 * on the thread that completed it (a dispatcher thread of the actor allocator), and each answer that is
 * already complete (every answer of the global lock, which runs on the caller's thread) continues the
 * loop in place. Started on a plain thread, it runs there to its end against the lock; started from inside
 * the actor system, it runs as a chain of asks.
 */
final class StallClient implements StallLoad {
    private final BlockAllocator allocator;
    private final String file;
    private final long calls;
    private final int chunkBlocks;
    private final long fileBlocks;
    private final Runnable beforeCall;
    private final Runnable afterCall;
    private final Latency latency = new Latency();
    private final CompletableFuture<StallClient> done = new CompletableFuture<>();
    private long made;
    private long logical;
    private long sentAt;
    private long startedAt;
    private long elapsedNanos;

    /**
     * @param file       an open file of {@code allocator}
     * @param beforeCall run at the start of each timed call, inside its time (a wait the call would have)
     * @param afterCall  run after each timed call (the victim's pacing counts client calls)
     */
    StallClient(BlockAllocator allocator, String file, long calls, int chunkBlocks, long fileBlocks,
                Runnable beforeCall, Runnable afterCall) {
        if (fileBlocks < chunkBlocks) throw new IllegalArgumentException("a file holds at least one call's blocks");
        this.allocator = allocator;
        this.file = file;
        this.calls = calls;
        this.chunkBlocks = chunkBlocks;
        this.fileBlocks = fileBlocks;
        this.beforeCall = beforeCall;
        this.afterCall = afterCall;
    }

    @Override
    public CompletableFuture<StallClient> done() {
        return done;
    }

    @Override
    public Latency latency() {
        return latency;
    }

    long calls() {
        return made;
    }

    long elapsedNanos() {
        return elapsedNanos;
    }

    @Override
    public void start() {
        startedAt = System.nanoTime();
        next();
    }

    private void next() {
        try {
            while (made < calls) {
                boolean timed = logical < fileBlocks;
                CompletableFuture<?> f;
                if (timed) {
                    int want = (int) Math.min(chunkBlocks, fileBlocks - logical);
                    sentAt = System.nanoTime();
                    beforeCall.run();
                    f = allocator.getBlocks(file, logical, want, true).toCompletableFuture();
                } else {
                    f = allocator.truncate(file, 0).toCompletableFuture();
                }
                if (!f.isDone()) {
                    f.whenComplete((v, e) -> {
                        if (answered(timed, v, e)) next();
                    });
                    return;
                }
                Object v = null;
                Throwable e = null;
                try {
                    v = f.join();
                } catch (CompletionException x) {
                    e = x;
                }
                if (!answered(timed, v, e)) return;
            }
            elapsedNanos = System.nanoTime() - startedAt;
            latency.correctClosedLoop(elapsedNanos, 1);
            done.complete(this);
        } catch (RuntimeException e) {
            done.completeExceptionally(e);
        }
    }

    private boolean answered(boolean timed, Object value, Throwable error) {
        if (error != null) {
            done.completeExceptionally(error instanceof CompletionException && error.getCause() != null
                    ? error.getCause() : error);
            return false;
        }
        if (timed) {
            latency.record(System.nanoTime() - sentAt);
            made++;
            logical += ((BlockRun) value).blocks();
            afterCall.run();
        } else {
            logical = 0;
        }
        return true;
    }
}
