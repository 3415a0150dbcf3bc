package org.blockyard.plugin.cfq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.blockyard.api.io.IoException;
import org.blockyard.api.io.IoFlag;
import org.blockyard.api.io.IoRequest;
import org.blockyard.api.io.QueueLimits;
import org.blockyard.runtime.io.ConstantLatencyDevice;
import org.blockyard.runtime.io.ElevatorRegistry;
import org.blockyard.runtime.io.QueueEvents;
import org.blockyard.runtime.io.QueueSetup;
import org.blockyard.runtime.io.Request;
import org.blockyard.runtime.io.Simulation;
import org.junit.jupiter.api.Test;

/**
 * The cfq rules, each a scenario on the virtual clock with its exact dispatch order. The queue unplugs at
 * once, so only the elevator decides.
 */
class CfqElevatorTest {
    private static final long MS = 1_000_000L;

    /** "owner:sector@ms" for every request issued, in order ("m" after the owner marks META). */
    private final List<String> issued = new ArrayList<>();

    private Simulation simulation(Map<String, Long> tunables, long serviceNanos) {
        ElevatorRegistry registry = ElevatorRegistry.builtIn("deadline");
        registry.register(new CfqElevatorFactory());
        QueueSetup setup = new QueueSetup(registry, "cfq", Map.of("cfq", tunables), QueueLimits.DEFAULT,
                1, 0, new QueueEvents() {
                    @Override
                    public void issued(Request rq, long nowNanos) {
                        issued.add(rq.owner() + (rq.isMeta() ? "m" : "") + ":" + rq.sector() + "@" + nowNanos / MS);
                    }
                });
        return new Simulation(setup, new ConstantLatencyDevice(1L << 30, serviceNanos));
    }

    private static void read(Simulation sim, long atNanos, long owner, long sector, IoFlag... flags) {
        IoRequest io = IoRequest.read(owner * 1_000_000_000L + sector, sector, 8, owner);
        IoRequest r = flags.length == 0 ? io : io.with(flags[0]);
        sim.at(atNanos, () -> sim.submit(r, (c, e) -> {}));
    }

    private static Object stat(Simulation sim, String name) {
        return sim.stats().elevatorStats().get(name);
    }

    @Test
    public void aMetaReadPreemptsAQueueWithNoMetaPending() {
        Simulation sim = simulation(Map.of(), MS);
        for (int i = 0; i < 4; i++) read(sim, 0, 1, 100L * i);
        read(sim, MS / 2, 2, 900_000, IoFlag.META);
        sim.run();
        // owner 2's META read runs next; then the disk idles slice_idle (8 ms) for owner 2 before owner 1,
        // preempted to the front of the list, gets it back
        assertEquals(List.of("1:0@0", "2m:900000@1", "1:100@10", "1:200@11", "1:300@12"), issued);
        assertEquals(1L, stat(sim, "meta_preemptions"));
    }

    @Test
    public void aPlainReadOfAnotherOwnerWaitsForTheSlice() {
        Simulation sim = simulation(Map.of(), MS);
        for (int i = 0; i < 4; i++) read(sim, 0, 1, 100L * i);
        read(sim, MS / 2, 2, 900_000);
        sim.run();
        // no preemption: owner 1 runs dry at 4 ms, the disk idles 8 ms for it, then owner 2 gets a slice
        assertEquals(List.of("1:0@0", "1:100@1", "1:200@2", "1:300@3", "2:900000@12"), issued);
        assertEquals(0L, stat(sim, "preemptions"));
    }

    @Test
    public void inOneQueueMetaGoesBeforeOtherRequests() {
        Simulation sim = simulation(Map.of(), MS);
        sim.at(0, () -> {
            for (int i = 0; i < 4; i++) sim.submit(IoRequest.write(i, 1000 + 100L * i, 8, 1), (c, e) -> {});
            sim.submit(IoRequest.write(9, 500_000, 8, 2).with(IoFlag.META), (c, e) -> {});
        });
        sim.run();
        // one shared async queue: the META write of owner 2 goes right after the write already on the device
        assertEquals(List.of("1:1000@0", "2m:500000@1", "1:1100@2", "1:1200@3", "1:1300@4"), issued);
    }

