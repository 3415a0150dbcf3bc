package org.blockyard.benches;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;

import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.MapRequest;
import org.blockyard.runtime.alloc.FileActor;
import org.blockyard.runtime.alloc.FileHandle;
import org.blockyard.runtime.alloc.FileShard;
import org.blockyard.runtime.alloc.Receives;
import org.blockyard.runtime.alloc.Reply;

/**
 * A load client that creates small files one after another, as {@code tar xf} does: open, one getBlocks
 * per block, close. Only the getBlocks calls are timed; with a batch per file or a whole file per message,
 * one sample per file.
 */
final class SmallFileClient extends AbstractBehavior<Object> {

    enum Go { INSTANCE }

    /** How a file's calls reach the allocator. */
    enum Calls {
        /** Open, one {@code GetBlocks} per block, close: a message and an answer each. */
        EACH,
        /** Open, one {@code GetBlocksBatch} with the file's calls, close. */
        BATCH,
        /** One {@code WriteFile} to the file's shard: open, the calls and the close, one answer. */
        WHOLE_FILE
    }

    private enum Phase { OPENING, WRITING, CLOSING }

    /** A file to create: its name and size in blocks. */
    record Job(String name, int blocks) {}

    private final List<ActorRef<FileShard.Command>> shards;
    private final Calls mode;
    private final List<Job> jobs;
    private final Latency latency;
    private final CompletableFuture<Long> done;
    /** Where the allocator's replies go: this client itself, or what acknowledges them on a durable volume. */
    private final ActorRef<Reply<?>> replies;
    private Phase phase;
    private int job;
    private FileHandle file;
    private long logical;
    private long sentAt;
    private long calls;

    /**
     * @param acknowledging null in memory; on a durable volume, what the replies pass through before they reach
     *                      the client (spawned as its child): a reply arrives only once it is durable
     */
    static Behavior<Object> create(List<ActorRef<FileShard.Command>> shards, List<Job> jobs, Calls mode,
                                    Function<ActorRef<Reply<?>>, Behavior<Object>> acknowledging,
                                    Latency latency, CompletableFuture<Long> done) {
        return Behaviors.setup(ctx -> new SmallFileClient(ctx, shards, jobs, mode, acknowledging, latency, done));
    }

    private SmallFileClient(ActorContext<Object> ctx, List<ActorRef<FileShard.Command>> shards, List<Job> jobs, Calls mode,
                            Function<ActorRef<Reply<?>>, Behavior<Object>> acknowledging,
                            Latency latency, CompletableFuture<Long> done) {
        super(ctx);
        this.shards = shards;
        this.mode = mode;
        this.jobs = jobs;
        this.latency = latency;
        this.done = done;
        // Answers come straight to this actor: no message adapter, whose wrapping costs two objects an answer.
        ActorRef<Reply<?>> self = ctx.getSelf().narrow();
        this.replies = acknowledging == null ? self : ctx.spawn(acknowledging.apply(self), "acknowledging").narrow();
    }

    @Override
    public Receive<Object> createReceive() {
        return Receives.of(m -> m == Go.INSTANCE ? next() : onAnswer((Reply<?>) m));
    }

    @SuppressWarnings("unchecked")
    private Behavior<Object> onAnswer(Reply<?> r) {
        if (!r.isOk()) return fail(r);
        return switch (phase) {
            case OPENING -> mode == Calls.WHOLE_FILE ? onWritten((List<?>) r.value())
                    : onOpened((FileHandle) r.value());
            case WRITING -> r.value() instanceof List<?> runs ? onGotAll(runs) : onGot((BlockRun) r.value());
            case CLOSING -> onClosed();
        };
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private <T> ActorRef<Reply<T>> replyTo() {
        return (ActorRef) replies;
    }

    private Behavior<Object> next() {
        if (job >= jobs.size()) {
            done.complete(calls);
            return Behaviors.stopped();
        }
        phase = Phase.OPENING;
        String name = jobs.get(job).name();
        ActorRef<FileShard.Command> shard = shards.get(FileShard.shardOf(name, shards.size()));
        if (mode == Calls.WHOLE_FILE) {
            sentAt = System.nanoTime();
            logical = 0;
            shard.tell(new FileShard.WriteFile(name, calls(), replyTo()));
        } else {
            shard.tell(new FileShard.Open(name, replyTo()));
        }
        return this;
    }

    /** The rest of the current file's one-block calls, from {@code logical} on. */
    private List<MapRequest> calls() {
        List<MapRequest> all = new java.util.ArrayList<>(jobs.get(job).blocks());
        for (long l = logical; l < jobs.get(job).blocks(); l++) all.add(MapRequest.allocate(l, 1));
        return all;
    }

    /** A file written whole: every call answered, the file closed. */
    private Behavior<Object> onWritten(List<?> runs) {
        latency.record(System.nanoTime() - sentAt);
        calls += runs.size();
        job++;
        return next();
    }

    private Behavior<Object> fail(Reply<?> r) {
        done.completeExceptionally(r.error());
        return Behaviors.stopped();
    }

    private Behavior<Object> onOpened(FileHandle opened) {
        file = opened;
        logical = 0;
        phase = Phase.WRITING;
        send();
        return this;
    }

    private void send() {
        sentAt = System.nanoTime();
        if (mode == Calls.EACH) {
            file.tell(new FileActor.GetBlocks(logical, 1, true, replyTo()));
            return;
        }
        file.tell(new FileActor.GetBlocksBatch(calls(), replyTo()));
    }

    /** The whole file's calls, answered together: one latency sample for the file. */
    private Behavior<Object> onGotAll(List<?> runs) {
        latency.record(System.nanoTime() - sentAt);
        calls += runs.size();
        for (Object r : runs) logical += ((BlockRun) r).blocks();
        if (logical < jobs.get(job).blocks()) {
            send();
        } else {
            phase = Phase.CLOSING;
            file.tell(new FileActor.Close(replyTo()));
        }
        return this;
    }

    private Behavior<Object> onGot(BlockRun run) {
        latency.record(System.nanoTime() - sentAt);
        calls++;
        logical += run.blocks();
        if (logical < jobs.get(job).blocks()) {
            send();
        } else {
            phase = Phase.CLOSING;
            file.tell(new FileActor.Close(replyTo()));
        }
        return this;
    }

    private Behavior<Object> onClosed() {
        job++;
        return next();
    }
}
