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
 * goal, window mirror). An allocating {@code GetBlocks} runs the {@link FileAllocation} steps: the goal
 * group is asked, then, if it cannot serve, the other groups in {@link GroupWalk} order, one at a time;
 * before answering "no space" the allocator actor has every open file give back its preallocation and
 * the walk is retried once. Other requests for this file wait in the stash meanwhile. Requests of
 * different files never wait for each other here.
 *
 * <p>Blocks leave the file in two phases, as a release across groups does: every group concerned checks
 * and holds them ({@code PrepareFree}), and only when all agreed does the map change and the groups
 * free them ({@code CommitFree}); a refused truncate or discard leaves the file as it was.
 *
 * <p>After the last close the actor is passivating: it has asked the allocator actor to stop it and no
 * longer touches the {@link FileState}, which a new actor for the same file may own next. It refuses
 * every request as for a closed file, except an open that the allocator forwarded before it saw the
 * request to passivate (that open makes the actor active again).
 */
public final class FileActor extends AbstractBehavior<FileActor.Command> {

    public interface Command {}

    /** Adds a writer (the allocator actor forwards re-opens here). */
    public record Open(ActorRef<Reply<ActorRef<Command>>> replyTo) implements Command {}

    public record GetBlocks(long logicalBlock, int maxBlocks, boolean create, ActorRef<Reply<BlockRun>> replyTo)
            implements Command {}

    public record Truncate(long fromLogicalBlock, ActorRef<Reply<Long>> replyTo) implements Command {}

    /** Converts the unwritten runs in a range to written; answers how many blocks changed state. */
    public record MarkWritten(long logicalBlock, long blocks, ActorRef<Reply<Long>> replyTo) implements Command {}

    /** Unmaps and frees the unwritten runs in a range (and the preallocation); answers the blocks unmapped. */
    public record DiscardUnwritten(long logicalBlock, long blocks, ActorRef<Reply<Long>> replyTo) implements Command {}

    /** Drops a writer; answers true when it was the last one (the file is then closed). */
    public record Close(ActorRef<Reply<Boolean>> replyTo) implements Command {}

    /** From the allocator actor once the file is closed and no open is on its way. */
    enum Stop implements Command { INSTANCE }

    /**
     * The allocator switched policies: from the next request on this file uses {@code policy}; its window
     * and preallocation, made under the old one, are given back. Served at a message boundary (it waits
     * like any request while one is in progress, which finishes under the policy it started with).
     */
    public record UsePolicy(AllocationPolicy policy) implements Command {}

    /**
     * The allocator is closing: the request in progress and every waiting one are answered with
     * {@code Closed}, and so is everything after; acknowledges.
     */
    public record Shutdown(ActorRef<Done> replyTo) implements Command {}

    /** The file's mapped extents in logical order. */
    public record Extents(ActorRef<Reply<List<Extent>>> replyTo) implements Command {}

    /** Every block the file holds: its mapped extents and its preallocation. */
    public record Held(ActorRef<Reply<List<Extent>>> replyTo) implements Command {}

    /**
     * Give up the unused preallocation; answered at once, even while a request of this file is in
     * progress (the answer lists the extent the caller must free, or nothing).
     */
    record DropPrealloc(ActorRef<PreallocationDrop.Returned> replyTo) implements Command {}

    private record PreallocationsDropped(long blocks) implements Command {}

    private record Freed(Reply<Done> reply) implements Command {}

    /** Requests of one file that may wait while one of its allocations or truncates is in progress. */
    static final int STASH_CAPACITY = 10_000;

    private final FileState file;
    private final ActorRef<AllocatorActor.Command> allocator;
    private long opensSeen;
    private final AllocatorSettings settings;
    private AllocationPolicy policy;
    private final VolumeState volume;
    private final Geometry geometry;
    private final List<ActorRef<GroupActor.Command>> groups;
    private final StashBuffer<Command> stash;
    private final ActorRef<GroupActor.Allocated> groupReplies;
    private final FileAllocation.Groups effects;
    private ActorRef<Reply<Done>> freedAdapter; // made on the first release: most files never need it
    private ActorRef<Long> droppedAdapter; // made on the first "no space"

    // The request in progress; at most one of these is set.
    private GetBlocks allocating;
    private FileAllocation steps;
    private Release releasing;

    /** Blocks leaving the file: held in every group first, then the map changes, then the groups free them. */
    private static final class Release {
        final long tx;
        final Map<Integer, List<Extent>> byGroup;
        final long blocks;
        final Runnable apply;
        final ActorRef<Reply<Long>> replyTo;
        boolean committing;
        int outstanding;
        AllocationException error;

