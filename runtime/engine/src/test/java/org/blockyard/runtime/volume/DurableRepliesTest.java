package org.blockyard.runtime.volume;

import static org.blockyard.runtime.volume.Volumes.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.actor.typed.ActorRef;
import akka.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.runtime.alloc.FileActor;
import org.blockyard.runtime.alloc.Reply;

/** An actor client's acknowledgement: replies reach it once durable, in the order they came. */
class DurableRepliesTest {
    @TempDir
    Path dir;

    /** Acknowledgements for {@code client} whose journal hands out a new promise per reply, kept in {@code made}. */
    private static ActorRef<Reply<?>> withPromises(ActorTestKit kit, List<CompletableFuture<Void>> made,
                                                   TestProbe<Reply<?>> client) {
        return kit.spawn(DurableReplies.create(() -> {
            CompletableFuture<Void> f = new CompletableFuture<>();
            made.add(f);
            return f;
        }, client.getRef())).narrow();
    }

    @Test
    void repliesAreHandedOnOnlyOnceDurableAndInTheOrderTheyArrived() {
        ActorTestKit kit = ActorTestKit.create();
        try {
            List<CompletableFuture<Void>> made = new CopyOnWriteArrayList<>();
            TestProbe<Reply<?>> client = kit.createTestProbe();
            ActorRef<Reply<?>> replies = withPromises(kit, made, client);
            replies.tell(Reply.ok(1));
            replies.tell(Reply.ok(2));
            replies.tell(Reply.fail(new AllocationException.InvalidRequest("refused, nothing changed")));
            client.awaitAssert(() -> {
                assertEquals(2, made.size()); // a refusal asks the journal nothing
                return null;
            });
            made.get(1).complete(null);
            client.expectNoMessage(Duration.ofMillis(200)); // the second is durable, the first not yet
            made.get(0).complete(null);
            assertEquals(1, client.receiveMessage().value());
            assertEquals(2, client.receiveMessage().value());
            assertInstanceOf(AllocationException.InvalidRequest.class, client.receiveMessage().error());
            replies.tell(Reply.ok(3));
            client.awaitAssert(() -> {
                assertEquals(3, made.size());
                return null;
            });
            made.get(2).completeExceptionally(new VolumeException.JournalFailed("disk gone", null));
            assertInstanceOf(AllocationException.Failed.class, client.receiveMessage().error(),
                    "a change the journal could not make durable is not acknowledged");
        } finally {
            kit.shutdownTestKit();
        }
    }

    /**
     * Many replies waiting for the journal cost one wake-up: only the head's promise is watched, and when a
     * commit makes the head and the replies behind it durable, one message hands them all on.
     */
    @Test
    void onlyTheHeadsPromiseIsWatched() {
        ActorTestKit kit = ActorTestKit.create();
        try {
            List<CompletableFuture<Void>> made = new CopyOnWriteArrayList<>();
            TestProbe<Reply<?>> client = kit.createTestProbe();
            ActorRef<Reply<?>> replies = withPromises(kit, made, client);
            for (int i = 0; i < 100; i++) replies.tell(Reply.ok(i));
            client.awaitAssert(() -> {
                assertEquals(100, made.size());
                return null;
            });
            client.awaitAssert(() -> {
                assertEquals(1, made.get(0).getNumberOfDependents(), "the head is watched");
                return null;
            });
            for (int i = 1; i < 100; i++) assertEquals(0, made.get(i).getNumberOfDependents(), "reply " + i + " is not");
            for (int i = 99; i >= 60; i--) made.get(i).complete(null); // a later commit's, before the head's
            client.expectNoMessage(Duration.ofMillis(100));
            for (int i = 0; i < 50; i++) made.get(i).complete(null);
            for (int i = 0; i < 50; i++) assertEquals(i, client.receiveMessage().value());
            client.expectNoMessage(Duration.ofMillis(100)); // 50 to 59 are not durable yet
            client.awaitAssert(() -> {
                assertEquals(1, made.get(50).getNumberOfDependents(), "the new head is watched");
                return null;
            });
            for (int i = 50; i < 60; i++) made.get(i).complete(null);
            for (int i = 50; i < 100; i++) assertEquals(i, client.receiveMessage().value());
        } finally {
            kit.shutdownTestKit();
        }
    }

    @Test
    void runsAnActorClientWasToldOfSurviveACrash() throws Exception {
        Path image = Volumes.make(dir, 4);
        Volume v = Volumes.open(image);
        Map<String, List<BlockRun>> acked = new ConcurrentHashMap<>();
        AtomicInteger acks = new AtomicInteger();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            String file = "actor-" + t;
            join(v.allocator().open(file));
            BlockingQueue<Reply<?>> mine = new LinkedBlockingQueue<>();
            ActorRef<Reply<?>> own = v.actors().spawn(Behaviors.<Reply<?>>receiveMessage(r -> {
                mine.add(r);
                return Behaviors.same();
            }), "client-" + t);
            ActorRef<Reply<?>> replies =
                    v.actors().spawn(v.allocator().acknowledging(file, own), "replies-" + t).narrow();
            Thread th = new Thread(() -> {
                try {
                    long next = 0;
                    for (int i = 0; ; i++) {
                        v.actors().fileHandle(file)
                                .tell(new FileActor.GetBlocks(next, 1 + i % 7, true, replies.narrow()));
                        Reply<?> r = mine.poll(30, TimeUnit.SECONDS);
                        if (r == null || !r.isOk()) return; // the volume went away under us
                        BlockRun run = (BlockRun) r.value();
                        acked.computeIfAbsent(file, k -> new ArrayList<>()).add(run);
                        next += run.blocks();
                        acks.incrementAndGet();
                    }
                } catch (InterruptedException | RuntimeException stopped) {
                    // as in a crash
                }
            });
            th.setDaemon(true);
            th.start();
            threads.add(th);
        }
        while (acks.get() < 400) Thread.sleep(5);
        v.abandon(); // replies in flight now are never handed on
        for (Thread th : threads) th.join(30_000);

        try (Volume again = Volumes.open(image)) {
            for (Map.Entry<String, List<BlockRun>> e : acked.entrySet()) {
                join(again.allocator().open(e.getKey()));
                for (BlockRun r : e.getValue()) {
                    BlockRun now = join(again.allocator().getBlocks(e.getKey(), r.logicalStart(), r.blocks(), false));
                    assertEquals(r.physicalStart(), now.physicalStart(), e.getKey() + " " + r + " " + again.recovery());
                }
            }
        }
        Fsck.Result r = Fsck.check(image, false);
        assertTrue(r.clean(), r::report);
    }
}
