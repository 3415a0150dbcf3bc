package org.blockyard.runtime.alloc;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;

/**
 * The actor system's root and one owner. As the allocator's root actor: it spawns one {@link GroupActor} per block group at start, and a
 * {@link FileActor} for a file while the file is open, choosing the file's home group with the policy on
 * its first open. It keeps every file's {@link FileState}: when the last writer closes, the file's actor
 * asks to be passivated and stops, so only open files cost an actor (as an inode cache keeps only the
 * inodes in use); the next open spawns a fresh actor over the same state. Everything else goes straight
 * to the group and file actors, whose references it hands out.
 *
 * <p>Passivation is safe against a racing open: the file actor says how many opens it has seen, and the
 * allocator stops it only if it has forwarded no other open since. A new actor for a file starts only
 * after the old one has stopped: opens that arrive meanwhile wait here, so two actors never own one
 * {@link FileState}.
 *
 * <p>{@link DropPreallocations} has every live file actor give back its unused preallocation (ext4 does
 * this before answering ENOSPC); the answer comes once every group has applied the frees.
 */
public final class AllocatorActor extends AbstractBehavior<AllocatorActor.Command> {

    public interface Command {}

    public record Open(String file, ActorRef<Reply<ActorRef<FileActor.Command>>> replyTo) implements Command {}

    /** The actor of an open file, else an UnknownFile error (never opened, or closed). */
    public record Lookup(String file, ActorRef<Reply<ActorRef<FileActor.Command>>> replyTo) implements Command {}

    /** A file's extents (mapped, or with {@code held} also its preallocation), open or closed. */
    public record FileExtents(String file, boolean held, ActorRef<Reply<List<Extent>>> replyTo) implements Command {}

    public record Groups(ActorRef<List<ActorRef<GroupActor.Command>>> replyTo) implements Command {}

    /**
     * Spawns {@code behavior} as a child of this actor, the actor system's one owner: the I/O queue of a
     * {@code FileStore}, a benchmark's load clients. Answers its reference ({@link akka.actor.typed.SpawnProtocol}'s
     * shape). A name already taken gets a unique suffix.
     */
    public record Spawn<T>(Behavior<T> behavior, String name, ActorRef<ActorRef<T>> replyTo) implements Command {}

    /**
     * The allocator is closing: opens are refused with {@code Closed} from now on; answers the file actors
     * alive now, which the caller shuts down in turn.
     */
    public record Shutdown(ActorRef<List<ActorRef<FileActor.Command>>> replyTo) implements Command {}

    /**
     * Switch every group and file actor to {@code policy} at their next message boundary (new files get it
     * from now on); answered, once all were told, with how long that took in nanoseconds.
     */
    public record UsePolicy(AllocationPolicy policy, ActorRef<Long> replyTo) implements Command {}

    /**
     * Every open file gives back its unused preallocation; answers the blocks freed, once every group
     * has applied the frees (an allocation retried after the answer sees them).
     */
    public record DropPreallocations(ActorRef<Long> replyTo) implements Command {}

    /** A file actor stopped: passivated, or failed (a bug); in the second case its file counts as closed. */
    record FileStopped(String file, ActorRef<FileActor.Command> actor) implements Command {}

    /** From a file actor whose last writer closed: stop me unless an open is on its way. */
    record Passivate(String file, ActorRef<FileActor.Command> actor, long opensSeen) implements Command {}

    private static final class Entry {
        final FileState state;
        ActorRef<FileActor.Command> actor; // null while the file is closed
        ActorRef<FileActor.Command> stopping; // a passivated actor not yet stopped; opens wait for it
        final List<Open> waitingOpens = new ArrayList<>();
        long opensForwarded;

        Entry(FileState state) {
            this.state = state;
        }
    }

    private final AllocatorSettings settings;
    private AllocationPolicy policy;
    private final VolumeState volume;
    private final List<ActorRef<GroupActor.Command>> groups = new ArrayList<>();
    private final Map<String, Entry> files = new HashMap<>();
    private long nextFileId = 1;
    private boolean closed;
    private long spawned;

    /**
     * @param prepare called with each new group before its actor starts (to load or pre-fill its bitmap);
     *                may be null
     */
    public static Behavior<Command> create(AllocatorSettings settings, VolumeState volume, Consumer<BlockGroup> prepare) {
        return Behaviors.setup(ctx -> new AllocatorActor(ctx, settings, volume, prepare));
    }

    private AllocatorActor(ActorContext<Command> context, AllocatorSettings settings, VolumeState volume,
                           Consumer<BlockGroup> prepare) {
        super(context);
        this.settings = settings;
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
    }

    @Override
    public Receive<Command> createReceive() {
        return newReceiveBuilder()
                .onMessage(Open.class, this::onOpen)
                .onMessage(Lookup.class, this::onLookup)
                .onMessage(FileExtents.class, this::onFileExtents)
                .onMessage(Passivate.class, this::onPassivate)
                .onMessage(FileStopped.class, this::onFileStopped)
                .onMessage(DropPreallocations.class, this::onDropPreallocations)
                .onMessage(Groups.class, m -> { m.replyTo().tell(List.copyOf(groups)); return this; })
                .onMessage(Shutdown.class, this::onShutdown)
                .onMessage(UsePolicy.class, this::onUsePolicy)
                .onMessage(Spawn.class, this::onSpawn)
                .build();
    }

    private <T> Behavior<Command> onSpawn(Spawn<T> m) {
        String name = m.name();
        if (getContext().getChild(name).isPresent()) name = name + "-" + (++spawned);
        m.replyTo().tell(getContext().spawn(m.behavior(), name));
        return this;
    }

