package org.blockyard.runtime.alloc;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import akka.Done;
import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.Props;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;

import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.Geometry;

/**
 * The actor system's root and one owner. It spawns one {@link GroupActor} per block group and the
 * {@link FileShard}s that keep the file table at start, and any actor the allocator's users need under it
 * ({@link Spawn}). Files are opened at their shard ({@link FileShard#shardOf}), not here.
 *
 * <p>{@link DropPreallocations} has every open file give back its unused preallocation (ext4 does this
 * before answering ENOSPC); the answer comes once every group has applied the frees.
 */
public final class AllocatorActor extends AbstractBehavior<AllocatorActor.Command> {

    public sealed interface Command permits Groups, Shards, Spawn, Shutdown, UsePolicy, DropPreallocations {}

    public record Groups(ActorRef<List<ActorRef<GroupActor.Command>>> replyTo) implements Command {}

    /** The file shards, in shard order: a file's shard is {@code FileShard.shardOf(name, shards.size())}. */
    public record Shards(ActorRef<List<ActorRef<FileShard.Command>>> replyTo) implements Command {}

    /**
     * Spawns {@code behavior} as a child of this actor, the actor system's one owner: the I/O queue of a
     * {@code FileStore}, a benchmark's load clients. Answers its reference ({@link akka.actor.typed.SpawnProtocol}'s
     * shape). A name already taken gets a unique suffix.
     */
    public record Spawn<T>(Behavior<T> behavior, String name, Props props, ActorRef<ActorRef<T>> replyTo)
            implements Command {}

    /** The allocator is closing: rounds of {@link DropPreallocations} answer 0 from now on; acknowledges. */
    public record Shutdown(ActorRef<Done> replyTo) implements Command {}

    /**
     * Switch every group and open file to {@code policy} at their next message boundary (new files get it
     * from now on); answered, once all were told, with how long that took in nanoseconds.
     */
    public record UsePolicy(AllocationPolicy policy, ActorRef<Long> replyTo) implements Command {}

    /**
     * Every open file gives back its unused preallocation; answers the blocks freed, once every group
     * has applied the frees (an allocation retried after the answer sees them).
     */
    public record DropPreallocations(ActorRef<Long> replyTo) implements Command {}

    /**
     * How files are hosted: {@code shards} file shards; a file gets an actor of its own at an open once it
     * has {@code ownActorAfterBlocks} blocks or a grown window (0: never).
     */
    public record FileHosting(int shards, long ownActorAfterBlocks) {
        public FileHosting {
            if (shards < 1 || shards > 1024) throw new IllegalArgumentException("file-shards must be 1 to 1024, not " + shards);
            if (ownActorAfterBlocks < 0) throw new IllegalArgumentException("own-actor-after-blocks below 0");
        }

        /** Two shards per core, at least two; own actors for files of 4,096 blocks or more. */
        public static FileHosting defaults() {
            return new FileHosting(Math.max(2, 2 * Runtime.getRuntime().availableProcessors()), 4096);
        }
    }

    private AllocationPolicy policy;
    private final VolumeState volume;
    private final List<ActorRef<GroupActor.Command>> groups = new ArrayList<>();
    private final List<ActorRef<FileShard.Command>> shards = new ArrayList<>();
    private boolean closed;
    private long spawned;

    /**
     * @param prepare called with each new group before its actor starts (to load or pre-fill its bitmap);
     *                may be null
     */
    public static Behavior<Command> create(AllocatorSettings settings, VolumeState volume, Consumer<BlockGroup> prepare) {
        return create(settings, volume, prepare, FileHosting.defaults());
    }

    public static Behavior<Command> create(AllocatorSettings settings, VolumeState volume, Consumer<BlockGroup> prepare,
                                           FileHosting hosting) {
        return Behaviors.setup(ctx -> new AllocatorActor(ctx, settings, volume, prepare, hosting));
    }

    private AllocatorActor(ActorContext<Command> context, AllocatorSettings settings, VolumeState volume,
                           Consumer<BlockGroup> prepare, FileHosting hosting) {
        super(context);
        this.policy = settings.policy();
        this.volume = volume;
        Geometry geometry = volume.geometry();
        for (int g = 0; g < geometry.groups(); g++) {
            BlockGroup state = new BlockGroup(geometry, g, policy);
            if (prepare != null) prepare.accept(state);
            // Published here, before this actor answers anyone, not when the group actor gets round to
            // starting: a walk that read 0 free blocks would skip the group and answer "no space".
            volume.publishFree(g, state.freeBlocks());
            volume.publishRuns(g, state.largestFreeRun(), state.freeRunBuckets());
            state.attach(volume);
            groups.add(context.spawn(GroupActor.create(state, volume, settings.searchSliceWords(),
                    settings.stashCapacity()), "group-" + g));
        }
        List<ActorRef<GroupActor.Command>> fixed = List.copyOf(groups);
        for (int i = 0; i < hosting.shards(); i++)
            shards.add(context.spawn(FileShard.create(settings, policy, volume, fixed, context.getSelf(), i,
                    hosting.shards(), hosting.ownActorAfterBlocks()), "files-" + i));
    }

    @Override
    public Receive<Command> createReceive() {
        return Receives.of(this::serve);
    }

    private Behavior<Command> serve(Command m) {
        if (m instanceof DropPreallocations d) return onDropPreallocations(d);
        if (m instanceof Spawn<?> s) return onSpawn(s);
        if (m instanceof Groups g) g.replyTo().tell(List.copyOf(groups));
        else if (m instanceof Shards s) s.replyTo().tell(List.copyOf(shards));
        else if (m instanceof UsePolicy u) return onUsePolicy(u);
        else if (m instanceof Shutdown s) {
            closed = true;
            s.replyTo().tell(Done.getInstance());
        }
        return this;
    }

    private <T> Behavior<Command> onSpawn(Spawn<T> m) {
        String name = m.name();
        if (getContext().getChild(name).isPresent()) name = name + "-" + (++spawned);
        m.replyTo().tell(getContext().spawn(m.behavior(), name, m.props()));
        return this;
    }

    private Behavior<Command> onUsePolicy(UsePolicy m) {
        long t0 = System.nanoTime();
        policy = m.policy();
        for (ActorRef<GroupActor.Command> g : groups) g.tell(new GroupActor.UsePolicy(policy));
        for (ActorRef<FileShard.Command> f : shards) f.tell(new FileShard.UsePolicy(policy));
        long nanos = System.nanoTime() - t0;
        getContext().getLog().info("allocation policy switched to {}", policy.id());
        m.replyTo().tell(nanos);
        return this;
    }

    private Behavior<Command> onDropPreallocations(DropPreallocations m) {
        if (closed) { // the files are closing: nothing to give back
            m.replyTo().tell(0L);
            return this;
        }
        getContext().spawnAnonymous(PreallocationDrop.create(shards, groups, volume.geometry(), m.replyTo()));
        return this;
    }
}
