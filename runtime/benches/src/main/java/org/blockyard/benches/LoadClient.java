package org.blockyard.benches;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.IntSupplier;

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
import org.blockyard.runtime.alloc.Receives;
import org.blockyard.runtime.alloc.Reply;

/**
 * A load client as an actor: it appends to one file through {@code GetBlocks} messages, the same ones a
 * user's actor would send, recording each call's latency. With depth 1 it has one call outstanding at a
 * time, like a writing thread; with depth D it keeps D calls for consecutive logical ranges in flight,
 * like an asynchronous writer (fio's iodepth). With batch B each message carries B consecutive calls
 * ({@code GetBlocksBatch}) and its latency is the batch's. A call answered with fewer blocks than asked is
 * followed by one for the rest. A file's calls are answered in the order they were sent, so the calls in
 * flight are a ring. It completes {@code done} with the number of calls when the file reached its size, or,
 * once {@code stopAtNanos} ({@code System.nanoTime()}) has passed, when the calls in flight are answered.
 */
public final class LoadClient extends AbstractBehavior<Object> {

    /** Starts the client; everything else it receives is a {@link Reply} from the allocator. */
    public enum Go { INSTANCE }

    /** What each answer brought: its message's latency, the getBlocks calls it answered and the blocks mapped. */
    @FunctionalInterface
    public interface Answers {
        void answered(long latencyNanos, long calls, long blocks);
    }

    private final FileHandle file;
    private final long fileBlocks;
    private final IntSupplier chunkBlocks;
    private final int batch;
    private final Answers answers;
    private final long stopAtNanos;
    private final CompletableFuture<Long> done;
    /** Where the allocator's replies go: this client itself, or what acknowledges them on a durable volume. */
    private final ActorRef<Reply<?>> replies;
    private final int depth;
    // Messages in flight, oldest first: when each was sent, its first logical block, and blocks asked.
    private long[] sentAt, firstLogical, asked;
    private int head, inFlight;
    private long nextLogical;
    private long mappedBlocks;
    private long calls;

    /**
     * @param acknowledging null in memory; on a durable volume, what the replies pass through before they reach
     *                      the client (spawned as its child): a reply arrives only once it is durable
     */
    static Behavior<Object> create(FileHandle file, long fileBlocks, int chunkBlocks, int depth, int batch,
                                    Function<ActorRef<Reply<?>>, Behavior<Object>> acknowledging,
                                    Latency latency, CompletableFuture<Long> done) {
        return create(file, fileBlocks, () -> chunkBlocks, depth, batch, acknowledging,
                (nanos, calls, blocks) -> latency.record(nanos), Long.MAX_VALUE, done);
    }

    /** A client whose calls ask for {@code chunkBlocks.getAsInt()} blocks each (at least 1), one call per message. */
    public static Behavior<Object> create(FileHandle file, long fileBlocks, IntSupplier chunkBlocks, int depth,
                                           Answers answers, long stopAtNanos, CompletableFuture<Long> done) {
        return create(file, fileBlocks, chunkBlocks, depth, 1, null, answers, stopAtNanos, done);
    }

    private static Behavior<Object> create(FileHandle file, long fileBlocks, IntSupplier chunkBlocks, int depth, int batch,
                                            Function<ActorRef<Reply<?>>, Behavior<Object>> acknowledging,
                                            Answers answers, long stopAtNanos, CompletableFuture<Long> done) {
        return Behaviors.setup(ctx -> new LoadClient(ctx, file, fileBlocks, chunkBlocks, depth, batch, acknowledging,
                answers, stopAtNanos, done));
    }

    private LoadClient(ActorContext<Object> ctx, FileHandle file, long fileBlocks, IntSupplier chunkBlocks,
                       int depth, int batch, Function<ActorRef<Reply<?>>, Behavior<Object>> acknowledging,
                       Answers answers, long stopAtNanos, CompletableFuture<Long> done) {
        super(ctx);
        if (depth < 1) throw new IllegalArgumentException("depth must be at least 1");
        if (batch < 1) throw new IllegalArgumentException("batch must be at least 1");
        this.depth = depth;
        this.batch = batch;
        this.file = file;
        this.fileBlocks = fileBlocks;
        this.chunkBlocks = chunkBlocks;
        this.answers = answers;
        this.stopAtNanos = stopAtNanos;
        this.done = done;
        // A short answer adds a follow-up beside the message in flight: room for both per slot.
        this.sentAt = new long[2 * depth];
        this.firstLogical = new long[2 * depth];
        this.asked = new long[2 * depth];
        // Replies come straight to this actor: no message adapter, whose wrapping costs two objects a reply.
        ActorRef<Reply<?>> self = ctx.getSelf().narrow();
        this.replies = acknowledging == null ? self : ctx.spawn(acknowledging.apply(self), "acknowledging").narrow();
    }

