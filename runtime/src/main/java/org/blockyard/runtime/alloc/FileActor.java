package org.blockyard.runtime.alloc;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import akka.Done;
import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;
import akka.actor.typed.javadsl.StashBuffer;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;

/**
 * One file as an actor: it serialises the file's requests and keeps its {@link FileState} (extent map,
 * goal, window mirror). An allocating {@code GetBlocks} picks the goal with the policy, then asks the
 * goal group and, if it cannot serve, the other groups in {@link GroupWalk} order, one at a time; other
 * requests for this file wait in the stash meanwhile. Requests of different files never wait for each
 * other here.
 */
public final class FileActor extends AbstractBehavior<FileActor.Command> {

    public interface Command {}

    /** Adds a writer (the allocator actor forwards re-opens here). */
    public record Open(ActorRef<Reply<ActorRef<Command>>> replyTo) implements Command {}

    public record GetBlocks(long logicalBlock, int maxBlocks, boolean create, ActorRef<Reply<BlockRun>> replyTo)
            implements Command {}

    public record Truncate(long fromLogicalBlock, ActorRef<Reply<Long>> replyTo) implements Command {}

    /** Drops a writer; answers true when it was the last one (the file is then closed). */
    public record Close(ActorRef<Reply<Boolean>> replyTo) implements Command {}

    /** From the allocator actor once the file is closed and no open is on its way. */
    enum Stop implements Command { INSTANCE }

    /**
     * The allocator is closing: the request in progress and every waiting one are answered with
     * {@code Closed}, and so is everything after; acknowledges.
     */
    public record Shutdown(ActorRef<Done> replyTo) implements Command {}

    /** The file's mapped extents in logical order. */
    public record Extents(ActorRef<Reply<List<Extent>>> replyTo) implements Command {}

    /** Every block the file holds: its mapped extents and its preallocation. */
    public record Held(ActorRef<Reply<List<Extent>>> replyTo) implements Command {}

    private record Freed(Reply<Done> reply) implements Command {}

    /** Requests of one file that may wait while one of its allocations or truncates is in progress. */
    static final int STASH_CAPACITY = 10_000;

    private final FileState file;
    private final ActorRef<AllocatorActor.Command> allocator;
    private long opensSeen;
    private final AllocationPolicy policy;
    private final int preallocMin;
    private final VolumeState volume;
    private final Geometry geometry;
    private final List<ActorRef<GroupActor.Command>> groups;
    private final StashBuffer<Command> stash;
    private final ActorRef<GroupActor.Allocated> groupReplies;
    private ActorRef<Reply<Done>> freedAdapter; // made on the first truncate: most files never need it

    // The request in progress; null when idle.
    private GetBlocks allocating;
    private GroupWalk walk;
    private int count;
    private long goal;
    private Truncate truncating;
    private int freesOutstanding;
    private long freedBlocks;
    private AllocationException freeError;

    public static Behavior<Command> create(FileState file, AllocatorSettings settings, VolumeState volume,
                                           List<ActorRef<GroupActor.Command>> groups,
                                           ActorRef<AllocatorActor.Command> allocator) {
        return Behaviors.withStash(STASH_CAPACITY, stash -> Behaviors.setup(ctx ->
                new FileActor(ctx, stash, file, settings, volume, groups, allocator)));
    }

    private FileActor(ActorContext<Command> context, StashBuffer<Command> stash, FileState file,
                      AllocatorSettings settings, VolumeState volume, List<ActorRef<GroupActor.Command>> groups,
                      ActorRef<AllocatorActor.Command> allocator) {
        super(context);
        this.allocator = allocator;
        this.stash = stash;
        this.file = file;
        this.policy = settings.policy();
        this.preallocMin = settings.preallocMinWindowBlocks();
        this.volume = volume;
        this.geometry = volume.geometry();
        this.groups = groups;
        this.groupReplies = context.getSelf().narrow();
    }

    @Override
    public Receive<Command> createReceive() {
        return newReceiveBuilder()
                .onMessage(GroupActor.Allocated.class, this::onGroupAnswer)
                .onMessage(Freed.class, this::onFreed)
                .onMessageEquals(Stop.INSTANCE, Behaviors::stopped)
                .onMessage(Shutdown.class, this::onShutdown)
                .onMessage(Command.class, this::busy, this::stashIt)
                .onMessage(GetBlocks.class, this::onGetBlocks)
                .onMessage(Truncate.class, this::onTruncate)
                .onMessage(Open.class, this::onOpen)
                .onMessage(Close.class, this::onClose)
                .onMessage(Extents.class, this::onExtents)
                .onMessage(Held.class, this::onHeld)
                .build();
    }

    private boolean busy(Command m) {
        return allocating != null || truncating != null;
    }

