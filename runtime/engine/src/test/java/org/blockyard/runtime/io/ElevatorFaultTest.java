package org.blockyard.runtime.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import java.util.stream.Stream;

import org.blockyard.api.io.Elevator;
import org.blockyard.api.io.ElevatorSwitch;
import org.blockyard.api.io.IoCompletion;
import org.blockyard.api.io.IoException;
import org.blockyard.api.io.IoRequest;
import org.blockyard.api.io.QueueLimits;
import org.blockyard.runtime.io.elevator.NoopElevator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * An elevator that throws, breaks the queue's contract or stalls is retired; the default takes over with
 * every request it held, each submission completes exactly once, and the queue goes on working. Each
 * faulty elevator ({@link FaultyElevators}) runs on the virtual clock and in the real-time actor.
 */
class ElevatorFaultTest {
    private static final long MS = 1_000_000L;
    private static final int LOAD = 400;
    private static final int LATER = 50;
    /** Small, so the stalling elevator's sleep is short; far above what an honest call takes. */
    private static final long STALL_LIMIT_NANOS = 80 * MS;

    /**
     * @param fault          the elevator's bug
     * @param reason         what the listing must show after "buggy(failed: "
     * @param switchMidway   switch to the default halfway through the load (the bug is in drainAll)
     */
    record Case(String name, Supplier<Elevator> fault, String reason, boolean switchMidway) {
        @Override public String toString() { return name; }
    }

    static Stream<Case> cases() {
        return Stream.of(
                new Case("throws in dispatch after 40", () -> FaultyElevators.throwsInDispatch(40),
                        "dispatch threw IllegalStateException: dispatch bug after 40", false),
                new Case("throws in add after 60", () -> FaultyElevators.throwsInAdd(60),
                        "add threw IllegalArgumentException: add bug after 60", false),
                new Case("throws in drainAll during a switch", FaultyElevators::throwsInDrainAll,
                        "drainAll threw UnsupportedOperationException: drainAll bug", true),
                new Case("dispatches a request it was never given", () -> FaultyElevators.dispatchesForeignRequest(40),
                        "dispatch handed out", false),
                new Case("dispatches a request twice", () -> FaultyElevators.dispatchesTwice(40),
                        "which was already dispatched", false),
                new Case("loses every 25th request", () -> FaultyElevators.losesRequests(25),
                        "dispatch answered idle while holding", false),
                new Case("stalls in dispatch", () -> FaultyElevators.stallsInDispatch(40, 4 * STALL_LIMIT_NANOS / MS),
                        "dispatch stalled for", false));
    }

    /** Counts, per submission id, how often the device was given it and how often its caller was answered. */
    static final class Tally implements QueueEvents {
        final Map<Long, Integer> issued = new ConcurrentHashMap<>();
        final Map<Long, Integer> completed = new ConcurrentHashMap<>();
        final Map<Long, Throwable> failed = new ConcurrentHashMap<>();
        /** Submission id to the number of the device request that carried it, in issue order. */
        final Map<Long, Integer> issueOrder = new ConcurrentHashMap<>();
        private int requestsIssued;

        @Override
        public void issued(Request rq, long nowNanos) {
            requestsIssued++;
            for (Request.Bio b : rq.bios) {
                issued.merge(b.io().id(), 1, Integer::sum);
                issueOrder.put(b.io().id(), requestsIssued);
            }
        }

        void answered(long id, IoCompletion c, Throwable e) {
            completed.merge(id, 1, Integer::sum);
            if (e != null) failed.put(id, e);
        }

        void assertEachOnce(int submissions) {
            assertEquals(Map.of(), failed, "no submission may fail");
            assertEquals(submissions, completed.size(), "every submission answered");
            assertEquals(submissions, issued.size(), "every submission issued");
            completed.forEach((id, n) -> assertEquals(1, n, "answers to submission " + id));
            issued.forEach((id, n) -> assertEquals(1, n, "issues of submission " + id));
        }
    }

    /** Scattered 4 KiB reads and writes with contiguous neighbours, so some merge and many stay apart. */
    private static IoRequest load(long id) {
        long sector = (id * 7919 % 8000) * 8;
        return id % 3 == 0 ? IoRequest.read(id, sector, 8, id % 4) : IoRequest.write(id, sector, 8, id % 4);
    }

    private static QueueSetup setup(ElevatorRegistry registry, String elevator, Tally tally) {
        return new QueueSetup(registry, elevator, Map.of(), QueueLimits.DEFAULT, 4, 3 * MS, tally, STALL_LIMIT_NANOS);
    }

