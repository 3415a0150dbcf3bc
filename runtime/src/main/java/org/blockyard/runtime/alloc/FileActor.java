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

    public record Close(ActorRef<Reply<Done>> replyTo) implements Command {}

    public record Extents(ActorRef<Reply<List<Extent>>> replyTo) implements Command {}

    private record GroupAnswer(GroupActor.Allocated answer) implements Command {}

    private record Freed(Reply<Done> reply) implements Command {}

    private final FileState file;
    private final AllocationPolicy policy;
    private final VolumeState volume;
    private final Geometry geometry;
    private final List<ActorRef<GroupActor.Command>> groups;
    private final StashBuffer<Command> stash;
    private final ActorRef<GroupActor.Allocated> groupAdapter;
    private final ActorRef<Reply<Done>> freedAdapter;

    // The request in progress; null when idle.
    private GetBlocks allocating;
    private GroupWalk walk;
    private int count;
    private long goal;
    private Truncate truncating;
    private int freesOutstanding;
    private long freedBlocks;
    private AllocationException freeError;

    public static Behavior<Command> create(FileState file, AllocationPolicy policy, VolumeState volume,
                                           List<ActorRef<GroupActor.Command>> groups) {
        return Behaviors.withStash(10_000, stash -> Behaviors.setup(ctx ->
                new FileActor(ctx, stash, file, policy, volume, groups)));
    }

    private FileActor(ActorContext<Command> context, StashBuffer<Command> stash, FileState file,
                      AllocationPolicy policy, VolumeState volume, List<ActorRef<GroupActor.Command>> groups) {
        super(context);
        this.stash = stash;
        this.file = file;
        this.policy = policy;
        this.volume = volume;
        this.geometry = volume.geometry();
        this.groups = groups;
        this.groupAdapter = context.messageAdapter(GroupActor.Allocated.class, GroupAnswer::new);
        @SuppressWarnings("unchecked")
        Class<Reply<Done>> replyClass = (Class<Reply<Done>>) (Class<?>) Reply.class;
        this.freedAdapter = context.messageAdapter(replyClass, Freed::new);
    }

    @Override
    public Receive<Command> createReceive() {
        return newReceiveBuilder()
                .onMessage(GroupAnswer.class, this::onGroupAnswer)
                .onMessage(Freed.class, this::onFreed)
                .onMessage(Command.class, this::busy, this::stashIt)
                .onMessage(GetBlocks.class, this::onGetBlocks)
                .onMessage(Truncate.class, this::onTruncate)
                .onMessage(Open.class, this::onOpen)
                .onMessage(Close.class, this::onClose)
                .onMessage(Extents.class, this::onExtents)
                .build();
    }

    private boolean busy(Command m) {
        return allocating != null || truncating != null;
    }

    private Behavior<Command> stashIt(Command m) {
        stash.stash(m);
        return this;
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
        allocating = m;
        count = file.holeLength(m.logicalBlock(), m.maxBlocks());
        goal = policy.goal(m.logicalBlock(), file.lastLogical, file.lastPhysical,
                file.precedingPhysical(m.logicalBlock()), file.homeGroup, volume);
        if (goal < 0 || goal >= geometry.totalBlocks()) goal = geometry.groupStart(file.homeGroup);
        walk = new GroupWalk(policy, volume, geometry.groupOf(goal), file.windowGoalBlocks);
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
        boolean here = file.windowGroup == g;
        BlockGroup.Request r = new BlockGroup.Request(file.id, walk.isGoalGroup(g) ? goal : -1, count,
                file.windowGoalBlocks, here ? 0 : file.windowBlocks, here ? 0 : file.windowHit, walk.reserve());
        groups.get(g).tell(new GroupActor.Allocate(r, groupAdapter));
        return this;
    }

    private Behavior<Command> onGroupAnswer(GroupAnswer a) {
        volume.countMessage();
        int g = a.answer().group();
        BlockGroup.Outcome o = a.answer().outcome();
        if (walk.reserve()) {
            int stale = file.windowFrom(g, o);
            if (stale >= 0) groups.get(stale).tell(new GroupActor.DiscardWindow(file.id));
        }
        if (!o.allocated()) return askNextGroup();
        GetBlocks m = allocating;
        allocating = null;
        walk = null;
        file.map(m.logicalBlock(), o.start(), o.blocks());
        m.replyTo().tell(Reply.ok(new BlockRun(m.logicalBlock(), o.start(), o.blocks(), true)));
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
        if (--file.writers == 0) {
            discardWindow(); // ext3_release_file: the last writer's close drops the window
            volume.fileClosed(file.homeGroup);
        }
        m.replyTo().tell(Reply.ok(Done.getInstance()));
        return this;
    }

    private Behavior<Command> onExtents(Extents m) {
        volume.countMessage();
        m.replyTo().tell(Reply.ok(file.extents()));
        return this;
    }

    private void discardWindow() {
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
