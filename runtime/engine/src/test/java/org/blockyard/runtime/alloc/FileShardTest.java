package org.blockyard.runtime.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;

import akka.actor.testkit.typed.Effect;
import akka.actor.testkit.typed.javadsl.BehaviorTestKit;
import akka.actor.testkit.typed.javadsl.TestInbox;
import akka.actor.typed.ActorRef;
import org.junit.jupiter.api.Test;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;

/**
 * One file shard with its groups as inboxes: each file's requests are served in order, files never wait for
 * each other, answers reach the file they belong to, a small file costs no actor, and a proven stream gets
 * one at its next open and hands the file back at its last close.
 */
class FileShardTest {
    private final Geometry g = Geometry.of(4096, 2 * 4096, 4096);
    private final VolumeState volume = new VolumeState(g);
    private final List<TestInbox<GroupActor.Command>> groups = List.of(TestInbox.create(), TestInbox.create());
    private final TestInbox<AllocatorActor.Command> allocator = TestInbox.create();
    private final BehaviorTestKit<GroupFileProtocol.HostMessage> shard;

    FileShardTest() {
        for (int i = 0; i < 2; i++) volume.publishFree(i, 4000);
        List<ActorRef<GroupActor.Command>> refs = new ArrayList<>();
        for (TestInbox<GroupActor.Command> t : groups) refs.add(t.getRef());
        AllocatorSettings settings = AllocatorSettings.of(g, ReservationPolicy.extended());
        shard = BehaviorTestKit.create(FileShard.create(settings, settings.policy(), volume, refs, allocator.getRef(),
                0, 1, 64).unsafeCast());
    }

    private FileHandle open(String name) {
        TestInbox<Reply<FileHandle>> opened = TestInbox.create();
        shard.run(new FileShard.Open(name, opened.getRef()));
        return opened.receiveMessage().get();
    }

    private GroupFileProtocol.Allocate nextAsk() {
        for (TestInbox<GroupActor.Command> t : groups)
            while (t.hasMessages()) {
                GroupActor.Command c = t.receiveMessage();
                if (c instanceof GroupFileProtocol.Allocate a) return a;
            }
        throw new AssertionError("no group was asked for blocks");
    }

    private static GroupFileProtocol.Allocated answer(GroupFileProtocol.Allocate ask, long start, int blocks) {
        return new GroupFileProtocol.Allocated(0, new BlockGroup.Outcome(start, blocks, new BlockGroup.Held(8, 8, 1)), null,
                ask.asker());
    }

    /** Writes 64 blocks to {@code f} (a proven stream), closes it and opens it again: answers its new actor. */
    private ActorRef<FileActor.Command> reopenedAsAStream(FileHandle f) {
        TestInbox<Reply<BlockRun>> got = TestInbox.create();
        shard.run(f.wrap(new FileActor.GetBlocks(0, 64, true, got.getRef())));
        shard.run(answer(nextAsk(), 1000, 64));
        assertEquals(64, got.receiveMessage().get().blocks());
        TestInbox<Reply<Boolean>> closed = TestInbox.create();
        shard.run(f.wrap(new FileActor.Close(closed.getRef())));
        assertTrue(closed.receiveMessage().get());
        shard.getAllEffects();
        shard.run(new FileShard.Open(f.file(), TestInbox.<Reply<FileHandle>>create().getRef()));
        Effect.SpawnedAnonymous<?> spawned = shard.expectEffectClass(Effect.SpawnedAnonymous.class);
        @SuppressWarnings("unchecked")
        ActorRef<FileActor.Command> own = (ActorRef<FileActor.Command>) spawned.ref();
        return own;
    }

    @Test
    void aFilesRequestsWaitWhileTheGroupAnswersAndAreServedInOrder() {
        FileHandle f = open("/f");
        TestInbox<Reply<BlockRun>> first = TestInbox.create(), second = TestInbox.create();
        shard.run(f.wrap(new FileActor.GetBlocks(0, 1, true, first.getRef())));
        GroupFileProtocol.Allocate ask = nextAsk();
        shard.run(f.wrap(new FileActor.GetBlocks(1, 1, true, second.getRef())));
        assertFalse(second.hasMessages(), "the second request waits for the first");
        assertFalse(groups.get(0).hasMessages(), "and is not sent to a group yet");

        shard.run(answer(ask, 100, 1));
        assertEquals(new BlockRun(0, 100, 1, true, true), first.receiveMessage().get());
        GroupFileProtocol.Allocate next = nextAsk();
        assertEquals(101, next.request().goal(), "appending: the goal is the block after the last one");
        assertEquals(ask.request().file(), next.request().file());
    }

