package org.blockyard.runtime.io.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Map;

import org.blockyard.api.io.IoFlag;
import org.blockyard.api.io.IoRequest;
import org.blockyard.runtime.io.QueueSetup;
import org.blockyard.runtime.io.SimulatedDisk;
import org.blockyard.runtime.io.Simulation;
import org.blockyard.runtime.io.TraceEvents;
import org.blockyard.runtime.io.disk.DiskProfile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The queue's trace read back by the real blkparse has the event counts the queue reported. */
class QueueTraceTest {

    @Test
    void blkparseCountsTheEventsTheQueueReported(@TempDir Path dir) throws Exception {
        Blkparse.requireTools();
        Path file = dir.resolve("queue.trace");
        TraceEvents events;
        try (BlktraceWriter w = new BlktraceWriter(file, 8, 0)) {
            events = new TraceEvents(w);
            Simulation sim = new Simulation(QueueSetup.defaults().withEvents(events),
                    new SimulatedDisk(DiskProfile.default7200()));
            long id = 0;
            for (int i = 0; i < 64; i++) {
                IoRequest io = IoRequest.write(id++, 10_000 + 8L * i, 8, 1);
                sim.at(0, () -> sim.submit(io, (c, e) -> {}));
            }
            for (int i = 0; i < 8; i++) {
                IoRequest io = IoRequest.write(id++, 5_000 - 8L * i, 8, 2);    // descending: front merges
                sim.at(1_000, () -> sim.submit(io, (c, e) -> {}));
            }
            for (int i = 0; i < 6; i++) {
                IoRequest io = IoRequest.read(id++, 900_000 + 512L * i, 8, 3).with(IoFlag.AHEAD);
                sim.at(2_000 + i, () -> sim.submit(io, (c, e) -> {}));
            }
            IoRequest sync = IoRequest.write(id++, 64, 8, 4).with(IoFlag.SYNC);
            sim.at(3_000, () -> sim.submit(sync, (c, e) -> {}));
            IoRequest meta = IoRequest.write(id++, 128, 8, 4).with(IoFlag.META);
            sim.at(3_000, () -> sim.submit(meta, (c, e) -> {}));
            IoRequest flush = IoRequest.flush(id++, 4);
            sim.at(4_000, () -> sim.submit(flush, (c, e) -> {}));
            sim.run();
        }
        Map<Character, Long> parsed = Blkparse.actionCounts(file);
        assertTrue(events.reported(BlktraceAction.BACKMERGE) > 0 && events.reported(BlktraceAction.FRONTMERGE) > 0);
        assertEquals(events.reported(BlktraceAction.QUEUE), parsed.getOrDefault('Q', 0L));
        assertEquals(events.reported(BlktraceAction.BACKMERGE), parsed.getOrDefault('M', 0L));
        assertEquals(events.reported(BlktraceAction.FRONTMERGE), parsed.getOrDefault('F', 0L));
        assertEquals(events.reported(BlktraceAction.INSERT), parsed.getOrDefault('I', 0L));
        assertEquals(events.reported(BlktraceAction.ISSUE), parsed.getOrDefault('D', 0L));
        assertEquals(events.reported(BlktraceAction.COMPLETE), parsed.getOrDefault('C', 0L));
    }
}
