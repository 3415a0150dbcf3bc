package org.blockyard.runtime.alloc;

import java.util.List;

import akka.Done;
import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.MapRequest;
import org.blockyard.runtime.alloc.GroupFileProtocol.Allocated;
import org.blockyard.runtime.alloc.GroupFileProtocol.Answer;
import org.blockyard.runtime.alloc.GroupFileProtocol.Freed;
import org.blockyard.runtime.alloc.GroupFileProtocol.HostMessage;

/**
 * The file protocol ({@link Command}: what a client sends about one file, through its {@link FileHandle}),
 * and the actor of a file that proved to be a stream. Most files are served by their {@link FileShard}
 * and cost no actor; a file that was opened again after it grew to a stream gets this actor of its own, so
 * that streams are served on as many threads as there are cores. It runs the same {@link FileServer} the
 * shard runs, so a file behaves the same either way.
 *
 * <p>When its last writer closes, the actor hands the file back to its shard ({@link FileShard.Passivate})
 * and from then on forwards whatever still reaches it to the shard, in order, until the shard stops it: the
 * shard serves the file again from the moment it took it back. Its handle, which callers may still hold,
 * goes with the file: from then on it sends to the shard, and the actor is stopped only once no send
 * through it is under way ({@link FileHandle#retire}).
 */
public final class FileActor extends AbstractBehavior<HostMessage> {

    /** What a file's clients, its shard and its allocator send it. The groups' answers come as {@link Answer}s. */
    public sealed interface Command extends HostMessage permits Open, GetBlocks, GetBlocksBatch, WriteWhole, Truncate,
            Purge, MarkWritten, Discard, Close, UsePolicy, Extents, Held, Shutdown, DropPrealloc, Stop,
            PreallocationsDropped {}

    /** Adds a writer (the shard forwards re-opens here); answers the file's handle. */
    public record Open(ActorRef<Reply<FileHandle>> replyTo) implements Command {}

    public record GetBlocks(long logicalBlock, int maxBlocks, boolean create, ActorRef<Reply<BlockRun>> replyTo)
            implements Command {}

    /**
     * Several {@code GetBlocks} in one message, served in order and answered together (one run per request);
     * the first refusal ends the batch with its error ({@link org.blockyard.api.alloc.BlockAllocator#getBlocks(String, List)}).
     */
    public record GetBlocksBatch(List<MapRequest> requests, ActorRef<Reply<List<BlockRun>>> replyTo) implements Command {}

    /**
     * A file written whole ({@link org.blockyard.api.alloc.BlockAllocator#writeFile}): adds a writer, serves
     * {@code requests} as {@link GetBlocksBatch} does, then drops the writer as {@link Close} does, whatever the
     * batch's outcome; answered once the close is done, with the runs or the batch's error.
     */
    public record WriteWhole(List<MapRequest> requests, ActorRef<Reply<List<BlockRun>>> replyTo) implements Command {}

    public record Truncate(long fromLogicalBlock, ActorRef<Reply<Long>> replyTo) implements Command {}

    /** Frees every block of a closed file, which is being deleted (from its shard, never to a file's own actor). */
    record Purge(ActorRef<Reply<Long>> replyTo) implements Command {}

    /** Converts the unwritten runs in a range to written; answers how many blocks changed state. */
    public record MarkWritten(long logicalBlock, long blocks, ActorRef<Reply<Long>> replyTo) implements Command {}

    /**
     * Unmaps and frees the unwritten runs in a range, the written ones too with {@code punch} (a hole punched),
     * and the preallocation; answers the blocks unmapped.
     */
    public record Discard(long logicalBlock, long blocks, boolean punch, ActorRef<Reply<Long>> replyTo) implements Command {}

    /** Drops a writer; answers true when it was the last one (the file is then closed). */
    public record Close(ActorRef<Reply<Boolean>> replyTo) implements Command {}

    /**
     * The allocator switched policies: from the next request on this file uses {@code policy}; its window
     * and preallocation, made under the old one, are given back. Served at a request boundary (it waits
     * like any request while one is in progress, which finishes under the policy it started with).
     */
    public record UsePolicy(AllocationPolicy policy) implements Command {}

    /** The file's mapped extents in logical order. */
    public record Extents(ActorRef<Reply<List<Extent>>> replyTo) implements Command {}

    /** Every block the file holds: its mapped extents and its preallocation. */
    public record Held(ActorRef<Reply<List<Extent>>> replyTo) implements Command {}

    /**
     * The allocator is closing: the request in progress and every waiting one are answered with
     * {@code Closed}, and so is everything after; acknowledges.
     */
    record Shutdown(ActorRef<Done> replyTo) implements Command {}

