package org.blockyard.runtime.alloc;

import static org.blockyard.runtime.alloc.AllocatorChecks.await;
import static org.blockyard.runtime.alloc.AllocatorChecks.refused;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import org.junit.jupiter.api.Test;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.api.alloc.MapRequest;
import org.blockyard.runtime.config.BlockyardConfig;

/**
 * Files move between their shard and actors of their own (a low threshold makes every file of 16 blocks a
 * stream): what they hold, give back and answer is the same whoever serves them.
 */
class FileHostingTest {
    private static final Geometry G = Geometry.of(4096, 8L * 4096, 4096);

    private static ActorBlockAllocator start(int shards, int ownActorAfter) {
        Config c = ConfigFactory.parseString("blockyard.alloc.file-shards = " + shards
                + "\nblockyard.alloc.own-actor-after-blocks = " + ownActorAfter).withFallback(BlockyardConfig.load());
        return ActorBlockAllocator.start(AllocatorSettings.of(G, ReservationPolicy.extended()), c);
    }

    private static long append(ActorBlockAllocator a, String f, long from, long blocks) {
        long l = from;
        while (l < from + blocks) l += await(a.getBlocks(f, l, (int) (from + blocks - l), true)).blocks();
        return l;
    }

    @Test
    void aFileKeepsItsMapAcrossManyMovesBetweenShardAndActor() {
        try (ActorBlockAllocator a = start(2, 16)) {
            long l = 0;
            for (int round = 0; round < 6; round++) {
                await(a.open("/s"));
                l = append(a, "/s", l, 40);
                await(a.close("/s"));
            }
            List<Extent> map = await(a.fileExtents("/s"));
            assertEquals(240, map.stream().mapToLong(Extent::blocks).sum());
            List<Extent> owned = new ArrayList<>(map);
            AllocatorChecks.checkInvariants(a, owned);
            assertEquals(G.dataBlocks() - 240, await(a.freeBlocks()), "closed: nothing preallocated is left held");
        }
    }

    /**
     * A stream's actor answers its last close, then hands the file back: a delete sent the moment the close is
     * answered may reach the shard before the hand-back. It waits for it and deletes the closed file.
     */
    @Test
    void aStreamDeletedTheMomentItsLastCloseIsAnsweredIsDeleted() {
        try (ActorBlockAllocator a = start(2, 16)) {
            for (int round = 0; round < 40; round++) {
                String f = "/s" + round;
                await(a.open(f));
                append(a, f, 0, 20);
                await(a.close(f));
                await(a.open(f)); // a proven stream: served by an actor of its own now
                append(a, f, 20, 20);
                await(a.close(f));
                await(a.delete(f));
                refused(AllocationException.UnknownFile.class, a.fileExtents(f));
            }
            assertEquals(G.dataBlocks(), await(a.freeBlocks()));
        }
    }

    /** A stream with an actor of its own, written whole: served there, then closed and handed back as by a close. */
    @Test
    void aStreamWrittenWholeIsServedByItsActorAndClosedAfter() {
        try (ActorBlockAllocator a = start(2, 16)) {
            await(a.open("/s"));
            append(a, "/s", 0, 40);
            await(a.close("/s"));
            for (int round = 0; round < 3; round++) { // each write opens the proven stream in an actor of its own
                List<MapRequest> calls = new ArrayList<>();
                for (long l = 40 + 20L * round; l < 60 + 20L * round; l++) calls.add(MapRequest.allocate(l, 1));
                assertEquals(20, await(a.writeFile("/s", calls)).size());
                refused(AllocationException.UnknownFile.class, a.getBlocks("/s", 0, 1, false));
            }
            List<Extent> map = await(a.fileExtents("/s"));
            assertEquals(100, map.stream().mapToLong(Extent::blocks).sum());
            AllocatorChecks.checkInvariants(a, new ArrayList<>(map));
            assertEquals(G.dataBlocks() - 100, await(a.freeBlocks()), "closed: nothing preallocated is left held");
        }
    }

    /**
     * A stream with an actor of its own whose batches went on past the ends of groups holds reservations for
     * the gaps in several groups. Its last close hands the file back to the shard at once, and the groups'
     * acknowledgements reach the file there: the close is answered, and every reserved block is free again.
     */
    @Test
    void aStreamsCloseWithReservationsInSeveralGroupsIsAnsweredAfterItsActorHandedItBack() {
        try (ActorBlockAllocator a = start(2, 16)) {
            await(a.open("/s"));
            append(a, "/s", 0, 40);
            await(a.close("/s"));
            await(a.open("/s")); // now served by its own actor
            List<MapRequest> appends = new ArrayList<>();
            for (long l = 40; l < 40 + 3 * 4096; l += 256) appends.add(MapRequest.allocate(l, 256));
            long mapped = 40;
            for (int i = 0; i < appends.size(); i += 10)
                for (BlockRun r : await(a.getBlocks("/s", appends.subList(i, Math.min(appends.size(), i + 10)))))
                    mapped += r.blocks();
            assertTrue(mapped < 40 + 3 * 4096, "group ends left gaps: " + mapped);
            await(a.close("/s"));
            assertEquals(G.dataBlocks() - mapped, await(a.freeBlocks()), "every reservation and preallocation back");
            AllocatorChecks.checkInvariants(a, new ArrayList<>(await(a.fileExtents("/s"))));
        }
    }

