package org.blockyard.runtime.alloc;

import static org.blockyard.runtime.alloc.AllocatorChecks.await;
import static org.blockyard.runtime.alloc.AllocatorChecks.refused;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import akka.Done;
import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.actor.typed.ActorRef;
import org.junit.jupiter.api.Test;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.api.alloc.MapRequest;

/** Every call is answered, with a result or a typed error, when actors fail and while the allocator closes. */
class FaultsAndShutdownTest {
    private final Geometry geometry = Geometry.of(4096, 64 * 4096, 4096);

    /** Waits for every stage, then answers how many failed with each error class. */
    private static java.util.Map<Class<?>, Integer> outcomes(List<CompletableFuture<?>> calls) throws Exception {
        CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).handle((v, e) -> null)
                .get(30, TimeUnit.SECONDS); // bounded: before the fix these never completed
        java.util.Map<Class<?>, Integer> out = new java.util.HashMap<>();
        for (CompletableFuture<?> c : calls) {
            Class<?> kind = Void.class;
            try {
                c.get();
            } catch (ExecutionException e) {
                kind = e.getCause().getClass();
            }
            out.merge(kind, 1, Integer::sum);
        }
        return out;
    }

    @Test
    void thousandsOfCallsInFlightWhenTheAllocatorClosesAreAllAnswered() throws Exception {
        ActorBlockAllocator a = ActorBlockAllocator.start(AllocatorSettings.of(geometry, ReservationPolicy.extended()));
        for (int f = 0; f < 8; f++) await(a.open("/f" + f));
        List<CompletableFuture<?>> calls = new ArrayList<>();
        for (int i = 0; i < 4000; i++) {
            calls.add(a.allocate(4, 1, 0, -1).toCompletableFuture());
            calls.add(a.getBlocks("/f" + (i % 8), i, 1, true).toCompletableFuture());
            calls.add(a.freeExtents(0, geometry.totalBlocks(), 100).toCompletableFuture());
        }
        a.close();
        var seen = outcomes(calls);
        assertEquals(calls.size(), seen.values().stream().mapToInt(Integer::intValue).sum());
        assertTrue(seen.containsKey(AllocationException.Closed.class), "no call was still in flight: " + seen);
        for (Class<?> kind : seen.keySet())
            assertTrue(kind == Void.class || kind == AllocationException.Closed.class,
                    "a call in flight at close ended with " + kind.getSimpleName() + ": " + seen);
    }

    @Test
    void callsAfterCloseFailWithClosedAtOnce() {
        ActorBlockAllocator a = ActorBlockAllocator.start(AllocatorSettings.of(geometry, ReservationPolicy.extended()));
        await(a.open("/f"));
        a.close();
        refused(AllocationException.Closed.class, a.allocate(1, 1, 0, -1));
        refused(AllocationException.Closed.class, a.release(List.of(new Extent(100, 1))));
        refused(AllocationException.Closed.class, a.getBlocks("/f", 0, 1, true));
        refused(AllocationException.Closed.class, a.open("/g"));
        refused(AllocationException.Closed.class, a.writeFile("/g", List.of(MapRequest.allocate(0, 1))));
        refused(AllocationException.Closed.class, a.freeBlocks());
        refused(AllocationException.Closed.class, a.fragmentationScore());
        refused(AllocationException.Closed.class, a.stats());
    }

    /** A policy plugin with a bug: {@code where} ("window", "goal" or "home") throws once. */
    private static AllocationPolicy throwingOnce(AllocationPolicy p, AtomicBoolean armed) {
        return throwingOnce(p, armed, "window");
    }

    private static AllocationPolicy throwingOnce(AllocationPolicy p, AtomicBoolean armed, String where) {
        return new AllocationPolicy() {
            @Override public String id() { return "throws-once"; }
            @Override public int initialWindowBlocks() { return p.initialWindowBlocks(); }
            @Override public int nextWindowBlocks(int previous, long used, long window, int request, int groupData) {
                return p.nextWindowBlocks(previous, used, window, request, groupData);
            }
            @Override public int homeGroup(String file, Volume volume) {
                if (where.equals("home") && armed.getAndSet(false)) throw new IllegalStateException("policy bug");
                return p.homeGroup(file, volume);
            }
            @Override public long goal(long logical, long lastLogical, long lastPhysical, long preceding, int home,
                                       Volume volume) {
                if (where.equals("goal") && armed.getAndSet(false)) throw new IllegalStateException("policy bug");
                return p.goal(logical, lastLogical, lastPhysical, preceding, home, volume);
            }
            @Override public long windowSearchStart(long goal, int windowBlocks, GroupView group) {
                if (where.equals("window") && armed.getAndSet(false)) throw new IllegalStateException("policy bug");
                return p.windowSearchStart(goal, windowBlocks, group);
            }
        };
    }

    @Test
    void aGroupActorThatThrowsAnswersTheCallWithFailedAndGoesOnServing() {
        AtomicBoolean armed = new AtomicBoolean(true);
        try (ActorBlockAllocator a = ActorBlockAllocator.start(AllocatorSettings.of(geometry,
                throwingOnce(ReservationPolicy.extended(), armed)))) {
            await(a.open("/f"));
            long free = await(a.freeBlocks());
            var failed = refused(AllocationException.Failed.class, a.getBlocks("/f", 0, 8, true));
            assertTrue(failed.getMessage().contains("policy bug"), "the error names the fault: " + failed.getMessage());
            assertEquals(free, (long) await(a.freeBlocks()), "the failed call took blocks");
            var run = await(a.getBlocks("/f", 0, 8, true));
            assertEquals(8, run.blocks());
            List<Extent> owned = new ArrayList<>(await(a.heldExtents("/f")));
            owned.addAll(await(a.allocate(16, 1, 0, -1)));
            AllocatorChecks.checkInvariants(a, owned);
        }
    }

    @Test
    void aFileActorWhosePolicyThrowsAnswersFailedAndServesTheNextCall() {
        AtomicBoolean armed = new AtomicBoolean(true);
        try (ActorBlockAllocator a = ActorBlockAllocator.start(AllocatorSettings.of(geometry,
                throwingOnce(ReservationPolicy.extended(), armed, "goal")))) {
            await(a.open("/f"));
            long free = await(a.freeBlocks());
            var failed = refused(AllocationException.Failed.class, a.getBlocks("/f", 0, 8, true));
            assertTrue(failed.getMessage().contains("policy bug"), "the error names the fault: " + failed.getMessage());
            assertEquals(free, (long) await(a.freeBlocks()));
            assertEquals(8, await(a.getBlocks("/f", 0, 8, true)).blocks());
            AllocatorChecks.checkInvariants(a, await(a.heldExtents("/f")));
        }
    }

    /**
     * A file written whole whose policy throws, in the file's host (its goal) or in the group (its window
     * search): the call is answered with {@code Failed} naming the fault, nothing is taken, and the file is
     * closed all the same, so the next write of it starts afresh.
     */
    @Test
    void aWriteFileWhosePolicyThrowsAnswersFailedAndStillClosesTheFile() {
        for (String where : List.of("goal", "window")) {
            AtomicBoolean armed = new AtomicBoolean(true);
            try (ActorBlockAllocator a = ActorBlockAllocator.start(AllocatorSettings.of(geometry,
                    throwingOnce(ReservationPolicy.extended(), armed, where)))) {
                long free = await(a.freeBlocks());
                List<MapRequest> calls = List.of(MapRequest.allocate(0, 1), MapRequest.allocate(1, 1));
                var failed = refused(AllocationException.Failed.class, a.writeFile("/f", calls));
                assertTrue(failed.getMessage().contains("policy bug"), where + ": " + failed.getMessage());
                assertEquals(free, (long) await(a.freeBlocks()), where + ": the failed call took blocks");
                refused(AllocationException.UnknownFile.class, a.getBlocks("/f", 0, 1, false));
                assertEquals(2, await(a.writeFile("/f", calls)).size(), where);
                refused(AllocationException.UnknownFile.class, a.getBlocks("/f", 0, 1, false));
                assertEquals(free - 2, (long) await(a.freeBlocks()), where);
                AllocatorChecks.checkInvariants(a, await(a.heldExtents("/f")));
            }
        }
    }

    /**
     * The policy throws while blocks are reserved for the rest of a short answer (its goal for the gap): the
     * request that waited for the reservation is answered with {@code Failed}, in a batch or on its own, and
     * the file goes on.
     */
    @Test
    void aPolicyThatThrowsWhileAGapIsReservedFailsTheRequestThatWaitedAndTheFileGoesOn() {
        // Group 0's data blocks end at logical 4094 of a file homed there: [3840, 4096) gets 254 blocks,
        // leaving the gap [4094, 4096) before the request at 4096.
        long gap = 4094;
        for (boolean batch : new boolean[] {true, false}) {
            AtomicBoolean armed = new AtomicBoolean(false);
            AllocationPolicy p = ReservationPolicy.extended();
            AllocationPolicy throwing = new AllocationPolicy() {
                @Override public String id() { return "throws-at-the-gap"; }
                @Override public int initialWindowBlocks() { return p.initialWindowBlocks(); }
                @Override public int nextWindowBlocks(int previous, long used, long window, int request, int groupData) {
                    return p.nextWindowBlocks(previous, used, window, request, groupData);
                }
                @Override public int homeGroup(String file, Volume volume) { return 0; }
                @Override public long goal(long logical, long lastLogical, long lastPhysical, long preceding, int home,
                                           Volume volume) {
                    if (logical == gap && armed.getAndSet(false)) throw new IllegalStateException("policy bug");
                    return p.goal(logical, lastLogical, lastPhysical, preceding, home, volume);
                }
                @Override public long windowSearchStart(long goal, int windowBlocks, GroupView group) {
                    return p.windowSearchStart(goal, windowBlocks, group);
                }
            };
            try (ActorBlockAllocator a = ActorBlockAllocator.start(AllocatorSettings.of(geometry, throwing))) {
                await(a.open("/f"));
                for (long l = 0; l < 3840; l += 256) assertEquals(256, await(a.getBlocks("/f", l, 256, true)).blocks());
                armed.set(true);
                Throwable failed;
                if (batch) {
                    failed = refused(AllocationException.Failed.class, a.getBlocks("/f",
                            List.of(MapRequest.allocate(3840, 256), MapRequest.allocate(4096, 256))));
                } else {
                    var first = a.getBlocks("/f", 3840, 256, true); // answered short; the next waits for the gap
                    var second = a.getBlocks("/f", 4096, 256, true);
                    assertEquals(254, await(first).blocks());
                    failed = refused(AllocationException.Failed.class, second);
                }
                assertTrue(failed.getMessage().contains("policy bug"), failed.getMessage());
                assertTrue(!armed.get(), "the gap's goal was asked for");
                assertEquals(2, await(a.getBlocks("/f", gap, 2, true)).blocks(), "the file goes on: the gap");
                assertEquals(256, await(a.getBlocks("/f", 4096, 256, true)).blocks(), "and past it");
                AllocatorChecks.checkInvariants(a, await(a.heldExtents("/f")));
            }
        }
    }

    @Test
    void anOpenWhosePolicyThrowsForTheHomeGroupStillOpensTheFile() {
        AtomicBoolean armed = new AtomicBoolean(true);
        try (ActorBlockAllocator a = ActorBlockAllocator.start(AllocatorSettings.of(geometry,
                throwingOnce(ReservationPolicy.extended(), armed, "home")))) {
            await(a.open("/f"));
            assertEquals(8, await(a.getBlocks("/f", 0, 8, true)).blocks());
            await(a.open("/g"));
            assertEquals(8, await(a.getBlocks("/g", 0, 8, true)).blocks());
        }
    }

    @Test
    void aPreparedReleaseWhoseCallerVanishedIsAbortedAfterItsBound() throws Exception {
        ActorTestKit kit = ActorTestKit.create();
        try {
            VolumeState volume = new VolumeState(geometry);
            BlockGroup state = new BlockGroup(geometry, 1, ReservationPolicy.extended());
            ActorRef<GroupActor.Command> group = kit.spawn(GroupActor.create(state, volume, 512, 100,
                    Duration.ofMillis(300)));
            TestProbe<Reply<List<Extent>>> claims = kit.createTestProbe();
            group.tell(new GroupActor.ClaimExtents(new BlockGroup.ExtentClaim(8, 1, 0, 1, -1, true), claims.getRef()));
            List<Extent> held = claims.receiveMessage().value();
            TestProbe<Reply<Done>> replies = kit.createTestProbe();
            TestProbe<GroupFileProtocol.Freed> freed = kit.createTestProbe();
            group.tell(new GroupFileProtocol.PrepareFree(7, held, freed.getRef()));
            assertTrue(freed.receiveMessage().reply().isOk());
            group.tell(new GroupActor.Free(held, replies.getRef()));
            assertInstanceOf(AllocationException.DoubleFree.class, replies.receiveMessage().error(),
                    "while prepared, the blocks are held");
            // The caller never commits nor aborts: after the bound the blocks may be freed again.
            replies.awaitAssert(Duration.ofSeconds(10), Duration.ofMillis(50), () -> {
                group.tell(new GroupActor.Free(held, replies.getRef()));
                assertTrue(replies.receiveMessage().isOk(), "the prepared release was not aborted");
                return null;
            });
            group.tell(new GroupFileProtocol.CommitFree(7, freed.getRef()));
            assertInstanceOf(AllocationException.InvalidRequest.class, freed.receiveMessage().reply().error(),
                    "a commit after the expiry finds nothing to commit");
        } finally {
            kit.shutdownTestKit();
        }
    }

    @Test
    void extentsWhoseEndOverflowsAreRefusedAndFreeNothing() {
        try (ActorBlockAllocator a = ActorBlockAllocator.start(AllocatorSettings.of(geometry, ReservationPolicy.extended()))) {
            List<Extent> owned = await(a.allocate(8, 1, 0, -1));
            long free = await(a.freeBlocks());
            assertThrows(IllegalArgumentException.class, () -> new Extent(Long.MAX_VALUE - 2, 8));
            assertThrows(IllegalArgumentException.class, () -> new Extent(5, Long.MAX_VALUE));
            refused(AllocationException.OutOfRange.class, a.release(List.of(new Extent(0, Long.MAX_VALUE))));
            refused(AllocationException.OutOfRange.class, a.release(List.of(owned.get(0),
                    new Extent(Long.MAX_VALUE - 10, 10))));
            refused(AllocationException.InvalidRequest.class, a.allocate(Long.MAX_VALUE, 1 << 30, 0, -1));
            assertEquals(free, (long) await(a.freeBlocks()));
            AllocatorChecks.checkInvariants(a, owned);
        }
    }

    @Test
    void geometriesThatOverflowAreRefusedWithAMessage() {
        var tooBig = assertThrows(IllegalArgumentException.class, () -> Geometry.of(4096, 1L << 53, 32768));
        assertTrue(tooBig.getMessage().contains("exceeds 2^63 bytes"), tooBig.getMessage());
        var tooManyGroups = assertThrows(IllegalArgumentException.class, () -> Geometry.of(4096, 1L << 45, 32768));
        assertTrue(tooManyGroups.getMessage().contains("use bigger groups"), tooManyGroups.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Geometry.of(4096, Long.MAX_VALUE / 1024, 1 << 30));
        var tinyLastGroup = assertThrows(IllegalArgumentException.class, () -> Geometry.of(4096, 32768 + 1, 32768));
        assertTrue(tinyLastGroup.getMessage().contains("round the volume down"), tinyLastGroup.getMessage());
        Geometry smallLast = Geometry.of(4096, 32768 + 3, 32768);
        assertEquals(2, smallLast.groups());
        assertEquals(32768 + 3 - 2 * 2, smallLast.dataBlocks(), "a last group of 3 blocks keeps 1 data block");
    }
}
