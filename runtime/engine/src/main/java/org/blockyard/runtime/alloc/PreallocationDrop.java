package org.blockyard.runtime.alloc;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import akka.Done;
import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;

import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;

/**
 * One "give back every preallocation" round (ext4's discard of inode preallocations before ENOSPC), as a
 * short-lived child of the {@link AllocatorActor}: it asks every file shard for the unused preallocations
 * of its open files (a shard names the files' own actors, which answer for themselves), frees what they
 * gave up in the groups, and answers the number of blocks freed only once every group has applied its
 * frees, so that an allocation retried after the answer sees them. An actor that stops before answering
 * counts as having given back nothing.
 */
final class PreallocationDrop extends AbstractBehavior<PreallocationDrop.Command> {

    sealed interface Command permits Returned, FileGone, Freed {}

    /**
     * An answer to the round: the preallocations {@code from} gave up, and the actors that answer for
     * themselves too ({@code alsoFrom}: a shard's files that have actors of their own).
     */
    record Returned(ActorRef<?> from, List<Extent> extents, List<ActorRef<?>> alsoFrom) implements Command {
        Returned(ActorRef<?> from, List<Extent> extents) {
            this(from, extents, List.of());
        }
    }

    private record FileGone(ActorRef<?> file) implements Command {}

    private record Freed(Reply<Done> reply) implements Command {}

    private final Geometry geometry;
    private final List<ActorRef<GroupActor.Command>> groups;
    private final ActorRef<Long> replyTo;
    private final Set<ActorRef<?>> pending = new HashSet<>();
    private final Set<ActorRef<?>> early = new HashSet<>(); // answered before their shard named them
    private final List<Extent> returned = new ArrayList<>();
    private Map<Integer, List<Extent>> byGroup;
    private int freesOutstanding;
    private long freedBlocks;

    static Behavior<Command> create(List<ActorRef<FileShard.Command>> shards, List<ActorRef<GroupActor.Command>> groups,
                                    Geometry geometry, ActorRef<Long> replyTo) {
        return Behaviors.setup(ctx -> new PreallocationDrop(ctx, shards, groups, geometry, replyTo).begin());
    }

    private PreallocationDrop(ActorContext<Command> context, List<ActorRef<FileShard.Command>> shards,
                              List<ActorRef<GroupActor.Command>> groups, Geometry geometry, ActorRef<Long> replyTo) {
        super(context);
        this.groups = groups;
        this.geometry = geometry;
        this.replyTo = replyTo;
        ActorRef<Returned> self = context.getSelf().narrow();
        for (ActorRef<FileShard.Command> f : shards) {
            if (!pending.add(f)) continue;
            context.watchWith(f, new FileGone(f));
            f.tell(new FileShard.DropPrealloc(self));
        }
    }

    private Behavior<Command> begin() {
        return pending.isEmpty() ? freeReturned() : this;
    }

    @Override
    public Receive<Command> createReceive() {
        return newReceiveBuilder()
                .onMessage(Returned.class, this::onReturned)
                .onMessage(FileGone.class, this::onFileGone)
                .onMessage(Freed.class, this::onFreed)
                .build();
    }

    private Behavior<Command> onReturned(Returned m) {
        if (byGroup != null) { // too late for this round: free it all the same
            for (Extent e : m.extents()) groups.get(geometry.groupOf(e.start())).tell(new GroupFileProtocol.Unclaim(e));
            return this;
        }
        returned.addAll(m.extents());
        if (pending.remove(m.from())) getContext().unwatch(m.from());
        else early.add(m.from());
        for (ActorRef<?> a : m.alsoFrom()) {
            if (early.remove(a) || !pending.add(a)) continue;
            getContext().watchWith(a, new FileGone(a));
        }
        return pending.isEmpty() ? freeReturned() : this;
    }

    private Behavior<Command> onFileGone(FileGone m) {
        if (byGroup != null || !pending.remove(m.file())) return this;
        return pending.isEmpty() ? freeReturned() : this;
    }

    private Behavior<Command> freeReturned() {
        byGroup = ExtentChecks.splitByGroup(geometry, returned);
        if (byGroup.isEmpty()) {
            replyTo.tell(0L);
            return Behaviors.stopped();
        }
        @SuppressWarnings("unchecked")
        Class<Reply<Done>> replyClass = (Class<Reply<Done>>) (Class<?>) Reply.class;
        ActorRef<Reply<Done>> adapter = getContext().messageAdapter(replyClass, Freed::new);
        freesOutstanding = byGroup.size();
        byGroup.forEach((g, list) -> groups.get(g).tell(new GroupActor.Free(list, adapter)));
        return this;
    }

    private Behavior<Command> onFreed(Freed m) {
        if (!m.reply().isOk())
            getContext().getLog().error("a returned preallocation was refused by its group: {}", m.reply().error().getMessage());
        if (--freesOutstanding > 0) return this;
        for (Extent e : returned) freedBlocks += e.blocks();
        replyTo.tell(freedBlocks);
        return Behaviors.stopped();
    }
}
