package org.blockyard.host;

import static org.blockyard.host.HostFixture.await;
import static org.blockyard.host.HostFixture.drop;
import static org.blockyard.host.HostFixture.pluginBundle;
import static org.blockyard.host.HostFixture.shell;
import static org.blockyard.host.HostFixture.shellQuietly;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.blockyard.api.alloc.AllocationPolicyFactory;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.io.ElevatorFactory;
import org.blockyard.api.io.IoRequest;
import org.blockyard.plugin.faultyelevator.FaultyElevatorFactory;
import org.blockyard.plugin.faultygoal.FaultyGoalPolicyFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Faulty plugin bundles in a real Felix: an elevator whose dispatch throws after a while, a policy whose goal
 * throws. Each is dropped into the deploy folder and selected through the shell while work runs; the engine
 * retires it for the built-in default, lists it as failed with the reason, serves every request exactly once,
 * and the host goes on.
 */
class FaultyPluginTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path tmp;

    private Host host;

    @AfterEach
    void closeHost() throws InterruptedException {
        if (host != null) host.close();
        HostFixture.assertNoThreadsLeft();
    }

    @Test
    void anElevatorThatThrowsFromDispatchIsRetiredAndEveryRequestCompletesExactlyOnce() throws Exception {
        retiredWithNothingLost(FaultyElevatorFactory.class, "faulty", "dispatch", "faulty elevator broke after");
    }

    @Test
    void anElevatorThatStallsIsRetiredAndEveryRequestCompletesExactlyOnce() throws Exception {
        retiredWithNothingLost(org.blockyard.plugin.stallingelevator.StallingElevatorFactory.class, "stalling",
                "dispatch", "stalled for");
    }

    @Test
    void anElevatorThatLosesRequestsIsRetiredAndEveryRequestCompletesExactlyOnce() throws Exception {
        // Caught by dispatch answering idle, or queued() disagreeing, while the queue's records hold requests.
        retiredWithNothingLost(org.blockyard.plugin.losingelevator.LosingElevatorFactory.class, "losing", "(failed: ",
                "while holding");
    }

    /**
     * Drops the faulty elevator bundle {@code factory} (id {@code id}) into the deploy folder, selects it, and
     * drives scattered writes through it: it is retired with a reason naming {@code call} and {@code why}, the
     * default takes over, every request completes exactly once, and the host goes on.
     */
    private void retiredWithNothingLost(Class<?> factory, String id, String call, String why) throws Exception {
        host = HostFixture.start(tmp, tmp.resolve("no-plugins"), null);
        drop(pluginBundle(tmp.resolve(id + ".jar"), factory, ElevatorFactory.class,
                "blockyard.elevator.id", id, "org.blockyard.api.io;version=\"[0.3,1)\""),
                tmp.resolve("deploy"), id + ".jar");
        await(id + " in the listing", WAIT, () -> schedulers().equals("noop [deadline] " + id));
        assertEquals("noop deadline [" + id + "]", shell(host, "blockyard:scheduler " + id).lines().findFirst().orElseThrow());

        // Scattered 4 KiB writes, several batches in flight, each completion counted per request id.
        Map<Long, Integer> completions = new ConcurrentHashMap<>();
        AtomicLong failed = new AtomicLong();
        List<CompletableFuture<?>> all = new ArrayList<>();
        int requests = 20 * FaultyElevatorFactory.HEALTHY_DISPATCHES;
        for (long rq = 1; rq <= requests; ) {
            List<IoRequest> batch = new ArrayList<>();
            for (int i = 0; i < 32; i++, rq++)
                batch.add(IoRequest.write(rq, (rq * 7919 % 100_000) * 8, 8, rq % 4).withPayload(ByteBuffer.allocate(4096)));
            int k = 0;
            for (var stage : host.store().queue().submitAll(batch)) {
                long rid = batch.get(k++).id();
                all.add(stage.toCompletableFuture().whenComplete((c, e) -> {
                    completions.merge(rid, 1, Integer::sum);
                    if (e != null) failed.incrementAndGet();
                }));
            }
            Thread.sleep(1);
        }
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);

        assertEquals(0, failed.get(), "failed requests");
        assertEquals(requests, completions.size(), "every request completed");
        assertTrue(completions.values().stream().allMatch(n -> n == 1), "no request completed twice");
        String listing = schedulers();
        assertTrue(listing.startsWith("noop [deadline] " + id + "(failed: "), listing);
        assertTrue(listing.contains(call) && listing.contains(why), listing);

        // The host goes on: the shell answers, and the retired elevator cannot be selected again.
        assertTrue(shell(host, "blockyard:stats").contains("completed"));
        assertTrue(shell(host, "lb").contains(factory.getPackageName()));
        assertThrows(Exception.class, () -> shell(host, "blockyard:scheduler " + id));
        assertTrue(schedulers().startsWith("noop [deadline]"), schedulers());
    }

    @Test
    void aPolicyWhoseGoalThrowsIsRetiredAndEveryAllocationIsServed() throws Exception {
        host = HostFixture.start(tmp, tmp.resolve("no-plugins"), null);
        drop(pluginBundle(tmp.resolve("faulty-goal.jar"), FaultyGoalPolicyFactory.class, AllocationPolicyFactory.class,
                "blockyard.policy.id", "faulty-goal", "org.blockyard.api.alloc;version=\"[0.1,1)\""),
                tmp.resolve("deploy"), "faulty-goal.jar");
        await("faulty-goal in the listing", WAIT, () -> policies().equals("[reservation] faulty-goal"));
        assertTrue(shell(host, "blockyard:policy faulty-goal").startsWith("reservation [faulty-goal]"));

        // Appends to several files, one block at a time so every call asks the policy for a goal.
        var alloc = host.store().allocator();
        int files = 8, blocksEach = 2 * FaultyGoalPolicyFactory.HEALTHY_GOALS;
        List<CompletableFuture<BlockRun>> calls = new ArrayList<>();
        for (int f = 0; f < files; f++) alloc.open("/faulty/f" + f).toCompletableFuture().get(30, TimeUnit.SECONDS);
        for (int b = 0; b < blocksEach; b++)
            for (int f = 0; f < files; f++)
                calls.add(alloc.getBlocks("/faulty/f" + f, b, 1, true).toCompletableFuture());
        CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);

        java.util.Set<Long> blocks = new java.util.HashSet<>();
        for (CompletableFuture<BlockRun> c : calls) {
            BlockRun run = c.join();
            assertEquals(1, run.blocks(), "each call got its block: " + run);
            assertTrue(blocks.add(run.physicalStart()), "no block given twice: " + run);
        }
        String listing = policies();
        assertTrue(listing.startsWith("[reservation] faulty-goal(failed: "), listing);
        assertTrue(listing.contains("goal") && listing.contains("faulty goal broke after"), listing);

        // The host goes on: the shell answers, and allocations keep being served by the default.
        assertTrue(shell(host, "blockyard:stats").contains("completed"));
        assertTrue(shell(host, "lb").contains("org.blockyard.plugin.faultygoal"));
        assertEquals(1, alloc.getBlocks("/faulty/f0", blocksEach, 1, true).toCompletableFuture()
                .get(30, TimeUnit.SECONDS).blocks());
        assertTrue(policies().startsWith("[reservation]"), policies());
    }

    private String schedulers() {
        return shellQuietly(host, "blockyard:scheduler").trim();
    }

    private String policies() {
        return shellQuietly(host, "blockyard:policy").trim();
    }
}
