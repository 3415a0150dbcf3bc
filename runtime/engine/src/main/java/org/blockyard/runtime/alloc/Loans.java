package org.blockyard.runtime.alloc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import com.typesafe.config.Config;

/**
 * The sessions of one actor allocator and the rules for their loans: how much a session borrows, how many frees
 * it batches, when an idle session or one whose thread died gives its loan back. A sweeper, run on the actor
 * system's scheduler, applies the last two and sends frees that waited for a batch.
 */
final class Loans {
    private final Set<LoanSession> open = ConcurrentHashMap.newKeySet();
    private final AtomicLong nextId = new AtomicLong();
    private final long loanBlocks;
    private final int freeBatch;
    private final long idleNanos;
    private final Duration closeWait;
    /** Until when no session borrows (System.nanoTime()): set when an allocation found the volume full. */
    private volatile long leanUntil = System.nanoTime();

    /** {@code blockyard.alloc.sessions}: {@code loan-blocks}, {@code free-batch}, {@code idle}, {@code close-wait}. */
    Loans(Config config) {
        Config c = config.getConfig("blockyard.alloc.sessions");
        this.loanBlocks = c.getLong("loan-blocks");
        this.freeBatch = c.getInt("free-batch");
        this.idleNanos = c.getDuration("idle").toNanos();
        this.closeWait = c.getDuration("close-wait");
        if (loanBlocks < 1 || freeBatch < 1) throw new IllegalArgumentException("blockyard.alloc.sessions: loan-blocks "
                + loanBlocks + " and free-batch " + freeBatch + " must be at least 1");
    }

    long loanBlocks() {
        return loanBlocks;
    }

    int freeBatch() {
        return freeBatch;
    }

    Duration closeWait() {
        return closeWait;
    }

    /** How often the sweeper runs: a tenth of the idle bound, between 10 ms and 1 s. */
    Duration sweepEvery() {
        return Duration.ofNanos(Math.max(10_000_000L, Math.min(1_000_000_000L, idleNanos / 10)));
    }

    LoanSession open(ActorBlockAllocator host, int home) {
        LoanSession s = new LoanSession(nextId.incrementAndGet(), Thread.currentThread(), host, this, home);
        open.add(s);
        return s;
    }

    void closed(LoanSession s) {
        open.remove(s);
    }

    int count() {
        return open.size();
    }

    List<LoanSession> sessions() {
        return new ArrayList<>(open);
    }

    /** Whether sessions may borrow now. */
    boolean lending() {
        return System.nanoTime() - leanUntil >= 0;
    }

    /**
     * An allocation found the volume (nearly) full: the loans go back, and for {@code lean} no session borrows,
     * so that what came back is not lent again before the allocations that need it got it.
     */
    CompletableFuture<Long> reclaimForSpace(Duration lean) {
        leanUntil = System.nanoTime() + lean.toNanos();
        return reclaimAll();
    }

    /** Every session gives its loan back; completes with the blocks the groups freed. */
    CompletableFuture<Long> reclaimAll() {
        List<CompletableFuture<Long>> backs = new ArrayList<>();
        for (LoanSession s : open) backs.add(s.returnLoan());
        return sum(backs);
    }

    /** Completes, once all of {@code blocks} did, with their sum. */
    static CompletableFuture<Long> sum(List<CompletableFuture<Long>> blocks) {
        return CompletableFuture.allOf(blocks.toArray(CompletableFuture[]::new)).thenApply(v -> {
            long n = 0;
            for (CompletableFuture<Long> b : blocks) n += b.join();
            return n;
        });
    }

    /** One sweep: sessions of dead threads close, idle ones give their loans back, queued frees go out. */
    void sweep() {
        long now = System.nanoTime();
        for (LoanSession s : open) {
            if (!s.owner().isAlive()) s.closeAsync();
            else if (now - s.lastUse() > idleNanos) s.returnLoan();
            else s.flushIfQueued();
            s.expireWaits();
        }
    }

    /** The allocator is closing: every session is refused from now on. */
    void shutdown() {
        for (LoanSession s : open) s.abandon();
        open.clear();
    }
}
