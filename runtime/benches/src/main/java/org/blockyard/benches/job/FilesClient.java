package org.blockyard.benches.job;

import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.Extent;
import org.blockyard.runtime.alloc.ActorBlockAllocator;
import org.blockyard.runtime.alloc.FileActor;
import org.blockyard.runtime.alloc.FileHandle;
import org.blockyard.runtime.alloc.FileShard;
import org.blockyard.runtime.alloc.Reply;
import org.blockyard.benches.Aging;
import org.blockyard.benches.LoadClient;

/**
 * One clone of an {@code ioengine=files} job, a writer of files as a user's actor is one: for each of its
 * {@code nrfiles} files (over and over while a time-based job has time) it sends {@code FileShard.Open} to the
 * file's shard, appends {@code size} bytes with {@code FileActor.GetBlocks} calls of {@code bs} (a
 * {@link LoadClient} child keeps {@code iodepth} of them in flight), asks the shard for the file's extents,
 * truncates it to {@code truncate_to} if the job says so, and closes it. A NoSpace answer ends the clone
 * (counted as {@code enospc}); any other refusal fails {@code done}.
 */
final class FilesClient extends AbstractBehavior<FilesClient.Command> {

    interface Command {}

    /** Start; the run's clock counts from {@code originNanos} ({@code System.nanoTime()}), the same for every clone. */
    record Go(long originNanos) implements Command {}

    /** The answer to the one allocator call in flight; the phase the client is in says which call it was. */
    private record Answer(Reply<?> reply) implements Command {}

    private record Appended(Throwable error) implements Command {}

    private record Deleted(Throwable error) implements Command {}

    private final ActorBlockAllocator allocator;
    private final JobStats stats;
    private final JobSpec job;
    private final String prefix;
    private final boolean deleteEach;
    private final int blockBytes;
    private long originNanos;
    private final Random rnd;
    private final CompletableFuture<Void> done;
    private int fileNo;
    private String file;
    private FileHandle handle;
    private long mappedBytes;
    private boolean full;
    private final ActorRef<Reply<?>> answers;

    static Behavior<Command> create(ActorBlockAllocator allocator, JobStats stats, long seed, CompletableFuture<Void> done) {
        return create(allocator, stats, seed, done, "/jobs/", false);
    }

    /**
     * As above, with the files under {@code root} ({@code /jobs/} above), and with {@code deleteEach} every file
     * deleted once it is closed: on an allocator that outlives the run (a host's), the run leaves nothing behind.
     */
    static Behavior<Command> create(ActorBlockAllocator allocator, JobStats stats, long seed, CompletableFuture<Void> done,
                                    String root, boolean deleteEach) {
        return Behaviors.setup(ctx -> new FilesClient(ctx, allocator, stats, seed, done, root, deleteEach));
    }

    private FilesClient(ActorContext<Command> ctx, ActorBlockAllocator allocator, JobStats stats, long seed,
                        CompletableFuture<Void> done, String root, boolean deleteEach) {
        super(ctx);
        this.allocator = allocator;
        this.stats = stats;
        this.job = stats.job;
        this.deleteEach = deleteEach;
        this.prefix = root + job.name() + "/" + stats.clone + "/";
        this.blockBytes = allocator.geometry().blockSizeBytes();
        this.rnd = new Random(seed * 1_000_003L + stats.clone);
        this.done = done;
        @SuppressWarnings("unchecked")
        Class<Reply<?>> type = (Class<Reply<?>>) (Class<?>) Reply.class;
        this.answers = ctx.messageAdapter(type, Answer::new);
    }

    @Override
    public Receive<Command> createReceive() {
        return newReceiveBuilder().onMessage(Go.class, this::onGo).build();
    }

    private Behavior<Command> onGo(Go go) {
        originNanos = go.originNanos();
        return openNext();
    }

    private long now() {
        return System.nanoTime() - originNanos;
    }