    @Test
    void filesOfOneShardNeverWaitForEachOtherAndEachAnswerReachesItsFile() {
        FileHandle a = open("/a"), b = open("/b");
        TestInbox<Reply<BlockRun>> ra = TestInbox.create(), rb = TestInbox.create();
        shard.run(a.wrap(new FileActor.GetBlocks(0, 1, true, ra.getRef())));
        GroupFileProtocol.Allocate askA = nextAsk();
        shard.run(b.wrap(new FileActor.GetBlocks(0, 1, true, rb.getRef())));
        GroupFileProtocol.Allocate askB = nextAsk();
        assertTrue(askA.request().file() != askB.request().file(), "each file has its own id");

        shard.run(answer(askB, 200, 1)); // b's group answers first
        assertEquals(200, rb.receiveMessage().get().physicalStart());
        assertFalse(ra.hasMessages(), "a still waits for its own group");
        shard.run(answer(askA, 300, 1));
        assertEquals(300, ra.receiveMessage().get().physicalStart());
    }

    @Test
    void tooManyWaitingRequestsAreRefusedAndTheOthersKept() {
        FileHandle f = open("/f");
        TestInbox<Reply<BlockRun>> first = TestInbox.create(), waiting = TestInbox.create(), refused = TestInbox.create();
        shard.run(f.wrap(new FileActor.GetBlocks(0, 1, true, first.getRef())));
        GroupFileProtocol.Allocate ask = nextAsk();
        for (int i = 0; i < FileServer.QUEUE_CAPACITY; i++)
            shard.run(f.wrap(new FileActor.GetBlocks(1 + i, 1, true, waiting.getRef())));
        shard.run(f.wrap(new FileActor.GetBlocks(50_000, 1, true, refused.getRef())));
        assertInstanceOf(AllocationException.InvalidRequest.class, refused.receiveMessage().error());
        assertFalse(waiting.hasMessages());
        shard.run(answer(ask, 100, 1));
        assertTrue(first.receiveMessage().isOk(), "the first request is answered");
    }

    @Test
    void aSmallFileCostsNoActorAndItsLastCloseLeavesItClosedHere() {
        FileHandle f = open("/small");
        TestInbox<Reply<BlockRun>> got = TestInbox.create();
        shard.run(f.wrap(new FileActor.GetBlocks(0, 1, true, got.getRef())));
        shard.run(answer(nextAsk(), 100, 1));
        assertTrue(got.receiveMessage().isOk());
        TestInbox<Reply<Boolean>> closed = TestInbox.create();
        shard.run(f.wrap(new FileActor.Close(closed.getRef())));
        assertEquals(true, closed.receiveMessage().get());
        assertFalse(shard.getAllEffects().stream().anyMatch(e -> e instanceof Effect.SpawnedAnonymous
                || e instanceof Effect.Spawned), "no actor was spawned for the file");
        assertEquals(0, volume.openFiles(0) + volume.openFiles(1), "no group counts the file as open");

        TestInbox<Reply<List<Extent>>> extents = TestInbox.create();
        shard.run(new FileShard.FileExtents("/small", false, extents.getRef()));
        assertEquals(List.of(new Extent(100, 1)), extents.receiveMessage().get(), "a closed file keeps its map");
        TestInbox<Reply<BlockRun>> late = TestInbox.create();
        shard.run(f.wrap(new FileActor.GetBlocks(1, 1, true, late.getRef())));
        assertInstanceOf(AllocationException.UnknownFile.class, late.receiveMessage().error(),
                "a request through a handle of a closed file is refused as for a closed file");
    }

