package org.blockyard.runtime.volume;

import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.runtime.alloc.Receives;
import org.blockyard.runtime.alloc.Reply;

/**
 * An actor client's acknowledgement on a durable volume. The client gives this actor as the {@code replyTo} of
 * the messages it sends the allocator's actors (file shards, file actors); each reply is handed on to the
 * client once the journal is durable through the records appended by the time it arrived, and in the order
 * the replies arrived (a file's replies keep their order). It does for actors what {@link VolumeAllocator}'s
 * futures do for threads. In memory there is none: replies go straight to the client.
 *
 * <p>Its messages are the allocator's {@link Reply} records (it stands in for the client's reply address) and
 * its own wake-up, so it is a {@code Behavior<Object>}; clients narrow its reference to {@code Reply<?>}.
 */
public final class DurableReplies extends AbstractBehavior<Object> {

    /** A reply's wait for the journal ended, one way or the other. */
    private enum Durable { INSTANCE }

    /** A reply, and the journal's promise for the records appended when it arrived. */
    private record Held(Reply<?> reply, CompletableFuture<Void> durable) {}

    private final Supplier<CompletableFuture<Void>> durable;
    private final ActorRef<Reply<?>> replyTo;
    /** Replies not handed on yet, in arrival order; the head is the next to go. */
    private final ArrayDeque<Held> held = new ArrayDeque<>();
    /**
     * Whether the head's promise will wake this actor. Only the head's does: promises complete in record order,
     * so when the head's completes the replies behind it are handed on too if theirs has, and one wake-up per
     * commit serves every reply it made durable (with 32 calls in flight, one message instead of 32).
     */
    private boolean awaitingHead;

    /**
     * @param durable answers, when a reply arrives, the journal's promise covering every record of the call it
     *                answers
     */
    static Behavior<Object> create(Supplier<CompletableFuture<Void>> durable, ActorRef<Reply<?>> replyTo) {
        return Behaviors.setup(ctx -> new DurableReplies(ctx, durable, replyTo));
    }

    private DurableReplies(ActorContext<Object> ctx, Supplier<CompletableFuture<Void>> durable,
                           ActorRef<Reply<?>> replyTo) {
        super(ctx);
        this.durable = durable;
        this.replyTo = replyTo;
    }

    @Override
    public Receive<Object> createReceive() {
        return Receives.of(m -> m == Durable.INSTANCE ? onDurable() : onReply((Reply<?>) m));
    }

    private Behavior<Object> onReply(Reply<?> r) {
        // A refusal changed nothing, but it must not overtake the replies before it.
        CompletableFuture<Void> f = r.isOk() ? durable.get() : CompletableFuture.completedFuture(null);
        held.add(new Held(r, f));
        return awaitingHead ? this : handOn();
    }

    private Behavior<Object> onDurable() {
        awaitingHead = false;
        return handOn();
    }

    /**
     * Hands on every reply at the head whose records are durable; a later one waits for those before it. When
     * the head's are not durable yet, its promise wakes this actor.
     */
    private Behavior<Object> handOn() {
        while (!held.isEmpty() && held.peek().durable().isDone()) {
            Held h = held.poll();
            if (!h.durable().isCompletedExceptionally()) {
                replyTo.tell(h.reply());
                continue;
            }
            String why = h.durable().handle((x, e) -> e.getMessage()).join();
            replyTo.tell(Reply.fail(new AllocationException.Failed(why)));
        }
        if (!held.isEmpty()) {
            awaitingHead = true;
            getContext().pipeToSelf(held.peek().durable(), (x, e) -> Durable.INSTANCE);
        }
        return this;
    }
}