    private Behavior<Command> onUsePolicy(UsePolicy m) {
        long t0 = System.nanoTime();
        policy = m.policy();
        for (ActorRef<GroupActor.Command> g : groups) g.tell(new GroupActor.UsePolicy(policy));
        for (Entry e : files.values()) {
            if (e.actor != null) e.actor.tell(new FileActor.UsePolicy(policy));
            else e.state.windowGoalBlocks = policy.initialWindowBlocks(); // closed: no actor owns it now
        }
        long nanos = System.nanoTime() - t0;
        getContext().getLog().info("allocation policy switched to {}", policy.id());
        m.replyTo().tell(nanos);
        return this;
    }

    private Behavior<Command> onShutdown(Shutdown m) {
        closed = true;
        List<ActorRef<FileActor.Command>> live = new ArrayList<>();
        for (Entry e : files.values()) if (e.actor != null) live.add(e.actor);
        m.replyTo().tell(live);
        return this;
    }

    private Behavior<Command> onOpen(Open m) {
        if (closed) {
            m.replyTo().tell(Reply.fail(new AllocationException.Closed("the allocator is closed")));
            return this;
        }
        if (m.file() == null || m.file().isBlank()) {
            m.replyTo().tell(Reply.fail(new AllocationException.InvalidRequest("a file needs a non-empty name")));
            return this;
        }
        Entry e = files.get(m.file());
        if (e != null && e.stopping != null) {
            e.waitingOpens.add(m);
            return this;
        }
        if (e != null && e.actor != null) {
            e.opensForwarded++;
            e.actor.tell(new FileActor.Open(m.replyTo()));
            return this;
        }
        if (e == null) {
            int home;
            try {
                home = policy.homeGroup(m.file(), volume);
            } catch (RuntimeException bug) {
                getContext().getLog().error("policy {} failed to choose a home group for {}; using group 0",
                        policy.id(), m.file(), bug);
                home = 0;
            }
            if (home < 0 || home >= groups.size()) home = 0;
            e = new Entry(settings.files().create(nextFileId++, m.file(), home, policy.initialWindowBlocks()));
            files.put(m.file(), e);
        }
        e.state.writers = 1;
        e.opensForwarded = 0;
        volume.fileOpened(e.state.homeGroup);
        e.actor = getContext().spawnAnonymous(FileActor.create(e.state, settings, policy, volume, groups, getContext().getSelf()));
        getContext().watchWith(e.actor, new FileStopped(m.file(), e.actor));
        m.replyTo().tell(Reply.ok(e.actor));
        return this;
    }

    private Behavior<Command> onPassivate(Passivate m) {
        Entry e = files.get(m.file());
        if (e != null && e.actor != null && e.actor.equals(m.actor()) && e.opensForwarded == m.opensSeen()) {
            e.actor = null;
            e.stopping = m.actor();
            m.actor().tell(FileActor.Stop.INSTANCE);
        }
        return this;
    }

    private Behavior<Command> onFileStopped(FileStopped m) {
        Entry e = files.get(m.file());
        if (e != null && m.actor().equals(e.stopping)) {
            e.stopping = null;
            List<Open> waiting = new ArrayList<>(e.waitingOpens);
            e.waitingOpens.clear();
            for (Open o : waiting) onOpen(o);
            return this;
        }
        if (e != null && m.actor().equals(e.actor)) {
            // Not passivated: the actor failed. Its file is closed so that the next open starts afresh.
            getContext().getLog().error("file actor of {} stopped unexpectedly; the file is closed", m.file());
            if (e.state.writers > 0) volume.fileClosed(e.state.homeGroup);
            e.state.writers = 0;
            e.actor = null;
            Extent pre = e.state.dropPrealloc();
            if (pre != null) groups.get(volume.geometry().groupOf(pre.start())).tell(new GroupActor.Unclaim(pre));
            if (e.state.windowGroup >= 0) groups.get(e.state.windowGroup).tell(new GroupActor.DiscardWindow(e.state.id));
            e.state.windowDiscarded();
        }
        return this;
    }

    private Behavior<Command> onDropPreallocations(DropPreallocations m) {
        if (closed) { // the file actors are closing: nothing to give back
            m.replyTo().tell(0L);
            return this;
        }
        List<ActorRef<FileActor.Command>> live = new ArrayList<>();
        for (Entry e : files.values()) if (e.actor != null) live.add(e.actor);
        getContext().spawnAnonymous(PreallocationDrop.create(live, groups, volume.geometry(), m.replyTo()));
        return this;
    }

    private AllocationException unknown(String file, Entry e) {
        return new AllocationException.UnknownFile(e == null ? "file " + file + " was never opened"
                : "file " + file + " is not open (closed by its last writer)");
    }

    private Behavior<Command> onLookup(Lookup m) {
        Entry e = files.get(m.file());
        m.replyTo().tell(e != null && e.actor != null ? Reply.ok(e.actor) : Reply.fail(unknown(m.file(), e)));
        return this;
    }

    private Behavior<Command> onFileExtents(FileExtents m) {
        Entry e = files.get(m.file());
        if (e == null) {
            m.replyTo().tell(Reply.fail(unknown(m.file(), null)));
        } else if (e.actor != null) {
            e.actor.tell(m.held() ? new FileActor.Held(m.replyTo()) : new FileActor.Extents(m.replyTo()));
        } else {
            m.replyTo().tell(Reply.ok(e.state.extents())); // a closed file holds no preallocation
        }
        return this;
    }
}