    @Test
    void manyClientsOpeningAndClosingFilesThatMoveLoseNothing() throws Exception {
        try (ActorBlockAllocator a = start(3, 16)) {
            Random rnd = new Random(5);
            List<CompletableFuture<Long>> clients = new ArrayList<>();
            for (int c = 0; c < 8; c++) {
                String f = "/c" + c;
                int opens = 3 + rnd.nextInt(5);
                clients.add(CompletableFuture.supplyAsync(() -> {
                    long l = 0;
                    for (int i = 0; i < opens; i++) {
                        await(a.open(f));
                        await(a.open(f)); // two writers: only the second close hands the file back
                        l = append(a, f, l, 20);
                        await(a.close(f));
                        l = append(a, f, l, 5);
                        await(a.close(f));
                    }
                    return l;
                }));
            }
            List<Extent> owned = new ArrayList<>();
            long total = 0;
            for (int c = 0; c < clients.size(); c++) {
                long blocks = clients.get(c).get(60, TimeUnit.SECONDS);
                List<Extent> map = await(a.fileExtents("/c" + c));
                assertEquals(blocks, map.stream().mapToLong(Extent::blocks).sum(), "file /c" + c);
                owned.addAll(map);
                total += blocks;
            }
            AllocatorChecks.checkInvariants(a, owned);
            assertEquals(G.dataBlocks() - total, await(a.freeBlocks()));
        }
    }

    /** A call in flight, and when it was sent. */
    private record Call(String what, long sentNanos) {}

    private static final List<String> CALLS =
            List.of("getBlocks", "getBlocks batch", "fileExtents", "truncate", "discardUnwritten", "markWritten");

    /**
     * Writers open, append to and close a few streams over and over, so each moves to an actor of its own at
     * every open and back to its shard at every last close; meanwhile callers that never opened them look them
     * up, list them, truncate and discard beyond their end and mark blocks written, through the handles the
     * writers' opens left with the allocator. Every call is answered within 5 s (the facade's ask gives up
     * after 60 s): with a mapping or a count while the file is open, with UnknownFile while it is closed,
     * wherever the file is on its way. Before the actor's handle stopped it only once no send through it was
     * under way, about one call in 40,000 went to an actor that had stopped and was never answered.
     */
    @Test
    void callsFromCallersThatNeverOpenedAFileAreAnsweredWhileItMovesBetweenShardAndActor() throws Exception {
        List<String> names = List.of("/m0", "/m1", "/m2", "/m3");
        long deadline = TimeUnit.SECONDS.toNanos(5);
        Set<Call> pending = ConcurrentHashMap.newKeySet();
        Queue<String> late = new ConcurrentLinkedQueue<>(), wrong = new ConcurrentLinkedQueue<>();
        Queue<String> writerTrouble = new ConcurrentLinkedQueue<>();
        LongAdder sent = new LongAdder();
        ExecutorService threads = Executors.newFixedThreadPool(names.size() + 2);
        try (ActorBlockAllocator a = start(4, 16)) {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(12);
            List<Future<?>> running = new ArrayList<>();
            for (String f : names) {
                running.add(threads.submit(() -> {
                    long l = 0;
                    while (System.nanoTime() < end && writerTrouble.isEmpty()) {
                        try {
                            within(deadline, a.open(f));
                            if (l >= 512) { // the files stay small
                                within(deadline, a.truncate(f, 16));
                                l = 16;
                            }
                            for (long to = l + 16; l < to; )
                                l += within(deadline, a.getBlocks(f, l, (int) Math.min(4, to - l), true)).blocks();
                            within(deadline, a.close(f));
                        } catch (Exception e) {
                            writerTrouble.add(f + ": " + e);
                        }
                    }
                }));
            }
            for (int c = 0; c < 2; c++) {
                running.add(threads.submit(() -> {
                    Semaphore inFlight = new Semaphore(32);
                    ThreadLocalRandom rnd = ThreadLocalRandom.current();
                    while (System.nanoTime() < end) {
                        try {
                            if (!inFlight.tryAcquire(deadline, TimeUnit.NANOSECONDS)) return; // 32 unanswered
                        } catch (InterruptedException e) {
                            return;
                        }
                        String f = names.get(rnd.nextInt(names.size()));
                        int kind = rnd.nextInt(CALLS.size());
                        long l = rnd.nextLong(64);
                        Call call = new Call(CALLS.get(kind) + " " + f, System.nanoTime());
                        pending.add(call);
                        sent.increment();
                        CompletionStage<?> answer = switch (kind) {
                            case 0 -> a.getBlocks(f, l, 4, false);
                            case 1 -> a.getBlocks(f, List.of(new MapRequest(l, 4, false), new MapRequest(l + 4, 4, false)));
                            case 2 -> a.fileExtents(f);
                            case 3 -> a.truncate(f, 1L << 40); // beyond the end: frees nothing
                            case 4 -> a.discardUnwritten(f, 1L << 40, 1);
                            default -> a.markWritten(f, 0, 1);
                        };
                        answer.whenComplete((v, e) -> {
                            pending.remove(call);
                            inFlight.release();
                            if (System.nanoTime() - call.sentNanos() > deadline) late.add(call.what());
                            Throwable error = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
                            if (error != null && !(error instanceof AllocationException.UnknownFile))
                                wrong.add(call.what() + ": " + error);
                        });
                    }
                }));
            }
            for (Future<?> r : running) r.get(30, TimeUnit.SECONDS);
            long waitUntil = System.nanoTime() + deadline; // every call still pending was sent before now
            while (!pending.isEmpty() && System.nanoTime() < waitUntil) Thread.sleep(10);
            List<String> unanswered = new ArrayList<>(late);
            for (Call c : pending) unanswered.add(c.what());
            assertEquals(List.of(), List.copyOf(writerTrouble), "the writers' calls");
            assertEquals(List.of(), unanswered, unanswered.size() + " of " + sent.sum() + " calls not answered within 5 s");
            assertEquals(List.of(), List.copyOf(wrong), "answers other than a mapping, a count or UnknownFile");
        } finally {
            threads.shutdownNow();
        }
    }