        Release(long tx, Map<Integer, List<Extent>> byGroup, long blocks, Runnable apply, ActorRef<Reply<Long>> replyTo) {
            this.tx = tx;
            this.byGroup = byGroup;
            this.blocks = blocks;
            this.apply = apply;
            this.replyTo = replyTo;
            this.outstanding = byGroup.size();
        }
    }

    public static Behavior<Command> create(FileState file, AllocatorSettings settings, VolumeState volume,
                                           List<ActorRef<GroupActor.Command>> groups,
                                           ActorRef<AllocatorActor.Command> allocator) {
        return create(file, settings, settings.policy(), volume, groups, allocator);
    }

    /** A file actor that starts with {@code policy} (the allocator's policy now, which may differ from the settings'). */
    public static Behavior<Command> create(FileState file, AllocatorSettings settings, AllocationPolicy policy,
                                           VolumeState volume,
                                           List<ActorRef<GroupActor.Command>> groups,
                                           ActorRef<AllocatorActor.Command> allocator) {
        return Behaviors.withStash(STASH_CAPACITY, stash -> Behaviors.setup(ctx ->
                new FileActor(ctx, stash, file, settings, policy, volume, groups, allocator)));
    }

    private FileActor(ActorContext<Command> context, StashBuffer<Command> stash, FileState file,
                      AllocatorSettings settings, AllocationPolicy policy, VolumeState volume,
                      List<ActorRef<GroupActor.Command>> groups,
                      ActorRef<AllocatorActor.Command> allocator) {
        super(context);
        this.allocator = allocator;
        this.stash = stash;
        this.file = file;
        this.settings = settings;
        this.policy = policy;
        this.volume = volume;
        this.geometry = volume.geometry();
        this.groups = groups;
        this.groupReplies = context.getSelf().narrow();
        this.effects = new FileAllocation.Groups() {
            @Override
            public void unclaim(Extent e) {
                groups.get(geometry.groupOf(e.start())).tell(new GroupActor.Unclaim(e));
            }

            @Override
            public void discardWindow(int group, long fileId) {
                groups.get(group).tell(new GroupActor.DiscardWindow(fileId));
            }
        };
    }

    @Override
    public Receive<Command> createReceive() {
        Receive<Command> active = newReceiveBuilder()
                .onMessage(GroupActor.Allocated.class, this::onGroupAnswer)
                .onMessage(PreallocationsDropped.class, this::onPreallocationsDropped)
                .onMessage(Freed.class, this::onFreed)
                .onMessage(DropPrealloc.class, this::onDropPrealloc)
                .onMessageEquals(Stop.INSTANCE, Behaviors::stopped)
                .onMessage(Shutdown.class, this::onShutdown)
                .onMessage(Command.class, this::busy, this::stashIt)
                .onMessage(GetBlocks.class, this::onGetBlocks)
                .onMessage(Truncate.class, this::onTruncate)
                .onMessage(MarkWritten.class, this::onMarkWritten)
                .onMessage(DiscardUnwritten.class, this::onDiscardUnwritten)
                .onMessage(Open.class, this::onOpen)
                .onMessage(Close.class, this::onClose)
                .onMessage(Extents.class, this::onExtents)
                .onMessage(Held.class, this::onHeld)
                .onMessage(UsePolicy.class, this::onUsePolicy)
                .build();
        return newReceiveBuilder().onMessage(Command.class, m -> guarded(active, m)).build();
    }

    /**
     * Serves one message. A fault (a bug, or a policy plugin that threw) answers that message and the
     * request in progress with {@code Failed}; a release still being prepared is aborted in its groups; the
     * actor goes on with the next request, and the log names the cause.
     */
    private Behavior<Command> guarded(Receive<Command> active, Command m) throws Exception {
        try {
            return active.receiveMessage(m);
        } catch (RuntimeException e) {
            getContext().getLog().error("file {}: {} failed; answering it with an error", file.name,
                    m.getClass().getSimpleName(), e);
            AllocationException failed = new AllocationException.Failed("file " + file.name + ": "
                    + m.getClass().getSimpleName() + " failed: " + e);
            refuse(m, failed);
            if (allocating != null && allocating != m) allocating.replyTo().tell(Reply.fail(failed));
            if (releasing != null) {
                if (!releasing.committing)
                    for (int g : releasing.byGroup.keySet()) groups.get(g).tell(new GroupActor.AbortFree(releasing.tx));
                releasing.replyTo.tell(Reply.fail(failed));
            }
            allocating = null;
            steps = null;
            releasing = null;
            return idle();
        }
    }

