package org.blockyard.runtime.alloc;

import static org.blockyard.runtime.alloc.AllocatorChecks.await;
import static org.blockyard.runtime.alloc.AllocatorChecks.refused;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

import org.junit.jupiter.api.Test;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.AllocationPolicyFactory;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.api.alloc.PolicyDescriptor;

/**
 * Allocation policies chosen by name and switched while files are written: the built-in default and its
 * fallback, plugins that come and go, plugins that throw or answer the impossible, tunables.
 */
class PolicySwitchTest {
    private final Geometry geometry = Geometry.of(4096, 16 * 4096, 4096);

    /** A plugin policy: reservation's decisions with windows off, under another id, with {@code twist} applied to every goal. */
    private static AllocationPolicyFactory plugin(String id, Function<Long, Long> twist) {
        return new AllocationPolicyFactory() {
            @Override
            public PolicyDescriptor descriptor() {
                return new PolicyDescriptor(id, List.of(), "test plugin", List.of());
            }

            @Override
            public AllocationPolicy create(Geometry g, Map<String, Long> tunables) {
                AllocationPolicy base = ReservationPolicy.noReservation();
                return new AllocationPolicy() {
                    @Override public String id() { return id; }
                    @Override public int initialWindowBlocks() { return 0; }
                    @Override public int nextWindowBlocks(int p, long u, long w, int r, int d) {
                        return base.nextWindowBlocks(p, u, w, r, d);
                    }
                    @Override public int homeGroup(String file, Volume v) { return base.homeGroup(file, v); }
                    @Override public long goal(long l, long ll, long lp, long pp, int home, Volume v) {
                        return twist.apply(base.goal(l, ll, lp, pp, home, v));
                    }
                    @Override public long windowSearchStart(long goal, int w, GroupView g) {
                        return base.windowSearchStart(goal, w, g);
                    }
                };
            }
        };
    }

    /** An allocator with a plugin policy {@code windowless} (reservation windows off) registered beside the default. */
    private ActorBlockAllocator start() {
        ActorBlockAllocator a = ActorBlockAllocator.start(AllocatorSettings.of(geometry, ReservationPolicy.extended()));
        a.registerPolicy(plugin("windowless", goal -> goal));
        return a;
    }

    /** Appends {@code blocks} one at a time to each of {@code files}, all files at once; answers the blocks mapped. */
    private static long append(ActorBlockAllocator a, List<String> files, int from, int blocks) {
        List<CompletableFuture<Long>> writers = new ArrayList<>();
        for (String f : files)
            writers.add(CompletableFuture.supplyAsync(() -> {
                long n = 0;
                for (int l = from; l < from + blocks; l++) n += await(a.getBlocks(f, l, 1, true)).blocks();
                return n;
            }));
        return writers.stream().mapToLong(CompletableFuture::join).sum();
    }

