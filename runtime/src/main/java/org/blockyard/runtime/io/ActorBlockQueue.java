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

    @Override public QueueLimits limits() { return limits; }
    @Override public long capacitySectors() { return capacitySectors; }

    @Override
    public CompletionStage<IoCompletion> submit(IoRequest request) {
        CompletableFuture<IoCompletion> done = new CompletableFuture<>();
        queue.tell(new QueueActor.SubmitAsync(request, done));
        return done;
    }

    @Override
    public List<CompletionStage<IoCompletion>> submitAll(List<IoRequest> requests) {
        List<CompletableFuture<IoCompletion>> done = new java.util.ArrayList<>(requests.size());
        for (int i = 0; i < requests.size(); i++) done.add(new CompletableFuture<>());
        queue.tell(new QueueActor.SubmitBatch(List.copyOf(requests), List.copyOf(done)));
        return List.copyOf(done);
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
        CompletableFuture<ElevatorSwitch> done = new CompletableFuture<>();
        AskPattern.<QueueActor.Command, QueueActor.Switched>ask(queue,
                replyTo -> new QueueActor.SetElevator(nameOrAlias, replyTo), timeout, scheduler)
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
