package org.blockyard.benches.job;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;

import org.blockyard.api.io.IoCompletion;
import org.blockyard.api.io.IoRequest;
import org.blockyard.runtime.io.QueueActor;

/**
 * One clone of an {@code ioengine=queue} job on a real device, as a user's actor: it tells the queue actor
 * {@link QueueActor.Submit} with itself as {@code replyTo} and sends the next when an answer comes (after the
 * think time, by a scheduled message). Its clock is {@code System.nanoTime()} since the run began. It
 * completes {@code done} when its {@link IoLoad} is done, or with the first error the queue answered.
 */
final class IoClient extends AbstractBehavior<IoClient.Command> {

    interface Command {}

    /** Start; the run's clock counts from {@code originNanos} ({@code System.nanoTime()}), the same for every clone. */
    record Go(long originNanos) implements Command {}

    private record Answered(QueueActor.Completed completed) implements Command {}

    private record Thought(int slot) implements Command {}

    private final IoLoad load;
    private final ActorRef<QueueActor.Command> queue;
    private long originNanos;
    private final CompletableFuture<Void> done;
    private final ActorRef<QueueActor.Completed> replyTo;

    static Behavior<Command> create(IoLoad load, ActorRef<QueueActor.Command> queue, CompletableFuture<Void> done) {
        return Behaviors.setup(ctx -> new IoClient(ctx, load, queue, done));
    }

    private IoClient(ActorContext<Command> ctx, IoLoad load, ActorRef<QueueActor.Command> queue,
                     CompletableFuture<Void> done) {
        super(ctx);
        this.load = load;
        this.queue = queue;
        this.done = done;
        this.replyTo = ctx.messageAdapter(QueueActor.Completed.class, Answered::new);
    }

    @Override
    public Receive<Command> createReceive() {
        return newReceiveBuilder()
                .onMessage(Go.class, this::onGo)
                .onMessage(Answered.class, this::onAnswered)
                .onMessage(Thought.class, this::onThought)
                .build();
    }

    private long now() {
        return System.nanoTime() - originNanos;
    }

    private Behavior<Command> onGo(Go go) {
        originNanos = go.originNanos();
        return send();
    }

    private Behavior<Command> onAnswered(Answered a) {
        if (a.completed().error() != null) {
            done.completeExceptionally(a.completed().error());
            return Behaviors.stopped();
        }
        IoCompletion c = a.completed().completion();
        long think = load.completed(c.id(), c, now(), true);
        if (think > 0) getContext().scheduleOnce(Duration.ofNanos(think), getContext().getSelf(), new Thought(IoLoad.slot(c.id())));
        return send();
    }

    private Behavior<Command> onThought(Thought t) {
        load.wake(t.slot());
        return send();
    }

    /** Sends what the free slots may; stops once the clone is done. */
    private Behavior<Command> send() {
        IoRequest r;
        while ((r = load.next(now())) != null) queue.tell(new QueueActor.Submit(r, replyTo));
        if (!load.done(now())) return this;
        done.complete(null);
        return Behaviors.stopped();
    }
}
