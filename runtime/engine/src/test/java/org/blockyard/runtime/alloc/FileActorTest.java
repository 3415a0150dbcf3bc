package org.blockyard.runtime.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;

import akka.actor.testkit.typed.javadsl.BehaviorTestKit;
import akka.actor.testkit.typed.javadsl.TestInbox;
import akka.actor.typed.ActorRef;
import org.junit.jupiter.api.Test;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Geometry;

/** One file actor with its groups as inboxes: the order it serves a file's requests in. */
class FileActorTest {
    private final Geometry g = Geometry.of(4096, 2 * 4096, 4096);
    private final VolumeState volume = new VolumeState(g);
    private final List<TestInbox<GroupActor.Command>> groups = List.of(TestInbox.create(), TestInbox.create());
    private final TestInbox<AllocatorActor.Command> allocator = TestInbox.create();
    private final FileState state = new FileState(7, "/f", 0, 8);
    private final BehaviorTestKit<FileActor.Command> file;

    FileActorTest() {
        for (int i = 0; i < 2; i++) volume.publishFree(i, 4000);
        List<ActorRef<GroupActor.Command>> refs = new ArrayList<>();
        for (TestInbox<GroupActor.Command> t : groups) refs.add(t.getRef());
        state.writers = 1;
        volume.fileOpened(0); // as the allocator actor does when it spawns the file's actor
        file = BehaviorTestKit.create(FileActor.create(state, AllocatorSettings.of(g, ReservationPolicy.extended()),
                volume, refs, allocator.getRef()));
    }

    @Test
    void requestsWaitWhileTheGroupAnswersAndAreServedInOrder() {
        TestInbox<Reply<BlockRun>> first = TestInbox.create(), second = TestInbox.create();
        file.run(new FileActor.GetBlocks(0, 1, true, first.getRef()));
        GroupActor.Allocate ask = (GroupActor.Allocate) groups.get(0).receiveMessage();
        file.run(new FileActor.GetBlocks(1, 1, true, second.getRef()));
        assertFalse(second.hasMessages(), "the second request waits for the first");
        assertFalse(groups.get(0).hasMessages(), "and is not sent to a group yet");

        file.run(new GroupActor.Allocated(0, new BlockGroup.Outcome(100, 1, 8, 8, 1)));
        assertEquals(new BlockRun(0, 100, 1, true, true), first.receiveMessage().get());
        GroupActor.Allocate next = (GroupActor.Allocate) groups.get(0).receiveMessage();
        assertEquals(101, next.request().goal(), "appending: the goal is the block after the last one");
        assertEquals(ask.request().file(), next.request().file());
    }

    @Test
    void tooManyWaitingRequestsAreRefusedAndTheOthersKept() {
        TestInbox<Reply<BlockRun>> first = TestInbox.create(), waiting = TestInbox.create(), refused = TestInbox.create();
        file.run(new FileActor.GetBlocks(0, 1, true, first.getRef()));
        for (int i = 0; i < FileActor.STASH_CAPACITY; i++)
            file.run(new FileActor.GetBlocks(1 + i, 1, true, waiting.getRef()));
        file.run(new FileActor.GetBlocks(50_000, 1, true, refused.getRef()));
        assertInstanceOf(AllocationException.InvalidRequest.class, refused.receiveMessage().error());
        assertFalse(waiting.hasMessages());
        file.run(new GroupActor.Allocated(0, new BlockGroup.Outcome(100, 1, 8, 8, 1)));
        assertTrue(first.receiveMessage().isOk(), "the first request is answered");
    }

    @Test
    void theLastCloseAsksToBePassivatedWithTheOpensItSaw() {
        TestInbox<Reply<ActorRef<FileActor.Command>>> opened = TestInbox.create();
        TestInbox<Reply<Boolean>> closed = TestInbox.create();
        file.run(new FileActor.Open(opened.getRef()));
        file.run(new FileActor.Close(closed.getRef()));
        assertEquals(false, closed.receiveMessage().get(), "one writer is left");
        assertFalse(allocator.hasMessages());
        file.run(new FileActor.Close(closed.getRef()));
        assertEquals(true, closed.receiveMessage().get());
        AllocatorActor.Passivate p = (AllocatorActor.Passivate) allocator.receiveMessage();
        assertEquals(1, p.opensSeen());
        assertEquals(0, state.writers);
        assertEquals(0, volume.openFiles(0), "the home group no longer counts the file as open");
    }
}