    private Behavior<Command> stashIt(Command m) {
        if (!stash.isFull()) {
            stash.stash(m);
            return this;
        }
        // More requests waiting for this one file than the stash holds: refuse the newcomer, keep the rest.
        refuse(m, new AllocationException.InvalidRequest("file " + file.name + " already has "
                + STASH_CAPACITY + " requests waiting; wait for some answers before sending more"));
        return this;
    }

    /** Answers {@code m}, if it expects an answer, with {@code error}. */
    private static void refuse(Command m, AllocationException error) {
        if (m instanceof GetBlocks g) g.replyTo().tell(Reply.fail(error));
        else if (m instanceof Truncate t) t.replyTo().tell(Reply.fail(error));
        else if (m instanceof Close c) c.replyTo().tell(Reply.fail(error));
        else if (m instanceof Open o) o.replyTo().tell(Reply.fail(error));
        else if (m instanceof Extents e) e.replyTo().tell(Reply.fail(error));
        else if (m instanceof Held h) h.replyTo().tell(Reply.fail(error));
        else if (m instanceof Shutdown s) s.replyTo().tell(Done.getInstance());
    }

    private Behavior<Command> onShutdown(Shutdown m) {
        AllocationException closed = new AllocationException.Closed("the allocator closed before " + file.name
                + "'s request was served");
        if (allocating != null) allocating.replyTo().tell(Reply.fail(closed));
        if (truncating != null) truncating.replyTo().tell(Reply.fail(closed));
        allocating = null;
        truncating = null;
        walk = null;
        m.replyTo().tell(Done.getInstance());
        Behavior<Command> refusing = Behaviors.receive(Command.class)
                .onAnyMessage(x -> {
                    refuse(x, closed);
                    return Behaviors.same();
                })
                .build();
        return stash.unstashAll(refusing);
    }

    private Behavior<Command> idle() {
        return stash.isEmpty() ? this : stash.unstashAll(this);
    }

    private AllocationException notOpen() {
        return new AllocationException.UnknownFile("file " + file.name + " is not open (closed by its last writer)");
    }

    private Behavior<Command> onGetBlocks(GetBlocks m) {
        volume.countMessage();
        if (file.writers == 0) {
            m.replyTo().tell(Reply.fail(notOpen()));
            return this;
        }
        if (m.logicalBlock() < 0) {
            m.replyTo().tell(Reply.fail(new AllocationException.InvalidRequest(
                    "logical block " + m.logicalBlock() + " of " + file.name + " is below 0")));
            return this;
        }
        if (m.maxBlocks() < 1) {
            m.replyTo().tell(Reply.fail(new AllocationException.InvalidRequest(
                    "getBlocks for " + m.maxBlocks() + " blocks of " + file.name + ": the count must be at least 1")));
            return this;
        }
        BlockRun mapped = file.lookup(m.logicalBlock(), m.maxBlocks());
        if (mapped != null) {
            m.replyTo().tell(Reply.ok(mapped));
            return this;
        }
        if (!m.create()) {
            m.replyTo().tell(Reply.ok(new BlockRun(m.logicalBlock(), -1, 0, false)));
            return this;
        }
        count = file.holeLength(m.logicalBlock(), m.maxBlocks());
        BlockRun pre = file.takePrealloc(m.logicalBlock(), count);
        if (pre != null) {
            m.replyTo().tell(Reply.ok(pre));
            return this;
        }
        dropPrealloc(); // not sequential: its preallocation would only be in the way
        allocating = m;
        goal = policy.goal(m.logicalBlock(), file.lastLogical, file.lastPhysical,
                file.precedingPhysical(m.logicalBlock()), file.homeGroup, volume);
        if (goal < 0 || goal >= geometry.totalBlocks()) goal = geometry.groupStart(file.homeGroup);
        walk = new GroupWalk(policy, volume, geometry.groupOf(goal), file.windowGoalBlocks,
                file.windowGroup >= 0);
        return askNextGroup();
    }

    private Behavior<Command> askNextGroup() {
        int g = walk.next();
        if (g < 0) {
            GetBlocks m = allocating;
            allocating = null;
            walk = null;
            m.replyTo().tell(Reply.fail(new AllocationException.NoSpace("no free block for " + file.name
                    + " (logical " + m.logicalBlock() + "), even without reservation windows")));
            return idle();
        }
        groups.get(g).tell(new GroupActor.Allocate(file.requestFor(g, walk, goal, count, preallocMin), groupReplies));
        return this;
    }

