package org.blockyard.runtime.io.elevator;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;

import org.blockyard.api.io.IoRequest;
import org.blockyard.runtime.io.ConstantLatencyDevice;
import org.blockyard.runtime.io.QueueSetup;
import org.blockyard.runtime.io.Simulation;
import org.junit.jupiter.api.Test;

/** The elevator's own behaviour; the queue's contract runs in the testkit (BuiltInElevatorContractTest). */
class NoopElevatorTest {
    private static final long MS = 1_000_000L;

    @Test
    void requestsAreIssuedInArrivalOrderWhateverTheirSectors() {
        Simulation sim = new Simulation(QueueSetup.defaults().withElevator("noop"),
                new ConstantLatencyDevice(1 << 20, MS));
        List<Long> order = new ArrayList<>();
        long[] sectors = {9000, 10, 5000, 20, 7000};
        for (int i = 0; i < sectors.length; i++)
            sim.submit(IoRequest.write(i, sectors[i], 8, 1), (c, e) -> order.add(c.sector()));
        sim.run();
        assertEquals(List.of(9000L, 10L, 5000L, 20L, 7000L), order);
    }
}
