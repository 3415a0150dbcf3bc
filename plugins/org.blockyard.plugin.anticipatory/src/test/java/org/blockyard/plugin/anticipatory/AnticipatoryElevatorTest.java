package org.blockyard.plugin.anticipatory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.blockyard.api.io.IoException;
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
 * The anticipatory rules, each a scenario on the virtual clock with its exact dispatch order. The device
 * takes 1 ms per request, one at a time; the queue unplugs at once, so only the elevator decides.
 */
class AnticipatoryElevatorTest {
    private static final long MS = 1_000_000L;

    /** "owner:sector@ms" for every request issued, in order. */
    private final List<String> issued = new ArrayList<>();

    private Simulation simulation(Map<String, Long> tunables) {
        ElevatorRegistry registry = ElevatorRegistry.builtIn("deadline");
        registry.register(new AnticipatoryElevatorFactory());
        QueueSetup setup = new QueueSetup(registry, "as", Map.of("anticipatory", tunables), QueueLimits.DEFAULT,
                1, 0, new QueueEvents() {
                    @Override
                    public void issued(Request rq, long nowNanos) {
                        issued.add(rq.owner() + ":" + rq.sector() + "@" + nowNanos / MS);
                    }
                });
        return new Simulation(setup, new ConstantLatencyDevice(1L << 30, MS));
    }

    private static void read(Simulation sim, long atNanos, long owner, long sector) {
        sim.at(atNanos, () -> sim.submit(IoRequest.read(owner * 1_000_000 + sector, sector, 8, owner), (c, e) -> {}));
    }

    private static Object stat(Simulation sim, String name) {
        return sim.stats().elevatorStats().get(name);
    }

    @Test
    public void theAliasAsSelectsIt() {
        Simulation sim = simulation(Map.of());
        assertEquals("anticipatory", sim.queue().elevatorId());
    }

    @Test
    public void aCloseRequestFromAnotherOwnerBreaksTheAnticipation() {
        Simulation sim = simulation(Map.of());
        read(sim, 0, 1, 1000);
        read(sim, 0, 2, 5_000_000);           // far away: not worth a seek while owner 1 may come back
        read(sim, 2 * MS, 3, 1016);           // close to where owner 1 left the head
        sim.run();
        // owner 1 done at 1 ms, the disk waits for it; owner 3's close read ends the wait at 2 ms; after it the
        // disk waits 6 ms (antic_expire) for owner 3 before seeking to owner 2
        assertEquals(List.of("1:1000@0", "3:1016@2", "2:5000000@9"), issued);
        assertEquals(1L, stat(sim, "anticipations_broken"));
        assertEquals(1L, stat(sim, "anticipations_timed_out"));
    }

    @Test
    public void anticipationTimesOutAfterAnticExpire() {
        Simulation sim = simulation(Map.of());
        read(sim, 0, 1, 1000);
        read(sim, 0, 2, 5_000_000);
        sim.run();
        assertEquals(List.of("1:1000@0", "2:5000000@7"), issued);
        assertEquals(1L, stat(sim, "anticipations_timed_out"));
    }

    @Test
    public void theOwnersOwnNextRequestIsServedAheadOfAnEarlierFarOne() {
        Simulation sim = simulation(Map.of());
        read(sim, 0, 1, 1000);
        read(sim, 0, 2, 5_000_000);
        read(sim, 3 * MS, 1, 1008);           // owner 1 thinks 2 ms, within antic_expire
        sim.run();
        assertEquals(List.of("1:1000@0", "1:1008@3", "2:5000000@10"), issued);
    }

    @Test
    public void anticExpireZeroIsDeadlineLike() {
        Simulation sim = simulation(Map.of("antic_expire", 0L));
        read(sim, 0, 1, 1000);
        read(sim, 0, 2, 5_000_000);
        read(sim, 3 * MS, 1, 1008);
        sim.run();
        assertEquals(List.of("1:1000@0", "2:5000000@1", "1:1008@3"), issued);
        assertEquals(0L, stat(sim, "anticipations"));
    }