    /** After the last close: the state may belong to a new actor already, so nothing here reads or writes it. */
    private Behavior<Command> passivating() {
        return newReceiveBuilder()
                .onMessage(Open.class, this::onOpen)
                .onMessageEquals(Stop.INSTANCE, Behaviors::stopped)
                .onMessage(DropPrealloc.class, m -> {
                    m.replyTo().tell(new PreallocationDrop.Returned(getContext().getSelf(), List.of()));
                    return Behaviors.same();
                })
                .onMessage(Command.class, m -> {
                    refuse(m, new AllocationException.UnknownFile("file " + file.name
                            + " is not open (closed by its last writer)"));
                    return Behaviors.same();
                })
                .build();
    }

    private boolean busy(Command m) {
        return allocating != null || releasing != null;
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

    /** Answers {@code m}, if it expects an answer, with {@code e}. */
    private void refuse(Command m, AllocationException e) {
        if (m instanceof GetBlocks g) g.replyTo().tell(Reply.fail(e));
        else if (m instanceof Truncate t) t.replyTo().tell(Reply.fail(e));
        else if (m instanceof MarkWritten w) w.replyTo().tell(Reply.fail(e));
        else if (m instanceof DiscardUnwritten d) d.replyTo().tell(Reply.fail(e));
        else if (m instanceof Close c) c.replyTo().tell(Reply.fail(e));
        else if (m instanceof Open o) o.replyTo().tell(Reply.fail(e));
        else if (m instanceof Extents x) x.replyTo().tell(Reply.fail(e));
        else if (m instanceof Held h) h.replyTo().tell(Reply.fail(e));
        else if (m instanceof Shutdown s) s.replyTo().tell(Done.getInstance());
        else if (m instanceof DropPrealloc d) d.replyTo().tell(new PreallocationDrop.Returned(getContext().getSelf(), List.of()));
    }

    private Behavior<Command> onShutdown(Shutdown m) {
        AllocationException closed = new AllocationException.Closed("the allocator closed before " + file.name
                + "'s request was served");
        if (allocating != null) allocating.replyTo().tell(Reply.fail(closed));
        if (releasing != null) releasing.replyTo.tell(Reply.fail(closed));
        allocating = null;
        steps = null;
        releasing = null;
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

    // ---- getBlocks ------------------------------------------------------------------------------------

    private Behavior<Command> onGetBlocks(GetBlocks m) {
        volume.countMessage();
        FileAllocation a = new FileAllocation(file, policy, volume, settings.preallocMinWindowBlocks(),
                effects, m.logicalBlock(), m.maxBlocks(), m.create());
        allocating = m;
        steps = a;
        return step(a.start());
    }

    private Behavior<Command> step(FileAllocation.Step s) {
        if (s instanceof FileAllocation.Ask ask) {
            groups.get(ask.group()).tell(new GroupActor.Allocate(ask.request(), groupReplies));
            return this;
        }
        if (s instanceof FileAllocation.DropPreallocations) {
            if (droppedAdapter == null) droppedAdapter = getContext().messageAdapter(Long.class, PreallocationsDropped::new);
            allocator.tell(new AllocatorActor.DropPreallocations(droppedAdapter));
            return this;
        }
        GetBlocks m = allocating;
        allocating = null;
        steps = null;
        m.replyTo().tell(((FileAllocation.Answer) s).reply());
        return idle();
    }

    private Behavior<Command> onGroupAnswer(GroupActor.Allocated a) {
        volume.countMessage();
        // A group that failed or is closed allocated nothing there: the request ends with its error.
        return step(a.error() != null ? new FileAllocation.Answer(Reply.fail(a.error()))
                : steps.answer(a.group(), a.outcome()));
    }

    private Behavior<Command> onPreallocationsDropped(PreallocationsDropped m) {
        volume.countMessage();
        return step(steps.preallocationsDropped(m.blocks()));
    }

    private Behavior<Command> onDropPrealloc(DropPrealloc m) {
        volume.countMessage();
        Extent e = file.dropPrealloc();
        m.replyTo().tell(new PreallocationDrop.Returned(getContext().getSelf(), e == null ? List.of() : List.of(e)));
        return this;
    }

    // ---- blocks leaving the file ------------------------------------------------------------------------

    private Behavior<Command> onTruncate(Truncate m) {
        volume.countMessage();
        AllocationException bad = FileAllocation.checkTruncate(file, m.fromLogicalBlock());
        if (bad != null) {
            m.replyTo().tell(Reply.fail(bad));
            return this;
        }
        // ext3_truncate drops the window, since the block map is about to change; done only once the
        // groups agreed, so that a refused truncate changes nothing.
        return release(file.extentsFrom(m.fromLogicalBlock()), () -> {
            discardWindow();
            file.truncate(m.fromLogicalBlock());
        }, m.replyTo());
    }

    private Behavior<Command> onDiscardUnwritten(DiscardUnwritten m) {
        volume.countMessage();
        AllocationException bad = FileAllocation.checkRange(file, "discardUnwritten", m.logicalBlock(), m.blocks());
        if (bad != null) {
            m.replyTo().tell(Reply.fail(bad));
            return this;
        }
        // The write that allocated these blocks failed: the stream is broken, so its preallocation goes too.
        return release(file.unwrittenIn(m.logicalBlock(), m.blocks()), () -> {
            dropPrealloc();
            file.discardUnwritten(m.logicalBlock(), m.blocks());
        }, m.replyTo());
    }

    private Behavior<Command> release(List<Extent> extents, Runnable apply, ActorRef<Reply<Long>> replyTo) {
        Map<Integer, List<Extent>> byGroup = splitByGroup(geometry, extents);
        if (byGroup.isEmpty()) {
            apply.run();
            replyTo.tell(Reply.ok(0L));
            return this;
        }
        if (freedAdapter == null) {
            @SuppressWarnings("unchecked")
            Class<Reply<Done>> replyClass = (Class<Reply<Done>>) (Class<?>) Reply.class;
            freedAdapter = getContext().messageAdapter(replyClass, Freed::new);
        }
        long blocks = 0;
        for (Extent e : extents) blocks += e.blocks();
        releasing = new Release(file.nextTx(), byGroup, blocks, apply, replyTo);
        byGroup.forEach((g, list) -> groups.get(g).tell(new GroupActor.PrepareFree(releasing.tx, list, freedAdapter)));
        return this;
    }

    private Behavior<Command> onFreed(Freed f) {
        volume.countMessage();
        Release r = releasing;
        if (!f.reply().isOk() && r.error == null) r.error = f.reply().error();
        if (--r.outstanding > 0) return this;
        if (!r.committing) {
            if (r.error != null) {
                for (int g : r.byGroup.keySet()) groups.get(g).tell(new GroupActor.AbortFree(r.tx));
                releasing = null;
                r.replyTo.tell(Reply.fail(r.error));
                return idle();
            }
            // Every group holds its blocks: nothing can refuse the release any more.
            r.apply.run();
            r.committing = true;
            r.outstanding = r.byGroup.size();
            for (int g : r.byGroup.keySet()) groups.get(g).tell(new GroupActor.CommitFree(r.tx, freedAdapter));
            return this;
        }
        releasing = null;
        if (r.error != null)
            getContext().getLog().error("file {}: a group refused to commit a release it had prepared: {}", file.name,
                    r.error.getMessage());
        r.replyTo.tell(r.error == null ? Reply.ok(r.blocks) : Reply.fail(r.error));
        return idle();
    }

    // ---- the rest ------------------------------------------------------------------------------------

    private Behavior<Command> onMarkWritten(MarkWritten m) {
        volume.countMessage();
        AllocationException bad = FileAllocation.checkRange(file, "markWritten", m.logicalBlock(), m.blocks());
        m.replyTo().tell(bad != null ? Reply.fail(bad) : Reply.ok(file.markWritten(m.logicalBlock(), m.blocks())));
        return this;
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
            m.replyTo().tell(Reply.fail(FileAllocation.notOpen(file)));
            return this;
        }
        boolean last = --file.writers == 0;
        if (last) {
            discardWindow(); // ext3_release_file: the last writer's close drops the window
            volume.fileClosed(file.homeGroup);
            allocator.tell(new AllocatorActor.Passivate(file.name, getContext().getSelf(), opensSeen));
        }
        m.replyTo().tell(Reply.ok(last));
        if (!last) return this;
        // Requests that waited behind this close find the file closed, and are refused as such.
        return stash.isEmpty() ? passivating() : stash.unstashAll(passivating());
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

    private Behavior<Command> onUsePolicy(UsePolicy m) {
        policy = m.policy();
        discardWindow();
        file.windowGoalBlocks = policy.initialWindowBlocks();
        return this;
    }

    private void dropPrealloc() {
        Extent e = file.dropPrealloc();
        if (e != null) effects.unclaim(e);
    }

    private void discardWindow() {
        dropPrealloc();
        if (file.windowGroup >= 0) effects.discardWindow(file.windowGroup, file.id);
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