    private Behavior<Command> onGroupAnswer(GroupActor.Allocated a) {
        volume.countMessage();
        int g = a.group();
        if (a.error() != null) { // the group failed or is closed: nothing was allocated there
            GetBlocks m = allocating;
            allocating = null;
            walk = null;
            m.replyTo().tell(Reply.fail(a.error()));
            return idle();
        }
        BlockGroup.Outcome o = a.outcome();
        if (walk.reserve()) {
            int stale = file.windowFrom(g, o);
            if (stale >= 0) groups.get(stale).tell(new GroupActor.DiscardWindow(file.id));
        }
        if (!o.allocated()) return askNextGroup();
        GetBlocks m = allocating;
        allocating = null;
        walk = null;
        m.replyTo().tell(Reply.ok(file.mapAllocated(m.logicalBlock(), count, o.start(), o.blocks())));
        return idle();
    }

    private Behavior<Command> onTruncate(Truncate m) {
        volume.countMessage();
        if (file.writers == 0) {
            m.replyTo().tell(Reply.fail(notOpen()));
            return this;
        }
        if (m.fromLogicalBlock() < 0) {
            m.replyTo().tell(Reply.fail(new AllocationException.InvalidRequest(
                    "truncate of " + file.name + " at logical block " + m.fromLogicalBlock())));
            return this;
        }
        discardWindow(); // ext3_truncate: the block map is about to change
        List<Extent> freed = file.truncate(m.fromLogicalBlock());
        Map<Integer, List<Extent>> byGroup = splitByGroup(geometry, freed);
        if (byGroup.isEmpty()) {
            m.replyTo().tell(Reply.ok(0L));
            return this;
        }
        if (freedAdapter == null) {
            @SuppressWarnings("unchecked")
            Class<Reply<Done>> replyClass = (Class<Reply<Done>>) (Class<?>) Reply.class;
            freedAdapter = getContext().messageAdapter(replyClass, Freed::new);
        }
        truncating = m;
        freesOutstanding = byGroup.size();
        freedBlocks = 0;
        freeError = null;
        for (Extent e : freed) freedBlocks += e.blocks();
        byGroup.forEach((g, list) -> groups.get(g).tell(new GroupActor.Free(list, freedAdapter)));
        return this;
    }

    private Behavior<Command> onFreed(Freed f) {
        volume.countMessage();
        if (!f.reply().isOk() && freeError == null) freeError = f.reply().error();
        if (--freesOutstanding > 0) return this;
        Truncate m = truncating;
        truncating = null;
        m.replyTo().tell(freeError == null ? Reply.ok(freedBlocks) : Reply.fail(freeError));
        return idle();
    }

    private Behavior<Command> onOpen(Open m) {
        volume.countMessage();
        opensSeen++;
        if (file.writers++ == 0) volume.fileOpened(file.homeGroup);
        m.replyTo().tell(Reply.ok(getContext().getSelf()));
        return this;
    }

    private Behavior<Command> onClose(Close m) {
        volume.countMessage();
        if (file.writers == 0) {
            m.replyTo().tell(Reply.fail(notOpen()));
            return this;
        }
        boolean last = --file.writers == 0;
        if (last) {
            discardWindow(); // ext3_release_file: the last writer's close drops the window
            volume.fileClosed(file.homeGroup);
            allocator.tell(new AllocatorActor.Passivate(file.name, getContext().getSelf(), opensSeen));
        }
        m.replyTo().tell(Reply.ok(last));
        return this;
    }

    private Behavior<Command> onExtents(Extents m) {
        volume.countMessage();
        m.replyTo().tell(Reply.ok(file.extents()));
        return this;
    }

    private Behavior<Command> onHeld(Held m) {
        volume.countMessage();
        List<Extent> held = new ArrayList<>(file.extents());
        if (file.preBlocks > 0) held.add(new Extent(file.prePhysical, file.preBlocks));
        m.replyTo().tell(Reply.ok(held));
        return this;
    }

    private void dropPrealloc() {
        Extent e = file.dropPrealloc();
        if (e != null) groups.get(geometry.groupOf(e.start())).tell(new GroupActor.Unclaim(e));
    }

    private void discardWindow() {
        dropPrealloc();
        if (file.windowGroup >= 0) groups.get(file.windowGroup).tell(new GroupActor.DiscardWindow(file.id));
        file.windowDiscarded();
    }

    /** Splits extents at group boundaries and sorts the pieces by group. */
    static Map<Integer, List<Extent>> splitByGroup(Geometry geometry, List<Extent> extents) {
        Map<Integer, List<Extent>> out = new TreeMap<>();
        for (Extent e : extents) {
            long s = e.start();
            while (s < e.end()) {
                int g = geometry.groupOf(s);
                long stop = Math.min(e.end(), geometry.groupStart(g) + geometry.groupBlocks(g));
                out.computeIfAbsent(g, k -> new ArrayList<>()).add(new Extent(s, stop - s));
                s = stop;
            }
        }
        return out;
    }
}
