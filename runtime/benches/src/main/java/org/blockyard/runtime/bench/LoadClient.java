package org.blockyard.runtime.bench;

import java.util.concurrent.CompletableFuture;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;

import org.blockyard.api.alloc.BlockRun;
import org.blockyard.runtime.alloc.FileActor;
import org.blockyard.runtime.alloc.FileHandle;
import org.blockyard.runtime.alloc.Receives;
import org.blockyard.runtime.alloc.Reply;

/**
 * A load client as an actor: it appends to one file through {@code GetBlocks} messages, the same ones a
 * user's actor would send, recording each call's latency. With depth 1 it has one call outstanding at a
 * time, like a writing thread; with depth D it keeps D calls for consecutive logical ranges in flight,
 * like an asynchronous writer (fio's iodepth). A call answered with fewer blocks than asked is followed
 * by one for the rest. It completes {@code done} with the number of calls when the file reached its size.
 */
final class LoadClient extends AbstractBehavior<LoadClient.Command> {

    interface Command {}

    enum Go implements Command { INSTANCE }

    private record Got(Reply<BlockRun> reply) implements Command {}

    private final FileHandle file;
    private final long fileBlocks;
    private final int chunkBlocks;
    private final Latency latency;
    private final CompletableFuture<Long> done;
    private final ActorRef<Reply<BlockRun>> adapter;
    private final int depth;
    private final java.util.HashMap<Long, long[]> inFlight = new java.util.HashMap<>(); // logical -> {sentAt, want}
    private long nextLogical;
    private long mappedBlocks;
    private long calls;

    static Behavior<Command> create(FileHandle file, long fileBlocks, int chunkBlocks, int depth,
                                    Latency latency, CompletableFuture<Long> done) {
        return Behaviors.setup(ctx -> new LoadClient(ctx, file, fileBlocks, chunkBlocks, depth, latency, done));
    }

    private LoadClient(ActorContext<Command> ctx, FileHandle file, long fileBlocks, int chunkBlocks,
                       int depth, Latency latency, CompletableFuture<Long> done) {
        super(ctx);
        if (depth < 1) throw new IllegalArgumentException("depth must be at least 1");
        this.depth = depth;
        this.file = file;
        this.fileBlocks = fileBlocks;
        this.chunkBlocks = chunkBlocks;
        this.latency = latency;
        this.done = done;
        @SuppressWarnings("unchecked")
        Class<Reply<BlockRun>> type = (Class<Reply<BlockRun>>) (Class<?>) Reply.class;
        this.adapter = ctx.messageAdapter(type, Got::new);
    }

    @Override
    public Receive<Command> createReceive() {
        return Receives.of(m -> m == Go.INSTANCE ? onGo() : onGot((Got) m));
    }

    private Behavior<Command> onGo() {
        while (inFlight.size() < depth && nextLogical < fileBlocks) {
            int want = (int) Math.min(chunkBlocks, fileBlocks - nextLogical);
            send(nextLogical, want);
            nextLogical += want;
        }
        return this;
    }

    private void send(long logical, int want) {
        inFlight.put(logical, new long[] {System.nanoTime(), want});
        file.tell(new FileActor.GetBlocks(logical, want, true, adapter));
    }

    private Behavior<Command> onGot(Got g) {
        long now = System.nanoTime();
        calls++;
        if (!g.reply().isOk()) {
            done.completeExceptionally(g.reply().error());
            return Behaviors.stopped();
        }
        BlockRun run = g.reply().value();
        long[] sent = inFlight.remove(run.logicalStart());
        latency.record(now - sent[0]);
        mappedBlocks += run.blocks();
        if (run.blocks() < sent[1]) send(run.logicalStart() + run.blocks(), (int) (sent[1] - run.blocks()));
        if (mappedBlocks >= fileBlocks) {
            done.complete(calls);
            return Behaviors.stopped();
        }
        return onGo();
    }
}