    @Test
    void switchingPoliciesWhileFilesGrowLosesNothingAndGivesBackTheOldWindows() {
        try (ActorBlockAllocator a = start()) {
            List<String> files = List.of("/a", "/b", "/c", "/d");
            for (String f : files) await(a.open(f));
            CompletableFuture<Long> writing = CompletableFuture.supplyAsync(() -> append(a, files, 0, 300));
            List<String> seen = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                String next = i % 2 == 0 ? "windowless" : "reservation";
                var s = await(a.setPolicy(next));
                assertFalse(s.fellBack());
                seen.add(s.active());
            }
            assertEquals(1200, (long) writing.join(), "every getBlocks was served");
            assertEquals("reservation", a.policy());
            assertEquals("[reservation] windowless", a.policyListing());
            await(a.setPolicy("windowless"));
            for (String f : files) await(a.getBlocks(f, 300, 1, true));
            assertEquals(0, await(a.stats()).windows(), "windows made under reservation were given back");
            List<Extent> owned = new ArrayList<>();
            for (String f : files) owned.addAll(await(a.heldExtents(f)));
            AllocatorChecks.checkInvariants(a, owned);
            for (String f : files)
                assertEquals(301, await(a.fileExtents(f)).stream().mapToLong(Extent::blocks).sum(), f + " lost blocks");
        }
    }

    @Test
    void aMissingPolicyFallsBackToTheDefaultAndBecomesActiveWhenItsPluginArrives() {
        try (ActorBlockAllocator a = start()) {
            await(a.open("/f"));
            var s = await(a.setPolicy("first-fit"));
            assertTrue(s.fellBack(), "first-fit is not installed");
            assertEquals("reservation", s.active());

            a.registerPolicy(plugin("first-fit", goal -> goal));
            assertEquals("first-fit", a.policy(), "the selection was remembered by name");
            assertEquals("reservation windowless [first-fit]", a.policyListing());
            assertEquals(8, await(a.getBlocks("/f", 0, 8, true)).blocks());

            a.unregisterPolicy("first-fit"); // its bundle stops
            assertEquals("reservation", a.policy(), "the active plugin went away: back to the default");
            assertEquals(8, await(a.getBlocks("/f", 8, 8, true)).blocks());
            a.registerPolicy(plugin("first-fit", goal -> goal)); // the start half of an update
            assertEquals("first-fit", a.policy(), "it came back");
            assertThrows(IllegalArgumentException.class, () -> a.registerPolicy(plugin("first-fit", g -> g)),
                    "a duplicate id is refused");
            assertEquals("first-fit", a.policy(), "and nothing changed");
        }
    }

    @Test
    void aPluginThatThrowsIsRetiredForTheDefaultAndTheRequestIsServed() {
        try (ActorBlockAllocator a = start()) {
            a.registerPolicy(plugin("buggy", goal -> {
                throw new IllegalStateException("policy bug");
            }));
            await(a.setPolicy("buggy"));
            await(a.open("/f"));
            long free = await(a.freeBlocks());
            assertEquals(8, await(a.getBlocks("/f", 0, 8, true)).blocks(), "the request was served by the default");
            assertEquals("reservation", a.policy(), "the plugin was retired");
            assertTrue(a.policyListing().contains("buggy(failed: goal threw java.lang.IllegalStateException: policy bug)"),
                    a.policyListing());
            assertTrue(await(a.setPolicy("buggy")).fellBack(), "a retired plugin cannot be selected");
            AllocatorChecks.checkInvariants(a, await(a.heldExtents("/f")));
            assertEquals(free, await(a.freeBlocks()) + await(a.heldExtents("/f")).stream().mapToLong(Extent::blocks).sum());
        }
    }

    @Test
    void aPluginThatAnswersAGoalOffTheVolumeIsRetiredAndTheRequestIsServed() {
        try (ActorBlockAllocator a = start()) {
            a.registerPolicy(plugin("far", goal -> Long.MAX_VALUE / 2));
            await(a.setPolicy("far"));
            await(a.open("/f"));
            assertEquals(8, await(a.getBlocks("/f", 0, 8, true)).blocks());
            assertEquals("reservation", a.policy(), "the plugin was retired");
            assertTrue(a.policyListing().contains("far(failed: goal answered block"), a.policyListing());
        }
    }

    @Test
    void aPluginThatStallsIsRetiredAndTheRequestIsServed() {
        com.typesafe.config.Config config = com.typesafe.config.ConfigFactory
                .parseString("blockyard.alloc.policy-stall-limit = 50ms")
                .withFallback(org.blockyard.runtime.config.BlockyardConfig.load());
        try (ActorBlockAllocator a = ActorBlockAllocator.start(AllocatorSettings.of(geometry, ReservationPolicy.extended()),
                config)) {
            a.registerPolicy(plugin("slow", goal -> {
                try {
                    Thread.sleep(200);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return goal;
            }));
            await(a.setPolicy("slow"));
            await(a.open("/f"));
            assertEquals(8, await(a.getBlocks("/f", 0, 8, true)).blocks(), "the slow call's answer is used");
            assertEquals("reservation", a.policy(), "the plugin was retired");
            assertTrue(a.policyListing().contains("slow(failed: goal took"), a.policyListing());
            assertEquals(8, await(a.getBlocks("/f", 8, 8, true)).blocks());
        }
    }

    @Test
    void tunablesAreCheckedAndApplyToTheActivePolicy() {
        try (ActorBlockAllocator a = start()) {
            await(a.setPolicyTunable("reservation", "initial_window_blocks", 64));
            assertEquals(64L, a.policies().tunables("reservation").entrySet().stream()
                    .filter(e -> e.getKey().name().equals("initial_window_blocks")).findFirst().orElseThrow().getValue());
            refused(AllocationException.InvalidRequest.class, a.setPolicyTunable("reservation", "initial_window_blocks", -1));
            refused(AllocationException.InvalidRequest.class, a.setPolicyTunable("reservation", "no_such_knob", 1));
            refused(AllocationException.InvalidRequest.class, a.setPolicyTunable("nope", "x", 1));
            await(a.open("/f"));
            assertEquals(4, await(a.getBlocks("/f", 0, 4, true)).blocks());
        }
    }
}
