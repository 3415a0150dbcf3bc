package org.blockyard.benches;

import java.util.concurrent.CompletableFuture;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;

import org.blockyard.api.alloc.BlockRun;
import org.blockyard.runtime.alloc.ActorBlockAllocator;
import org.blockyard.runtime.alloc.FileActor;
import org.blockyard.runtime.alloc.FileHandle;
import org.blockyard.runtime.alloc.Receives;
import org.blockyard.runtime.alloc.Reply;

/**
 * The stall bench's client as an actor, as a user's actor would append: {@code GetBlocks} and
 * {@code Truncate} messages to its file's handle, one call in flight, the same loop as {@link StallClient}
 * (append {@code chunkBlocks} per call, truncate to 0 at {@code fileBlocks}, only the appends timed and
 * counted). Started from inside the actor system.
 */
final class StallActorClient implements StallLoad {
    private enum Go { INSTANCE }

    private record Answer(Reply<?> reply) {}

    private final ActorRef<Object> ref;
    private final Latency latency = new Latency();
    private final CompletableFuture<StallLoad> done = new CompletableFuture<>();

    StallActorClient(ActorBlockAllocator actors, FileHandle file, long calls, int chunkBlocks, long fileBlocks,
                     Runnable afterCall, String name) {
        this.ref = actors.spawn(Behaviors.setup(ctx -> new Loop(ctx, file, calls, chunkBlocks, fileBlocks, afterCall)), name);
    }

    @Override
    public void start() {
        ref.tell(Go.INSTANCE);
    }

    @Override
    public CompletableFuture<StallLoad> done() {
        return done;
    }

    @Override
    public Latency latency() {
        return latency;
    }

    private final class Loop extends AbstractBehavior<Object> {
        private final FileHandle file;
        private final long calls;
        private final int chunkBlocks;
        private final long fileBlocks;
        private final Runnable afterCall;
        private final ActorRef<Reply<?>> adapter;
        private long made, logical, sentAt, startedAt;

        Loop(ActorContext<Object> ctx, FileHandle file, long calls, int chunkBlocks, long fileBlocks, Runnable afterCall) {
            super(ctx);
            this.file = file;
            this.calls = calls;
            this.chunkBlocks = chunkBlocks;
            this.fileBlocks = fileBlocks;
            this.afterCall = afterCall;
            @SuppressWarnings("unchecked")
            Class<Reply<?>> type = (Class<Reply<?>>) (Class<?>) Reply.class;
            this.adapter = ctx.messageAdapter(type, Answer::new);
        }

        @SuppressWarnings({"unchecked", "rawtypes"})
        private <T> ActorRef<Reply<T>> replyTo() {
            return (ActorRef) adapter;
        }

        @Override
        public Receive<Object> createReceive() {
            return Receives.of(m -> m == Go.INSTANCE ? begin() : onAnswer(((Answer) m).reply()));
        }

        private Behavior<Object> begin() {
            startedAt = System.nanoTime();
            return next();
        }

        private Behavior<Object> next() {
            if (made >= calls) {
                long elapsed = System.nanoTime() - startedAt;
                latency.correctClosedLoop(elapsed, 1);
                done.complete(StallActorClient.this);
                return Behaviors.stopped();
            }
            if (logical < fileBlocks) {
                sentAt = System.nanoTime();
                file.tell(new FileActor.GetBlocks(logical, (int) Math.min(chunkBlocks, fileBlocks - logical), true, replyTo()));
            } else {
                file.tell(new FileActor.Truncate(0, replyTo()));
            }
            return this;
        }

        private Behavior<Object> onAnswer(Reply<?> r) {
            if (!r.isOk()) {
                done.completeExceptionally(r.error());
                return Behaviors.stopped();
            }
            if (r.value() instanceof BlockRun run) {
                latency.record(System.nanoTime() - sentAt);
                made++;
                logical += run.blocks();
                afterCall.run();
            } else {
                logical = 0; // truncated
            }
            return next();
        }
    }
}