    /** The phase waiting for the answer to one call: {@code next} takes its value. */
    private <T> Behavior<Command> awaiting(java.util.function.Function<T, Behavior<Command>> next) {
        return Behaviors.receive(Command.class)
                .onMessage(Answer.class, a -> {
                    if (!a.reply().isOk()) return fail(a.reply().error());
                    @SuppressWarnings("unchecked")
                    T value = (T) a.reply().value();
                    return next.apply(value);
                })
                .onMessage(Appended.class, this::onAppended)
                .build();
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private <T> ActorRef<Reply<T>> replyTo() {
        return (ActorRef) answers;
    }

    private Behavior<Command> openNext() {
        if (full || !stats.more(now(), mappedBytes) || !job.timeBased() && fileNo >= job.nrfiles()) {
            stats.finish(now());
            done.complete(null);
            return Behaviors.stopped();
        }
        file = prefix + fileNo++;
        allocator.shardOf(file).tell(new FileShard.Open(file, replyTo()));
        return awaiting(this::opened);
    }

    private Behavior<Command> opened(FileHandle h) {
        stats.count("files_opened", 1);
        handle = h;
        long fileBlocks = (job.sizeBytes() + blockBytes - 1) / blockBytes;
        CompletableFuture<Long> appended = new CompletableFuture<>();
        long stopAt = stats.stopAtNanos == Long.MAX_VALUE ? Long.MAX_VALUE : originNanos + stats.stopAtNanos;
        ActorRef<Object> writer = getContext().spawn(LoadClient.create(handle, fileBlocks,
                () -> (int) ((job.bs().next(rnd) + blockBytes - 1) / blockBytes), job.iodepth(), this::answered, stopAt,
                appended), "append-" + fileNo);
        getContext().pipeToSelf(appended, (calls, error) -> new Appended(error));
        writer.tell(LoadClient.Go.INSTANCE);
        return awaiting(x -> fail(new IllegalStateException("an answer while appending")));
    }

    /** From the LoadClient child, on its own thread: only the figures it alone writes. */
    private void answered(long latencyNanos, long calls, long blocks) {
        if (stats.answered(now(), calls, blocks * blockBytes)) stats.clat.record(latencyNanos);
    }

    private Behavior<Command> onAppended(Appended m) {
        if (m.error() != null) {
            Throwable e = m.error() instanceof java.util.concurrent.CompletionException && m.error().getCause() != null
                    ? m.error().getCause() : m.error();
            if (!(e instanceof AllocationException.NoSpace)) return fail(e);
            stats.count("enospc", 1);
            full = true;
        }
        mappedBytes = stats.bytes.get(); // the clone's files so far, this one included
        allocator.shardOf(file).tell(new FileShard.FileExtents(file, false, replyTo()));
        return awaiting(this::mapped);
    }

    private Behavior<Command> mapped(List<Extent> extents) {
        stats.count("extents", extents.size());
        stats.count("extent_bytes", Aging.blocks(extents) * blockBytes);
        if (job.truncateToBytes() == null) return close();
        handle.tell(new FileActor.Truncate((job.truncateToBytes() + blockBytes - 1) / blockBytes, replyTo()));
        return awaiting(this::truncated);
    }

    private Behavior<Command> truncated(Long releasedBlocks) {
        stats.count("truncates", 1);
        stats.count("truncated_bytes", releasedBlocks * blockBytes);
        return close();
    }

    private Behavior<Command> close() {
        handle.tell(new FileActor.Close(replyTo()));
        return awaiting(this::closed);
    }

    private Behavior<Command> closed(Boolean last) {
        stats.count("files_closed", 1);
        if (!deleteEach) return openNext();
        getContext().pipeToSelf(allocator.delete(file), (v, error) -> new Deleted(error));
        return Behaviors.receive(Command.class)
                .onMessage(Deleted.class, d -> d.error() != null ? fail(d.error()) : openNext())
                .build();
    }

    private Behavior<Command> fail(Throwable e) {
        done.completeExceptionally(e);
        return Behaviors.stopped();
    }
}