    /**
     * Give up the unused preallocation; answered at once, even while a request of this file is in
     * progress (the answer lists the extent the caller must free, or nothing).
     */
    record DropPrealloc(ActorRef<PreallocationDrop.Returned> replyTo) implements Command {}

    /** Once the shard took the file back and no send through the actor's handle is under way. */
    enum Stop implements Command { INSTANCE }

    private record PreallocationsDropped(long blocks) implements Command {}

    private final FileServer server;
    private final ActorRef<HostMessage> shard;
    private final ActorRef<AllocatorActor.Command> allocator;
    /** What every {@code Open} here answers. */
    private final FileHandle handle;
    private ActorRef<Long> droppedAdapter; // made on the first "no space"

    /** @param shard the shard that hosts the file, which takes its answers back once the file is handed back */
    static Behavior<Command> create(FileServer server, ActorRef<HostMessage> shard,
                                    ActorRef<AllocatorActor.Command> allocator, List<ActorRef<GroupActor.Command>> groups) {
        return Behaviors.<HostMessage>setup(ctx -> new FileActor(ctx, server, shard, allocator, groups)).narrow();
    }

    private FileActor(ActorContext<HostMessage> context, FileServer server, ActorRef<HostMessage> shard,
                      ActorRef<AllocatorActor.Command> allocator, List<ActorRef<GroupActor.Command>> groups) {
        super(context);
        this.server = server;
        this.shard = shard;
        this.allocator = allocator;
        ActorRef<HostMessage> self = context.getSelf();
        this.handle = new FileHandle(server.file.name, shard.narrow(), server, self.narrow());
        server.driveBy(new FileServer.ActorDriver(groups, self.narrow(), context.getLog()) {
            @Override
            public void dropPreallocations(FileServer file) {
                if (droppedAdapter == null)
                    droppedAdapter = getContext().messageAdapter(Long.class, PreallocationsDropped::new);
                allocator.tell(new AllocatorActor.DropPreallocations(droppedAdapter));
            }

            @Override
            public FileHandle handle(FileServer file) {
                return handle;
            }

            @Override
            public boolean lastClosed(FileServer file) {
                return true; // handed back to the shard in serve(), with what waits behind the close
            }
        });
    }

    @Override
    public Receive<HostMessage> createReceive() {
        return Receives.of(this::serve);
    }

    private Behavior<HostMessage> serve(HostMessage m) {
        if (m instanceof Allocated a) server.allocated(a);
        else if (m instanceof Freed f) server.freed(f);
        else if (m instanceof PreallocationsDropped d) server.preallocationsDropped(d.blocks());
        else if (m instanceof DropPrealloc d) {
            d.replyTo().tell(new PreallocationDrop.Returned(getContext().getSelf(), server.takePreallocation(), List.of()));
        } else if (m instanceof Shutdown s) return onShutdown(s);
        else if (m == Stop.INSTANCE) return Behaviors.stopped();
        else if (m instanceof Command c) server.receive(c);
        else return Behaviors.unhandled(); // a shard's command: never sent here
        if (server.handedOver()) {
            shard.tell(new FileShard.Passivate(server, handle, server.takeWaiting()));
            return forwarding();
        }
        return this;
    }

    /**
     * After the last close: the shard owns the file again; what still comes here goes there, in order (a group's
     * answer as it is: it names the file's server, which the shard serves now).
     */
    private Behavior<HostMessage> forwarding() {
        return Behaviors.receive(HostMessage.class)
                .onMessageEquals(Stop.INSTANCE, Behaviors::stopped)
                .onMessage(DropPrealloc.class, d -> {
                    d.replyTo().tell(new PreallocationDrop.Returned(getContext().getSelf(), List.of(), List.of()));
                    return Behaviors.same();
                })
                .onMessage(Shutdown.class, s -> {
                    s.replyTo().tell(Done.getInstance());
                    return Behaviors.same();
                })
                .onMessage(Command.class, m -> {
                    shard.tell(new FileShard.ToFile(server, m));
                    return Behaviors.same();
                })
                .onMessage(Answer.class, a -> {
                    shard.tell(a);
                    return Behaviors.same();
                })
                .build();
    }

    private Behavior<HostMessage> onShutdown(Shutdown m) {
        AllocationException closed = new AllocationException.Closed("the allocator closed before " + server.file.name
                + "'s request was served");
        server.shutdown(closed);
        m.replyTo().tell(Done.getInstance());
        return Behaviors.receive(HostMessage.class)
                .onAnyMessage(x -> {
                    if (x instanceof Shutdown s) s.replyTo().tell(Done.getInstance());
                    else FileServer.refuse(x, closed);
                    return Behaviors.same();
                })
                .build();
    }
}