    private static ElevatorRegistry registryWith(Case c) {
        ElevatorRegistry registry = ElevatorRegistry.builtIn("deadline");
        registry.register(FaultyElevators.factory("buggy", c.fault()));
        return registry;
    }

    private static void submitAt(Simulation sim, Tally tally, long atNanos, long id) {
        sim.at(atNanos, () -> sim.submit(load(id), (c, e) -> tally.answered(id, c, e)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void onTheVirtualClockTheDefaultTakesOverAndEverySubmissionCompletesOnce(Case c) {
        ElevatorRegistry registry = registryWith(c);
        Tally tally = new Tally();
        Simulation sim = new Simulation(setup(registry, "buggy", tally), new ConstantLatencyDevice(1 << 24, MS));
        assertEquals("buggy", sim.stats().elevator());
        List<ElevatorSwitch> switches = new ArrayList<>();
        for (int i = 0; i < LOAD; i++) submitAt(sim, tally, i * 50_000L, i);   // 20 per ms against 1 ms per request
        if (c.switchMidway()) sim.at(LOAD / 2 * 50_000L, () -> switches.add(sim.setElevator("deadline")));
        sim.run();

        tally.assertEachOnce(LOAD);
        assertEquals("deadline", sim.stats().elevator());
        assertTrue(registry.failures().get("buggy").contains(c.reason()), registry.failures().toString());
        assertTrue(sim.listing().startsWith("noop [deadline] buggy(failed: "), sim.listing());
        assertTrue(sim.listing().contains(c.reason()), sim.listing());
        if (c.switchMidway()) {
            assertEquals("deadline", switches.get(0).active());
            assertTrue(switches.get(0).movedRequests() > 0, "the switch should have moved queued requests");
        }
        IoException refused = assertThrows(IoException.ElevatorFailed.class, () -> sim.setElevator("buggy"));
        assertTrue(refused.getMessage().contains("retired"), refused.getMessage());

        long later = sim.nowNanos() + MS;
        for (int i = LOAD; i < LOAD + LATER; i++) submitAt(sim, tally, later + i * 10_000L, i);
        sim.run();
        tally.assertEachOnce(LOAD + LATER);
        assertEquals(0, sim.queue().queuedRequests());
        assertEquals(LOAD + LATER, sim.stats().completed());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void inTheActorTheDefaultTakesOverAndEverySubmissionCompletesOnce(Case c) {
        ElevatorRegistry registry = registryWith(c);
        Tally tally = new Tally();
        ActorQueueHarness.run(setup(registry, "buggy", tally), new MemoryDevice(1L << 26), q -> {
            assertEquals("buggy", q.activeElevator().toCompletableFuture().join());
            List<CompletionStage<IoCompletion>> all = new ArrayList<>();
            for (int batch = 0; batch < LOAD / 50; batch++) {
                List<IoRequest> requests = new ArrayList<>();
                for (int i = 0; i < 50; i++) requests.add(load(batch * 50L + i));
                all.addAll(q.submitAll(requests));
                if (c.switchMidway() && batch == LOAD / 100)
                    assertEquals("deadline", q.setElevator("deadline").toCompletableFuture().join().active());
            }
            awaitAndCount(all, tally, 0);

            tally.assertEachOnce(LOAD);
            assertEquals("deadline", q.activeElevator().toCompletableFuture().join());
            String listing = q.schedulerListing().toCompletableFuture().join();
            assertTrue(listing.startsWith("noop [deadline] buggy(failed: "), listing);
            assertTrue(listing.contains(c.reason()), listing);
            CompletionException refused = assertThrows(CompletionException.class,
                    () -> q.setElevator("buggy").toCompletableFuture().join());
            assertInstanceOf(IoException.ElevatorFailed.class, refused.getCause());

            List<IoRequest> more = new ArrayList<>();
            for (long i = LOAD; i < LOAD + LATER; i++) more.add(load(i));
            awaitAndCount(q.submitAll(more), tally, LOAD);
            tally.assertEachOnce(LOAD + LATER);
            assertEquals(LOAD + LATER, q.stats().toCompletableFuture().join().completed());
        });
    }

    private static void awaitAndCount(List<CompletionStage<IoCompletion>> stages, Tally tally, long firstId) {
        List<CompletableFuture<?>> counted = new ArrayList<>();
        for (int i = 0; i < stages.size(); i++) {
            long id = firstId + i;
            counted.add(stages.get(i).handle((c, e) -> {
                tally.answered(id, c, e);
                return null;
            }).toCompletableFuture());
        }
        try {                  // a lost submission never answers: let the tally name it rather than hang
            CompletableFuture.allOf(counted.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            return;
        } catch (InterruptedException | ExecutionException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void whenTheDefaultItselfFailsTheQueueRunsOnNoopAsTheLastResort() {
        ElevatorRegistry registry = new ElevatorRegistry(List.of(NoopElevator.FACTORY,
                FaultyElevators.factory("fragile", () -> FaultyElevators.throwsInDispatch(40))), "fragile");
        Tally tally = new Tally();
        Simulation sim = new Simulation(setup(registry, "fragile", tally), new ConstantLatencyDevice(1 << 24, MS));
        for (int i = 0; i < LOAD; i++) submitAt(sim, tally, i * 50_000L, i);
        sim.run();
        tally.assertEachOnce(LOAD);
        assertEquals("noop", sim.stats().elevator());
        assertTrue(registry.failures().get("fragile").startsWith("dispatch threw"), registry.failures().toString());
    }

    /**
     * A built-in elevator's slow call is a pause of the JVM or the machine (a collection while it held 7,000
     * requests retired the default once, and the queue ran on noop): it is kept, and says so in the log. A
     * built-in that throws is still retired (above).
     */
    @Test
    void aBuiltInElevatorThatStallsIsKept() {
        long sleepMillis = 4 * STALL_LIMIT_NANOS / MS;
        ElevatorRegistry registry = new ElevatorRegistry(List.of(NoopElevator.FACTORY,
                FaultyElevators.factory("slow", () -> FaultyElevators.stallsInDispatch(40, sleepMillis))), "slow");
        Tally tally = new Tally();
        Simulation sim = new Simulation(setup(registry, "slow", tally), new ConstantLatencyDevice(1 << 24, MS));
        for (int i = 0; i < LOAD; i++) submitAt(sim, tally, i * 50_000L, i);
        sim.run();
        tally.assertEachOnce(LOAD);
        assertEquals("slow", sim.stats().elevator());
        assertEquals(Map.of(), registry.failures());
        assertEquals("noop [slow]", sim.listing());
    }

    @Test
    void aFlushThatFindsTheElevatorFailingInDrainAllStillGoesOutAfterEverythingBeforeIt() {
        ElevatorRegistry registry = registryWith(new Case("drainAll", FaultyElevators::throwsInDrainAll, "", false));
        Tally tally = new Tally();
        Simulation sim = new Simulation(setup(registry, "buggy", tally), new ConstantLatencyDevice(1 << 24, MS));
        for (int i = 0; i < 200; i++) submitAt(sim, tally, i * 50_000L, i);
        long flushId = 200;
        sim.at(5 * MS, () -> sim.submit(IoRequest.flush(flushId, 0), (c, e) -> tally.answered(flushId, c, e)));
        sim.run();
        tally.assertEachOnce(201);
        for (long id = 0; id <= 100; id++)                    // submitted before the FLUSH (100 at 5 ms, scheduled first)
            assertTrue(tally.issueOrder.get(id) < tally.issueOrder.get(flushId), id + " issued after the FLUSH");
        for (long id = 101; id < 200; id++)
            assertTrue(tally.issueOrder.get(id) > tally.issueOrder.get(flushId), id + " issued before the FLUSH");
        assertEquals("deadline", sim.stats().elevator());
        assertTrue(registry.failures().get("buggy").startsWith("drainAll threw"), registry.failures().toString());
    }

    @Test
    void aRetiredElevatorCanBeSelectedAgainOnceItIsRegisteredAnew() {
        ElevatorRegistry registry = registryWith(cases().findFirst().orElseThrow());
        Tally tally = new Tally();
        Simulation sim = new Simulation(setup(registry, "buggy", tally), new ConstantLatencyDevice(1 << 24, MS));
        for (int i = 0; i < LOAD; i++) submitAt(sim, tally, i * 50_000L, i);
        sim.run();
        assertTrue(registry.isFailed("buggy"));
        assertEquals("deadline", registry.select("buggy").id(), "boot-time selection passes over a failed one");

        registry.unregister("buggy");                                          // a new bundle version
        registry.register(FaultyElevators.factory("buggy", FaultyElevators.Fifo::new));
        assertEquals(Map.of(), registry.failures());
        assertEquals("buggy", sim.setElevator("buggy").active());
        assertEquals("noop deadline [buggy]", sim.listing());
    }
}