    /** Owner 1 reads sequentially from {@code sector}, each read submitted when the last completes, until {@code untilNanos}. */
    private static void dependentReader(Simulation sim, long owner, long sector, long untilNanos) {
        long[] pos = {sector};
        Runnable[] next = new Runnable[1];
        next[0] = () -> {
            if (sim.nowNanos() >= untilNanos) return;
            long s = pos[0];
            pos[0] += 16;
            sim.submit(IoRequest.read(owner * 1_000_000_000L + s, s, 8, owner), (c, e) -> next[0].run());
        };
        sim.at(0, next[0]);
    }

    @Test
    public void anExpiredReadIsServedAheadOfTheElevatorOrder() {
        Simulation sim = simulation(Map.of("antic_expire", 0L));
        // a dependent reader ahead of the head keeps the one-way elevator busy; the read far behind it
        // (sector 8) expires at 125.5 ms, but the FIFO is looked at only once per read_expire (at 125 ms, too
        // early, then at 250 ms): no seek storm of expired requests
        dependentReader(sim, 1, 2_000_000, 300 * MS);
        read(sim, MS / 2, 2, 8);
        sim.run();
        int at = issued.indexOf("2:8@250");
        assertTrue(at > 0, issued.toString());
        assertEquals("1:" + (2_000_000 + 16L * 249) + "@249", issued.get(at - 1));
        assertEquals("1:" + (2_000_000 + 16L * 250) + "@251", issued.get(at + 1));
    }

    @Test
    public void writesWaitForTheReadBatchThenGetTheirOwn() {
        Simulation sim = simulation(Map.of());
        dependentReader(sim, 1, 1000, 700 * MS);
        sim.at(MS / 2, () -> {
            for (int i = 0; i < 64; i++)
                sim.submit(IoRequest.write(10_000_000 + i, 9_000_000 + 64L * i, 8, 2), (c, e) -> {});
        });
        sim.run();
        int firstWrite = -1;
        for (int i = 0; i < issued.size(); i++) if (issued.get(i).startsWith("2:")) { firstWrite = i; break; }
        // the read batch expires read_batch_expire (500 ms) after the last dispatch that saw no write waiting
        // (0 ms); the writes follow the read in flight at 500 ms, in sector order
        assertEquals("2:9000000@501", issued.get(firstWrite), issued.subList(firstWrite - 2, firstWrite + 2).toString());
        assertTrue(issued.subList(0, firstWrite).stream().allMatch(s -> s.startsWith("1:")));
    }

    @Test
    public void aBadTunableIsRefusedNamingItsUnitAndRangeAndTheRunningElevatorStays() {
        ElevatorRegistry registry = ElevatorRegistry.builtIn("deadline");
        registry.register(new AnticipatoryElevatorFactory());
        QueueSetup setup = new QueueSetup(registry, "deadline", Map.of("anticipatory", Map.of("antic_expire", 5000L)),
                QueueLimits.DEFAULT, 1, 0, QueueEvents.NONE);
        Simulation sim = new Simulation(setup, new ConstantLatencyDevice(1L << 30, MS));
        IoException.InvalidTunable e = assertThrows(IoException.InvalidTunable.class, () -> sim.setElevator("as"));
        assertEquals("anticipatory.antic_expire = 5000 is outside [0, 1000] ms", e.getMessage());
        assertEquals("deadline", sim.queue().elevatorId());
    }

    @Test
    public void everyTunableHasItsLinuxDefault() {
        Map<String, Long> d = AnticipatoryElevatorFactory.DESCRIPTOR.resolve(Map.of());
        assertEquals(Map.of("antic_expire", 6L, "read_expire", 125L, "write_expire", 250L,
                "read_batch_expire", 500L, "write_batch_expire", 125L), d);
        assertEquals(List.of("as"), AnticipatoryElevatorFactory.DESCRIPTOR.aliases());
    }
}