    /** The value {@code stage} completes with, within {@code nanos}. */
    private static <T> T within(long nanos, CompletionStage<T> stage) throws Exception {
        return stage.toCompletableFuture().get(nanos, TimeUnit.NANOSECONDS);
    }

    @Test
    void preallocationsOfFilesWithTheirOwnActorsAreGivenBackBeforeNoSpace() {
        Geometry one = Geometry.of(4096, 4096, 4096);
        Config c = ConfigFactory.parseString("blockyard.alloc.own-actor-after-blocks = 16").withFallback(BlockyardConfig.load());
        try (ActorBlockAllocator a = ActorBlockAllocator.start(AllocatorSettings.of(one, ReservationPolicy.extended()), c)) {
            for (int i = 0; i < 5; i++) {
                String f = "/idle" + i;
                await(a.open(f));
                append(a, f, 0, 20);
                await(a.close(f));
                await(a.open(f)); // now served by its own actor
                for (long l = 20; l < 150; l++) await(a.getBlocks(f, l, 1, true)); // grows a window, preallocates
            }
            long mapped = 0;
            for (int i = 0; i < 5; i++) for (Extent e : await(a.fileExtents("/idle" + i))) mapped += e.blocks();
            long free = await(a.freeBlocks());
            long held = one.dataBlocks() - mapped - free;
            assertTrue(held > 0, "the open streams hold preallocations: " + held);
            await(a.open("/last"));
            long got = append(a, "/last", 0, free + held);
            assertEquals(free + held, got);
            assertEquals(0, await(a.freeBlocks()));
            refused(AllocationException.NoSpace.class, a.getBlocks("/last", got, 1, true));
        }
    }

    @Test
    void closingTheAllocatorAnswersFilesWithTheirOwnActorsAndHostedOnes() {
        ActorBlockAllocator a = start(2, 16);
        await(a.open("/s"));
        append(a, "/s", 0, 20);
        await(a.close("/s"));
        await(a.open("/s")); // own actor
        await(a.open("/small"));
        List<CompletionStage<BlockRun>> calls = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            calls.add(a.getBlocks("/s", 20 + i, 1, true));
            calls.add(a.getBlocks("/small", i, 1, true));
        }
        a.close();
        for (CompletionStage<BlockRun> s : calls) {
            try {
                s.toCompletableFuture().get(10, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException e) {
                assertInstanceOf(AllocationException.Closed.class, e.getCause());
            } catch (Exception e) {
                throw new AssertionError("a call was not answered after close", e);
            }
        }
        assertInstanceOf(AllocationException.Closed.class,
                AllocatorChecks.refused(AllocationException.class, a.getBlocks("/s", 500, 1, true)));
    }

    @Test
    void aPolicySwitchReachesHostedFilesFilesWithActorsAndClosedFiles() {
        try (ActorBlockAllocator a = start(2, 16)) {
            await(a.open("/s"));
            append(a, "/s", 0, 20);
            await(a.close("/s"));
            await(a.open("/closed"));
            append(a, "/closed", 0, 3);
            await(a.close("/closed"));
            await(a.open("/s")); // own actor
            await(a.open("/h"));
            append(a, "/h", 0, 3);
            await(a.setPolicyTunable("reservation", "initial_window_blocks", 64)); // rebuilt and switched to
            append(a, "/s", 20, 10);
            append(a, "/h", 3, 10);
            await(a.open("/closed"));
            append(a, "/closed", 3, 10);
            List<Extent> owned = new ArrayList<>();
            for (String f : List.of("/s", "/h", "/closed")) owned.addAll(await(a.heldExtents(f)));
            AllocatorChecks.checkInvariants(a, owned);
            await(a.open("/new"));
            append(a, "/new", 0, 1);
            long held = await(a.heldExtents("/new")).stream().mapToLong(Extent::blocks).sum();
            assertEquals(64, held, "a new file starts with the new first window, preallocated");
        }
    }
}
