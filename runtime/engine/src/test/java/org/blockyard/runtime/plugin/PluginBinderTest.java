package org.blockyard.runtime.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

import com.typesafe.config.Config;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.AllocationPolicyFactory;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.api.alloc.PolicyDescriptor;
import org.blockyard.api.io.BlockRequest;
import org.blockyard.api.io.Dispatch;
import org.blockyard.api.io.Elevator;
import org.blockyard.api.io.ElevatorDescriptor;
import org.blockyard.api.io.ElevatorFactory;
import org.blockyard.api.io.IoRequest;
import org.blockyard.api.io.MergeKind;
import org.blockyard.api.io.QueueLimits;
import org.blockyard.api.plugin.Tunable;
import org.blockyard.runtime.alloc.AllocatorBinding;
import org.blockyard.runtime.alloc.AllocatorSettings;
import org.blockyard.runtime.alloc.ReservationPolicy;
import org.blockyard.runtime.config.BlockyardConfig;
import org.blockyard.runtime.io.ActorBlockQueue;
import org.blockyard.runtime.io.IoSettings;
import org.blockyard.runtime.io.MemoryDevice;
import org.blockyard.runtime.io.QueueBinding;
import org.blockyard.runtime.io.elevator.NoopElevator;
import org.blockyard.runtime.store.FileStore;

/**
 * One binder's rules, run for both families on a real engine (a {@link FileStore}: the queue actor and the
 * allocator's actors): names another bundle holds, revisions, a plugin that comes back, configured tunables.
 */
class PluginBinderTest {
    private static final long WAIT_MILLIS = 10_000;
    private static final Tunable KNOB = new Tunable("knob", 1, 0, 100, "count", "a test plugin's only tunable");

    private static FileStore store;
    private final List<String> notices = Collections.synchronizedList(new ArrayList<>());

    /** One family's plugins and what the engine runs, as the tests ask. */
    interface Family<F, D> {
        PluginBinder.Target<F, D> target();

        /** A plugin {@code id} with tunable {@code knob}. */
        F plugin(String id, String... aliases);

        /** The id running now, answered by the engine. */
        String active();
    }

    static Stream<String> families() {
        return Stream.of("elevators", "policies");
    }

    private Family<?, ?> family(String name) {
        Config config = BlockyardConfig.load();
        IoSettings io = IoSettings.fromConfig(config);
        Geometry g = Geometry.of(4096, 4 * 4096, 4096);
        store = FileStore.start(AllocatorSettings.of(g, ReservationPolicy.extended()), io, new MemoryDevice(g.bytes()), config);
        if (name.equals("elevators")) return new Elevators(new QueueBinding((ActorBlockQueue) store.queue(), io.setup().registry()));
        return new Policies(new AllocatorBinding(store.allocator()));
    }

    @AfterEach
    void closeStore() {
        if (store != null) store.close();
        store = null;
    }

    private <F, D> PluginBinder<F, D> binder(Family<F, D> f, String selected) {
        return new PluginBinder<>(f.target(), new PluginBinder.Notices() {
            @Override public void info(String line) { notices.add(line); }
            @Override public void warn(String line) { notices.add("WARN " + line); }
        }, selected);
    }

    private static PluginBinder.Source bundle(String symbolicName, String version) {
        return new PluginBinder.Source(symbolicName, symbolicName + " " + version);
    }

