package org.blockyard.runtime.io.elevator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.blockyard.api.io.IoRequest;
import org.blockyard.runtime.io.ConstantLatencyDevice;
import org.blockyard.runtime.io.QueueSetup;
import org.blockyard.runtime.io.Simulation;
import org.junit.jupiter.api.Test;

/** The elevator's own behaviour; the queue's contract runs in the testkit (BuiltInElevatorContractTest). */
class DeadlineElevatorTest {
    private static final long MS = 1_000_000L;

    private static Simulation deadline() {
        return new Simulation(QueueSetup.defaults().withElevator("deadline"), new ConstantLatencyDevice(1 << 24, 10 * MS));
    }

    @Test
    void defaultsAreThoseOfLinux() {
        Map<String, Long> t = DeadlineElevator.DESCRIPTOR.resolve(Map.of());
        assertEquals(Map.of("read_expire", 500L, "write_expire", 5000L, "writes_starved", 2L, "fifo_batch", 16L,
                "front_merges", 1L), t);
    }

    @Test
    void queuedRequestsGoOutInAscendingSectorOrder() {
        Simulation sim = deadline();
        List<Long> order = new ArrayList<>();
        sim.submit(IoRequest.read(0, 1, 1, 1), (c, e) -> order.add(c.sector()));
        long[] sectors = {9000, 100, 5000, 200, 7000};
        for (int i = 0; i < sectors.length; i++)
            sim.submit(IoRequest.read(i + 1, sectors[i], 8, 1), (c, e) -> order.add(c.sector()));
        sim.run();
        assertEquals(List.of(1L, 100L, 200L, 5000L, 7000L, 9000L), order);
    }

    @Test
    void anExpiredReadIsServedOutOfSortOrderWithinOneServiceTime() {
        Simulation sim = deadline();
        long[] issuedA = {-1};
        List<Long> before = new ArrayList<>();
        // a streaming reader ahead of the head: two new reads every 10 ms, always above the last one issued
        for (int i = 0; i < 200; i++) {
            long id = i;
            long sector = 100_000 + 64L * i;
            sim.at(5 * MS * i, () -> sim.submit(IoRequest.read(id, sector, 8, 1), (c, e) -> {
                if (issuedA[0] < 0) before.add(c.sector());
            }));
        }
        // one read far behind the head, submitted at 20 ms: expires at 520 ms
        sim.at(20 * MS, () -> sim.submit(IoRequest.read(1000, 8, 8, 2), (c, e) -> issuedA[0] = c.issuedNanos()));
        sim.run();
        assertTrue(issuedA[0] >= 520 * MS, "served before its deadline, at " + issuedA[0]);
        assertTrue(issuedA[0] <= 530 * MS, "served more than one service time after its deadline, at " + issuedA[0]);
        assertTrue(before.size() > 40, "the stream above it went first");
    }

    @Test
    void writesGetATurnOnceReadsWerePickedWritesStarvedTimes() {
        Simulation sim = new Simulation(QueueSetup.defaults().withElevator("deadline")
                .withTunable("deadline", "fifo_batch", 1), new ConstantLatencyDevice(1 << 24, 10 * MS));
        List<String> order = new ArrayList<>();
        sim.submit(IoRequest.read(99, 0, 8, 1), (c, e) -> order.add("R"));
        for (int i = 0; i < 6; i++) {
            sim.submit(IoRequest.read(i, 1000 + 100L * i, 8, 1), (c, e) -> order.add("R"));
            sim.submit(IoRequest.write(10 + i, 50_000 + 100L * i, 8, 1), (c, e) -> order.add("W"));
        }
        sim.run();
        assertEquals("RRWRRWRRWRWWW", String.join("", order));
    }
}