    @Test
    public void aSliceExpiresAfterSliceSyncAndTheOtherOwnerRuns() {
        Simulation sim = simulation(Map.of("fifo_expire_sync", 10_000L), MS);
        for (int i = 0; i < 300; i++) {
            read(sim, 0, 1, 16L * i);
            read(sim, 0, 2, 5_000_000 + 16L * i);
        }
        sim.run();
        // owner 1's slice starts at its first dispatch (0 ms) and ends after 100 ms: its last request goes out
        // at 100 ms; owner 2 takes over at 101 ms for 100 ms; then owner 1 again
        assertEquals("1:1600@100", issued.get(100));
        assertEquals("2:5000000@101", issued.get(101));
        assertEquals("2:" + (5_000_000 + 16 * 100) + "@201", issued.get(201));
        assertEquals("1:1616@202", issued.get(202));
        assertTrue((long) stat(sim, "slices") >= 3);
    }

    @Test
    public void theAsyncQueueIssuesAtMostSixteenRequestsWhileASyncQueueWaits() {
        Simulation sim = simulation(Map.of(), MS);
        sim.at(0, () -> {
            for (int i = 0; i < 300; i++) sim.submit(IoRequest.read(i, 16L * i, 8, 1), (c, e) -> {});
            for (int i = 0; i < 100; i++) sim.submit(IoRequest.write(1000 + i, 8_000_000 + 16L * i, 8, 9), (c, e) -> {});
        });
        sim.run();
        // the reader's slice: 0..100 ms; the async queue: 2*(slice_async_rq + 3*slice_async_rq) = 16 requests;
        // then the reader again
        assertEquals("1:1600@100", issued.get(100));
        assertEquals("9:8000000@101", issued.get(101));
        assertEquals("9:" + (8_000_000 + 16 * 15) + "@116", issued.get(116));
        assertEquals("1:1616@117", issued.get(117));
    }

    @Test
    public void anExpiredRequestGoesFirstOncePerSlice() {
        Simulation sim = simulation(Map.of("slice_sync", 10_000L), 10 * MS);
        read(sim, 0, 1, 10_000_000);
        read(sim, MS, 1, 100);                      // far behind the head: the one-way elevator would wrap to it
        read(sim, MS, 1, 200_000_000);              // far ahead: last in elevator order
        for (int i = 1; i <= 20; i++) read(sim, MS, 1, 10_000_000 + 100L * i);
        sim.run();
        // both arrived at 1 ms and expire after fifo_expire_sync (125 ms). Sector 100 is taken out of order at
        // 130 ms; sector 200000000, expired at 140 ms too, is not: one expired request per slice
        assertEquals("1:10001200@120", issued.get(12));
        assertEquals("1:100@130", issued.get(13));
        assertEquals("1:10001300@140", issued.get(14));
        assertEquals("1:10002000@210", issued.get(21));
        assertEquals("1:200000000@220", issued.get(22));
        assertEquals(1L, stat(sim, "fifo_expired_served"));
    }

    @Test
    public void aBadTunableIsRefusedNamingItsUnitAndRangeAndTheRunningElevatorStays() {
        ElevatorRegistry registry = ElevatorRegistry.builtIn("deadline");
        registry.register(new CfqElevatorFactory());
        QueueSetup setup = new QueueSetup(registry, "deadline", Map.of("cfq", Map.of("slice_idle", -1L)),
                QueueLimits.DEFAULT, 1, 0, QueueEvents.NONE);
        Simulation sim = new Simulation(setup, new ConstantLatencyDevice(1L << 30, MS));
        IoException.InvalidTunable e = assertThrows(IoException.InvalidTunable.class, () -> sim.setElevator("cfq"));
        assertEquals("cfq.slice_idle = -1 is outside [0, 1000] ms", e.getMessage());
        assertEquals("deadline", sim.queue().elevatorId());
    }

    @Test
    public void everyTunableHasItsLinuxDefault() {
        assertEquals(Map.of("quantum", 4L, "fifo_expire_sync", 125L, "fifo_expire_async", 250L,
                        "back_seek_max", 16384L, "back_seek_penalty", 2L, "slice_sync", 100L, "slice_async", 40L,
                        "slice_async_rq", 2L, "slice_idle", 8L),
                CfqElevatorFactory.DESCRIPTOR.resolve(Map.of()));
    }
}