    private static void eventually(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MILLIS);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) throw new AssertionError("not within " + WAIT_MILLIS + " ms: " + what);
            Thread.sleep(10);
        }
    }

    private boolean noticed(String... parts) {
        synchronized (notices) {
            return notices.stream().anyMatch(l -> Stream.of(parts).allMatch(l::contains));
        }
    }

    @ParameterizedTest
    @MethodSource("families")
    void aNameAnotherBundleHoldsIsRefusedNamingBothAndItsDepartureChangesNothing(String name) throws Exception {
        run(family(name), (f, b) -> {
            var first = b.add(f.plugin("first", "one"), bundle("org.example.first", "1.0.0"));
            assertNotNull(first);
            assertNull(b.add(f.plugin("twin", "one"), bundle("org.example.twin", "1.0.0")), "its alias is taken");
            assertTrue(noticed("WARN", "'twin' of bundle org.example.twin 1.0.0 refused", "'one' is already provided by "
                    + "bundle org.example.first 1.0.0"), notices::toString);
            assertNull(b.add(f.plugin(f.target().registry().defaultId()), bundle("org.example.shadow", "1.0.0")));
            assertTrue(noticed("WARN", "is a built-in"), notices::toString);
            assertEquals(List.of("first"), b.plugins());
            eventually("first registered", () -> f.target().registry().resolve("one").isPresent());
        });
    }

    @ParameterizedTest
    @MethodSource("families")
    void aRevisionOfTheSameBundleReplacesTheOneItUpdatesAndTheOldOnesDepartureChangesNothing(String name) throws Exception {
        run(family(name), (f, b) -> {
            var older = b.add(f.plugin("next"), bundle("org.example.next", "1.0.0"));
            b.select("next");
            eventually("next selected", () -> f.active().equals("next"));
            var newer = b.add(f.plugin("next"), bundle("org.example.next", "1.0.1")); // before the older leaves
            assertNotNull(newer);
            b.remove(older);
            assertTrue(noticed("next available", "in place of the one of bundle org.example.next 1.0.0"), notices::toString);
            assertTrue(noticed("next of bundle org.example.next 1.0.0 went away, already replaced"), notices::toString);
            eventually("the newer next selected", () -> f.active().equals("next"));
            assertEquals(List.of("next"), b.plugins());
        });
    }

    @ParameterizedTest
    @MethodSource("families")
    void theSelectedPluginFallsBackWhileItIsAwayAndIsSelectedAgainWhenItComesBack(String name) throws Exception {
        run(family(name), (f, b) -> {
            String fallback = f.target().registry().defaultId();
            b.select("later");                                    // not installed yet: the default runs
            eventually("the default", () -> f.active().equals(fallback));
            var first = b.add(f.plugin("later"), bundle("org.example.later", "1.0.0"));
            eventually("later selected on arrival", () -> f.active().equals("later"));
            b.remove(first);                                      // its bundle stops (an update, a restart)
            eventually("the default while it is away", () -> f.active().equals(fallback));
            assertTrue(noticed("WARN", "later went away", "falls back to its default, " + fallback
                    + ", until a bundle offers later again"), notices::toString);
            b.add(f.plugin("later"), bundle("org.example.later", "1.0.1"));
            eventually("later selected again", () -> f.active().equals("later"));
            eventually("said so", () -> noticed("later selected: it answers to the selection, later"));
        });
    }

    @ParameterizedTest
    @MethodSource("families")
    void configuredTunablesReachAPluginWhenItArrivesAndGoBackWhenNoLongerConfigured(String name) throws Exception {
        run(family(name), (f, b) -> {
            b.configure(Map.of("tuned", Map.of("knob", 7L)));      // configured before the plugin is there
            b.add(f.plugin("tuned"), bundle("org.example.tuned", "1.0.0"));
            eventually("knob 7", () -> knob(f, "tuned") == 7);
            b.configure(Map.of("tuned", Map.of("knob", 9L)));
            eventually("knob 9", () -> knob(f, "tuned") == 9);
            b.configure(Map.of("tuned", Map.of("knob", 500L)));    // out of range: refused, the value stays
            eventually("the refusal", () -> noticed("WARN", "tuned: knob = 500 not set"));
            assertEquals(9, knob(f, "tuned"));
            b.configure(Map.of());
            eventually("knob back to its default", () -> knob(f, "tuned") == 1);
        });
    }

    private static long knob(Family<?, ?> f, String id) {
        return f.target().registry().runTimeValues(id).getOrDefault("knob", KNOB.defaultValue());
    }

    private interface Scenario<F, D> {
        void run(Family<F, D> family, PluginBinder<F, D> binder) throws Exception;
    }

    @SuppressWarnings("unchecked")
    private <F, D> void run(Family<?, ?> family, Scenario<F, D> scenario) throws Exception {
        Family<F, D> f = (Family<F, D>) family;
        scenario.run(f, binder(f, null));
    }

    // ---- the two families ----

    private record Elevators(QueueBinding target) implements Family<ElevatorFactory, ElevatorDescriptor> {
        @Override
        public ElevatorFactory plugin(String id, String... aliases) {
            ElevatorDescriptor d = new ElevatorDescriptor(id, List.of(aliases), "a test plugin", List.of(KNOB));
            return new ElevatorFactory() {
                @Override public ElevatorDescriptor descriptor() { return d; }
                @Override public Elevator create(QueueLimits limits, Map<String, Long> tunables) {
                    return new Knobbed(tunables.get("knob"));
                }
            };
        }

        @Override
        public String active() {
            return store.queue().activeElevator().toCompletableFuture().join();
        }
    }

    /** Noop with a knob it reports. */
    private static final class Knobbed implements Elevator {
        private final NoopElevator noop = new NoopElevator();
        private final long knob;

        Knobbed(long knob) {
            this.knob = knob;
        }

        @Override public void add(BlockRequest request, long nowNanos) { noop.add(request, nowNanos); }
        @Override public boolean allowMerge(BlockRequest r, IoRequest s, MergeKind k) { return noop.allowMerge(r, s, k); }
        @Override public void merged(BlockRequest r, MergeKind k, long p) { noop.merged(r, k, p); }
        @Override public void mergedRequests(BlockRequest r, BlockRequest n, long p) { noop.mergedRequests(r, n, p); }
        @Override public Dispatch dispatch(long nowNanos) { return noop.dispatch(nowNanos); }
        @Override public void completed(BlockRequest request, long nowNanos) { noop.completed(request, nowNanos); }
        @Override public List<BlockRequest> drainAll() { return noop.drainAll(); }
        @Override public int queued() { return noop.queued(); }
        @Override public Map<String, Object> stats() { return Map.of("knob", knob); }
    }

    private record Policies(AllocatorBinding target) implements Family<AllocationPolicyFactory, PolicyDescriptor> {
        @Override
        public AllocationPolicyFactory plugin(String id, String... aliases) {
            PolicyDescriptor d = new PolicyDescriptor(id, List.of(aliases), "a test plugin", List.of(KNOB));
            return new AllocationPolicyFactory() {
                @Override public PolicyDescriptor descriptor() { return d; }
                @Override public AllocationPolicy create(Geometry geometry, Map<String, Long> tunables) {
                    return renamed(id, ReservationPolicy.ext3());
                }
            };
        }

        @Override
        public String active() {
            return store.allocator().policy();
        }
    }

    /** {@code base}'s decisions under another id. */
    private static AllocationPolicy renamed(String id, AllocationPolicy base) {
        return new AllocationPolicy() {
            @Override public String id() { return id; }
            @Override public int initialWindowBlocks() { return base.initialWindowBlocks(); }
            @Override public int nextWindowBlocks(int p, long u, long w, int r, int d) {
                return base.nextWindowBlocks(p, u, w, r, d);
            }
            @Override public int homeGroup(String file, Volume v) { return base.homeGroup(file, v); }
            @Override public long goal(long l, long ll, long lp, long pp, int home, Volume v) {
                return base.goal(l, ll, lp, pp, home, v);
            }
            @Override public long windowSearchStart(long goal, int w, GroupView g) { return base.windowSearchStart(goal, w, g); }
        };
    }
}
