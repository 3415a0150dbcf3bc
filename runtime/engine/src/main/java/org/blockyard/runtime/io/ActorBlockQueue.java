package org.blockyard.runtime.io;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Scheduler;
import akka.actor.typed.javadsl.AskPattern;
import org.blockyard.api.io.BlockQueue;
import org.blockyard.api.io.ElevatorSwitch;
import org.blockyard.api.io.IoCompletion;
import org.blockyard.api.io.IoException;
import org.blockyard.api.io.IoRequest;
import org.blockyard.api.io.QueueLimits;
import org.blockyard.api.io.QueueStats;

/**
 * The {@link BlockQueue} service over a {@link QueueActor}. Submissions are told with a future that the
 * queue completes (no time limit: a submission waits as long as the queue holds it); the other calls are
 * asks with {@code timeout}.
 */
public final class ActorBlockQueue implements BlockQueue {
    private final ActorRef<QueueActor.Command> queue;
    private final Scheduler scheduler;
    private final QueueLimits limits;
    private final long capacitySectors;
    private final Duration timeout;
    private volatile boolean closed;
    /** Submissions being handed over right now; see {@link #close()}. */
    private final java.util.concurrent.atomic.AtomicLong sending = new java.util.concurrent.atomic.AtomicLong();

    /**
     * @param timeout how long a call other than {@link #submit} may wait for its answer
     */
    public ActorBlockQueue(ActorRef<QueueActor.Command> queue, Scheduler scheduler, QueueLimits limits,
                           long capacitySectors, Duration timeout) {
        this.queue = queue;
        this.scheduler = scheduler;
        this.limits = limits;
        this.capacitySectors = capacitySectors;
        this.timeout = timeout;
    }

    /**
     * The queue actor itself, for code that owns the queue's plugins (a plugin binder's {@link QueueBinding}
     * tells it {@link QueueActor.RegisterElevator} and {@link QueueActor.UnregisterElevator}).
     */
    public ActorRef<QueueActor.Command> actor() {
        return queue;
    }

    @Override public QueueLimits limits() { return limits; }
    @Override public long capacitySectors() { return capacitySectors; }

    private static IoException.Closed closedError() {
        return new IoException.Closed("the block queue is closed");
    }

    @Override
    public CompletionStage<IoCompletion> submit(IoRequest request) {
        CompletableFuture<IoCompletion> done = new CompletableFuture<>();
        sending.incrementAndGet(); // before the check: close() waits for every hand-over that passed it
        try {
            if (closed) done.completeExceptionally(closedError());
            else queue.tell(new QueueActor.SubmitAsync(request, done));
        } finally {
            sending.decrementAndGet();
        }
        return done;
    }

    @Override
    public List<CompletionStage<IoCompletion>> submitAll(List<IoRequest> requests) {
        List<CompletableFuture<IoCompletion>> done = new java.util.ArrayList<>(requests.size());
        for (int i = 0; i < requests.size(); i++) done.add(new CompletableFuture<>());
        sending.incrementAndGet();
        try {
            if (closed) for (CompletableFuture<IoCompletion> f : done) f.completeExceptionally(closedError());
            else queue.tell(new QueueActor.SubmitBatch(List.copyOf(requests), List.copyOf(done)));
        } finally {
            sending.decrementAndGet();
        }
        return List.copyOf(done);
    }

    /**
     * Closes the queue: submissions from now on fail with {@link IoException.Closed}; once no hand-over is
     * half done, the queue actor fails what it holds (queued or in flight) the same way, behind everything
     * handed over before. Waits at most {@code timeout} for the actor to confirm.
     */
    public void close() {
        if (closed) return;
        closed = true;
        while (sending.get() != 0) Thread.onSpinWait();
        try {
            AskPattern.<QueueActor.Command, akka.Done>ask(queue, QueueActor.Shutdown::new, timeout, scheduler)
                    .toCompletableFuture().get(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("the block queue did not confirm its shutdown: " + e, e);
        }
    }

    @Override
    public CompletionStage<List<String>> elevators() {
        return listing().thenApply(QueueActor.Listing::ids);
    }

    @Override
    public CompletionStage<String> activeElevator() {
        return listing().thenApply(QueueActor.Listing::active);
    }

    @Override
    public CompletionStage<ElevatorSwitch> setElevator(String nameOrAlias) {
        return switched(replyTo -> new QueueActor.SetElevator(nameOrAlias, replyTo));
    }

    /**
     * Selects {@code nameOrAlias} as a configuration does: one that is not available (not installed, or retired)
     * selects the built-in default, and the answer says so ({@link ElevatorSwitch#fellBack}).
     */
    public CompletionStage<ElevatorSwitch> selectElevator(String nameOrAlias) {
        return switched(replyTo -> new QueueActor.SelectElevator(nameOrAlias, replyTo));
    }

    /**
     * Sets tunable {@code name} of elevator {@code id}, checked against its descriptor
     * ({@link IoException.InvalidTunable} changes nothing); a running {@code id} is rebuilt with it in place.
     */
    public CompletionStage<ElevatorSwitch> setElevatorTunable(String id, String name, long value) {
        return switched(replyTo -> new QueueActor.SetTunable(id, name, value, replyTo));
    }

    /** Drops the run-time value of tunable {@code name} of elevator {@code id}; a running {@code id} is rebuilt. */
    public CompletionStage<ElevatorSwitch> resetElevatorTunable(String id, String name) {
        return switched(replyTo -> new QueueActor.ResetTunable(id, name, replyTo));
    }

    private CompletionStage<ElevatorSwitch> switched(
            java.util.function.Function<ActorRef<QueueActor.Switched>, QueueActor.Command> message) {
        CompletableFuture<ElevatorSwitch> done = new CompletableFuture<>();
        if (closed) {
            done.completeExceptionally(closedError());
            return done;
        }
        AskPattern.<QueueActor.Command, QueueActor.Switched>ask(queue, message::apply, timeout, scheduler)
                .whenComplete((s, e) -> {
                    if (e != null) done.completeExceptionally(e);
                    else if (s.error() != null) done.completeExceptionally(s.error());
                    else done.complete(s.result());
                });
        return done;
    }

    @Override
    public CompletionStage<String> schedulerListing() {
        return listing().thenApply(QueueActor.Listing::sysfs);
    }

    @Override
    public CompletionStage<QueueStats> stats() {
        return AskPattern.ask(queue, QueueActor.GetStats::new, timeout, scheduler);
    }

    private CompletionStage<QueueActor.Listing> listing() {
        return AskPattern.ask(queue, QueueActor.GetListing::new, timeout, scheduler);
    }
}
