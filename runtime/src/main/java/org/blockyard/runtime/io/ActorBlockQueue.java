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

/** The {@link BlockQueue} service over a {@link QueueActor}: each call is one ask. */
public final class ActorBlockQueue implements BlockQueue {
    private final ActorRef<QueueActor.Command> queue;
    private final Scheduler scheduler;
    private final QueueLimits limits;
    private final long capacitySectors;
    private final Duration timeout;

    /**
     * @param timeout how long a call may wait for its answer; a submission's answer includes its time in the
     *                queue and on the device, so this must cover the worst backlog expected
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
        return AskPattern.<QueueActor.Command, QueueActor.Completed>ask(queue,
                replyTo -> new QueueActor.Submit(request, replyTo), timeout, scheduler)
                .thenCompose(c -> c.error() != null ? CompletableFuture.failedFuture(c.error())
                        : CompletableFuture.completedFuture(c.completion()));
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
        return AskPattern.<QueueActor.Command, QueueActor.Switched>ask(queue,
                replyTo -> new QueueActor.SetElevator(nameOrAlias, replyTo), timeout, scheduler)
                .thenCompose(s -> s.error() != null ? CompletableFuture.failedFuture(s.error())
                        : CompletableFuture.completedFuture(s.result()));
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
