package org.blockyard.runtime.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.util.List;

import akka.actor.testkit.typed.Effect;
import akka.actor.testkit.typed.javadsl.BehaviorTestKit;
import akka.actor.testkit.typed.javadsl.TestInbox;
import akka.actor.typed.ActorRef;
import org.junit.jupiter.api.Test;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Geometry;

/** A file actor that was asked to stop never touches its file again, and its successor waits for it to stop. */
class PassivationTest {
    private final Geometry g = Geometry.of(4096, 4096, 4096);

    @Test
    void aLateGetBlocksToAPassivatingActorIsRefusedAndTheNewOwnersStateIsUntouched() {
        VolumeState volume = new VolumeState(g);
        volume.publishFree(0, 4000);
        TestInbox<GroupActor.Command> group = TestInbox.create();
        TestInbox<AllocatorActor.Command> allocator = TestInbox.create();
        FileState state = new FileState(7, "/f", 0, 8);
        state.writers = 1;
        volume.fileOpened(0);
        BehaviorTestKit<FileActor.Command> old = BehaviorTestKit.create(FileActor.create(state,
                AllocatorSettings.of(g, ReservationPolicy.extended()), volume, List.of(group.getRef()), allocator.getRef()));

        TestInbox<Reply<Boolean>> closed = TestInbox.create();
        old.run(new FileActor.Close(closed.getRef()));
        assertEquals(true, closed.receiveMessage().get());
        assertInstanceOf(AllocatorActor.Passivate.class, allocator.receiveMessage());
        group.getAllReceived();

        state.writers = 1; // a new actor now owns the file: reopened after the old one was stopped
        TestInbox<Reply<BlockRun>> late = TestInbox.create();
        old.run(new FileActor.GetBlocks(0, 16, true, late.getRef()));
        assertInstanceOf(AllocationException.UnknownFile.class, late.receiveMessage().error());
        assertFalse(group.hasMessages(), "the old actor asked no group for blocks");
        assertEquals(0, state.mappedBlocks());
        assertEquals(1, state.writers);
        TestInbox<Reply<Long>> truncated = TestInbox.create();
        old.run(new FileActor.Truncate(0, truncated.getRef()));
        assertInstanceOf(AllocationException.UnknownFile.class, truncated.receiveMessage().error());
    }

    @Test
    void anOpenWhileTheOldActorStopsWaitsForItToStop() {
        BehaviorTestKit<AllocatorActor.Command> root = BehaviorTestKit.create(AllocatorActor.create(
                AllocatorSettings.of(g, ReservationPolicy.extended()), new VolumeState(g), null));
        TestInbox<Reply<ActorRef<FileActor.Command>>> first = TestInbox.create();
        root.run(new AllocatorActor.Open("/f", first.getRef()));
        ActorRef<FileActor.Command> old = first.receiveMessage().get();
        root.getAllEffects();

        root.run(new AllocatorActor.Passivate("/f", old, 0));
        assertEquals(FileActor.Stop.INSTANCE, root.childInbox(old).receiveMessage());

        TestInbox<Reply<ActorRef<FileActor.Command>>> second = TestInbox.create();
        root.run(new AllocatorActor.Open("/f", second.getRef()));
        assertFalse(second.hasMessages(), "no new actor while the old one has not stopped");
        assertFalse(root.getAllEffects().stream().anyMatch(e -> e instanceof Effect.SpawnedAnonymous),
                "nothing was spawned");

        root.run(new AllocatorActor.FileStopped("/f", old));
        ActorRef<FileActor.Command> fresh = second.receiveMessage().get();
        assertNotEquals(old, fresh, "the open is served by a new actor once the old one stopped");
    }
}
