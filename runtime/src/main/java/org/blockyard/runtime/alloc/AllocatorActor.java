package org.blockyard.runtime.alloc;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.SupervisorStrategy;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.Geometry;

/**
 * The allocator's root actor: it spawns one {@link GroupActor} per block group at start, and one
 * {@link FileActor} per file on its first open (choosing the file's home group with the policy); later
 * opens of the same file go to that file's actor. Everything else goes straight to the group and file
 * actors, whose references it hands out.
 */
public final class AllocatorActor extends AbstractBehavior<AllocatorActor.Command> {

    public interface Command {}

    public record Open(String file, ActorRef<Reply<ActorRef<FileActor.Command>>> replyTo) implements Command {}

    /** The file's actor if it was ever opened (open or closed), else an UnknownFile error. */
    public record Lookup(String file, ActorRef<Reply<ActorRef<FileActor.Command>>> replyTo) implements Command {}

    public record Groups(ActorRef<List<ActorRef<GroupActor.Command>>> replyTo) implements Command {}

    /** All files ever opened, with their ids. */
    public record Files(ActorRef<Map<String, ActorRef<FileActor.Command>>> replyTo) implements Command {}

    private final AllocationPolicy policy;
    private final VolumeState volume;
    private final List<ActorRef<GroupActor.Command>> groups = new ArrayList<>();
    private final Map<String, ActorRef<FileActor.Command>> files = new HashMap<>();
    private long nextFileId = 1;

    public static Behavior<Command> create(AllocationPolicy policy, VolumeState volume, int sliceWords,
                                           int stashCapacity) {
        return Behaviors.setup(ctx -> new AllocatorActor(ctx, policy, volume, sliceWords, stashCapacity));
    }

    private AllocatorActor(ActorContext<Command> context, AllocationPolicy policy, VolumeState volume,
                           int sliceWords, int stashCapacity) {
        super(context);
        this.policy = policy;
        this.volume = volume;
        Geometry geometry = volume.geometry();
        for (int g = 0; g < geometry.groups(); g++) {
            groups.add(context.spawn(GroupActor.create(geometry, g, policy, volume, sliceWords, stashCapacity),
                    "group-" + g));
        }
    }

    @Override
    public Receive<Command> createReceive() {
        return newReceiveBuilder()
                .onMessage(Open.class, this::onOpen)
                .onMessage(Lookup.class, this::onLookup)
                .onMessage(Groups.class, m -> { m.replyTo().tell(List.copyOf(groups)); return this; })
                .onMessage(Files.class, m -> { m.replyTo().tell(Map.copyOf(files)); return this; })
                .build();
    }

    private Behavior<Command> onOpen(Open m) {
        if (m.file() == null || m.file().isBlank()) {
            m.replyTo().tell(Reply.fail(new AllocationException.InvalidRequest("a file needs a non-empty name")));
            return this;
        }
        ActorRef<FileActor.Command> ref = files.get(m.file());
        if (ref != null) {
            ref.tell(new FileActor.Open(m.replyTo()));
            return this;
        }
        int home = policy.homeGroup(m.file(), volume);
        if (home < 0 || home >= groups.size()) home = 0;
        FileState state = new FileState(nextFileId++, m.file(), home, policy.initialWindowBlocks());
        state.writers = 1;
        volume.fileOpened(home);
        ref = getContext().spawn(Behaviors.supervise(FileActor.create(state, policy, volume, groups))
                .onFailure(SupervisorStrategy.stop()), "file-" + state.id);
        files.put(m.file(), ref);
        m.replyTo().tell(Reply.ok(ref));
        return this;
    }

    private Behavior<Command> onLookup(Lookup m) {
        ActorRef<FileActor.Command> ref = files.get(m.file());
        m.replyTo().tell(ref != null ? Reply.ok(ref)
                : Reply.fail(new AllocationException.UnknownFile("file " + m.file() + " was never opened")));
        return this;
    }
}