    @Test
    void aProvenStreamGetsItsOwnActorAtItsNextOpenAndComesBackAtItsLastClose() {
        FileHandle f = open("/stream");
        ActorRef<FileActor.Command> own = reopenedAsAStream(f);
        TestInbox<Reply<FileHandle>> reopened = TestInbox.create();
        TestInbox<FileActor.Command> ownInbox = shard.childInbox(own);
        assertInstanceOf(FileActor.Open.class, ownInbox.receiveMessage(), "the open goes to the file's actor");

        // A request through the old handle reaches the actor that owns the file now.
        TestInbox<Reply<BlockRun>> stale = TestInbox.create();
        shard.run(f.wrap(new FileActor.GetBlocks(64, 1, true, stale.getRef())));
        assertInstanceOf(FileActor.GetBlocks.class, ownInbox.receiveMessage());

        // Its last close hands the file back with the request that waited behind the close.
        TestInbox<Reply<BlockRun>> behind = TestInbox.create();
        FileServer server = ((FileShard.ToFile) f.wrap(new FileActor.Extents(null))).server();
        FileHandle ownHandle = new FileHandle("/stream", shard.getRef().narrow(), server, own);
        shard.run(new FileShard.Passivate(server, ownHandle, List.of(new FileActor.GetBlocks(64, 1, true, behind.getRef()))));
        assertEquals(FileActor.Stop.INSTANCE, ownInbox.receiveMessage(), "the actor is stopped");
        TestInbox<Reply<BlockRun>> throughItsHandle = TestInbox.create();
        ownHandle.tell(new FileActor.GetBlocks(64, 1, true, throughItsHandle.getRef()));
        assertFalse(ownInbox.hasMessages(), "the actor's handle no longer sends to it");
        assertInstanceOf(FileShard.ToFile.class, shard.selfInbox().receiveMessage(), "but to the shard");
        assertInstanceOf(AllocationException.UnknownFile.class, behind.receiveMessage().error(),
                "the shard serves the file again: the request after the last close finds it closed");
        shard.getAllEffects();
        shard.run(new FileShard.Open("/stream", reopened.getRef()));
        assertTrue(shard.getAllEffects().stream().anyMatch(e -> e instanceof Effect.SpawnedAnonymous),
                "and at its next open, a fresh actor again");
    }

    @Test
    void aFilesOwnActorThatFailsLeavesTheFileClosedAtTheShardAndTheNextOpenWorks() {
        FileHandle f = open("/stream");
        ActorRef<FileActor.Command> own = reopenedAsAStream(f);

        FileServer server = ((FileShard.ToFile) f.wrap(new FileActor.Extents(null))).server();
        shard.run(new FileShard.OwnActorStopped(server, own)); // it died without handing the file back
        TestInbox<Reply<BlockRun>> after = TestInbox.create();
        shard.run(f.wrap(new FileActor.GetBlocks(64, 1, true, after.getRef())));
        assertInstanceOf(AllocationException.UnknownFile.class, after.receiveMessage().error(),
                "the shard serves the file again, closed");
        TestInbox<Reply<List<Extent>>> extents = TestInbox.create();
        shard.run(new FileShard.FileExtents("/stream", false, extents.getRef()));
        assertEquals(List.of(new Extent(1000, 64)), extents.receiveMessage().get(), "its map is kept");
    }

    @Test
    void aFilesOwnActorHandsTheFileBackAtItsLastCloseAndForwardsWhatComesLater() {
        TestInbox<GroupFileProtocol.HostMessage> shardInbox = TestInbox.create();
        FileState state = new FileState(7, "/f", 0, 8);
        FileServer server = new FileServer(state, ReservationPolicy.extended(), volume, 64, null);
        List<ActorRef<GroupActor.Command>> refs = List.of(groups.get(0).getRef(), groups.get(1).getRef());
        BehaviorTestKit<GroupFileProtocol.HostMessage> own = BehaviorTestKit.create(FileActor.create(server,
                shardInbox.getRef(), allocator.getRef(), refs).unsafeCast());
        TestInbox<Reply<FileHandle>> opened = TestInbox.create();
        own.run(new FileActor.Open(opened.getRef()));
        assertTrue(opened.receiveMessage().isOk());

        TestInbox<Reply<BlockRun>> first = TestInbox.create(), behind = TestInbox.create(), later = TestInbox.create();
        TestInbox<Reply<Boolean>> closed = TestInbox.create();
        own.run(new FileActor.GetBlocks(0, 1, true, first.getRef()));
        GroupFileProtocol.Allocate ask = nextAsk();
        own.run(new FileActor.Close(closed.getRef())); // waits behind the allocation
        own.run(new FileActor.GetBlocks(1, 1, true, behind.getRef())); // waits behind the close
        own.run(answer(ask, 100, 1));
        assertTrue(first.receiveMessage().isOk());
        assertEquals(true, closed.receiveMessage().get());
        FileShard.Passivate p = (FileShard.Passivate) shardInbox.receiveMessage();
        assertEquals(1, p.waiting().size(), "the request behind the close goes to the shard, not served here");
        assertFalse(behind.hasMessages());

        own.run(new FileActor.GetBlocks(2, 1, true, later.getRef()));
        FileShard.ToFile forwarded = (FileShard.ToFile) shardInbox.receiveMessage();
        assertInstanceOf(FileActor.GetBlocks.class, forwarded.command(), "later requests follow, in order");
        own.run(FileActor.Stop.INSTANCE);
        assertFalse(own.isAlive());
    }
}