    @Override
    public Receive<Object> createReceive() {
        return Receives.of(m -> m == Go.INSTANCE ? onGo() : onGot((Reply<?>) m));
    }

    private Behavior<Object> onGo() {
        while (inFlight < depth && nextLogical < fileBlocks && !stopped()) {
            long first = nextLogical;
            if (batch == 1) {
                int want = (int) Math.min(chunk(), fileBlocks - first);
                nextLogical += want;
                push(first, want);
                file.tell(new FileActor.GetBlocks(first, want, true, replyTo()));
            } else {
                List<MapRequest> requests = new ArrayList<>(batch);
                while (requests.size() < batch && nextLogical < fileBlocks) {
                    int want = (int) Math.min(chunk(), fileBlocks - nextLogical);
                    requests.add(MapRequest.allocate(nextLogical, want));
                    nextLogical += want;
                }
                push(first, nextLogical - first);
                file.tell(new FileActor.GetBlocksBatch(requests, replyTo()));
            }
        }
        return this;
    }

    private int chunk() {
        return Math.max(1, chunkBlocks.getAsInt());
    }

    private boolean stopped() {
        return stopAtNanos != Long.MAX_VALUE && System.nanoTime() - stopAtNanos >= 0;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private <T> ActorRef<Reply<T>> replyTo() {
        return (ActorRef) replies;
    }

    private void push(long first, long blocks) {
        if (inFlight == sentAt.length) grow();
        int slot = (head + inFlight) % sentAt.length;
        sentAt[slot] = System.nanoTime();
        firstLogical[slot] = first;
        asked[slot] = blocks;
        inFlight++;
    }

    /** More follow-ups than the ring holds (many short answers at once): twice the room, oldest first. */
    private void grow() {
        int n = sentAt.length;
        long[] s2 = new long[2 * n], f2 = new long[2 * n], a2 = new long[2 * n];
        for (int i = 0; i < inFlight; i++) {
            s2[i] = sentAt[(head + i) % n];
            f2[i] = firstLogical[(head + i) % n];
            a2[i] = asked[(head + i) % n];
        }
        sentAt = s2;
        firstLogical = f2;
        asked = a2;
        head = 0;
    }

    private Behavior<Object> onGot(Reply<?> reply) {
        long now = System.nanoTime();
        if (!reply.isOk()) {
            done.completeExceptionally(reply.error());
            return Behaviors.stopped();
        }
        long first = firstLogical[head], want = asked[head], latencyNanos = now - sentAt[head];
        head = (head + 1) % sentAt.length;
        inFlight--;
        long got = 0, answeredCalls = 0;
        if (reply.value() instanceof BlockRun run) {
            answeredCalls = 1;
            got = run.blocks();
        } else {
            for (Object o : (List<?>) reply.value()) {
                answeredCalls++;
                got += ((BlockRun) o).blocks();
            }
        }
        calls += answeredCalls;
        mappedBlocks += got;
        answers.answered(latencyNanos, answeredCalls, got);
        if (got < want) { // short answers: ask for the rest of the range, one call per gap
            if (reply.value() instanceof BlockRun run) {
                resend(run.logicalStart() + run.blocks(), first + want - run.logicalStart() - run.blocks());
            } else {
                // A batch's calls cover consecutive ranges: each ends where the next begins, the last at first + want.
                List<?> runs = (List<?>) reply.value();
                for (int i = 0; i < runs.size(); i++) {
                    BlockRun run = (BlockRun) runs.get(i);
                    long end = i + 1 < runs.size() ? ((BlockRun) runs.get(i + 1)).logicalStart() : first + want;
                    if (run.logicalStart() + run.blocks() < end) resend(run.logicalStart() + run.blocks(),
                            end - run.logicalStart() - run.blocks());
                }
            }
        }
        if (mappedBlocks >= fileBlocks || inFlight == 0 && stopped()) {
            done.complete(calls);
            return Behaviors.stopped();
        }
        return onGo();
    }

    private void resend(long logical, long blocks) {
        push(logical, blocks);
        file.tell(new FileActor.GetBlocks(logical, (int) blocks, true, replyTo()));
    }
}
