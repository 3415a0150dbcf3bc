package org.blockyard.runtime.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;

import org.blockyard.api.io.IoFlag;
import org.blockyard.api.io.IoRequest;
import org.blockyard.runtime.io.disk.DiskProfile;
import org.blockyard.runtime.io.trace.BlktraceWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DeterminismTest {

    /** Three clients on the simulated disk, their think times and places drawn from {@code seed}. */
    static long[] run(long seed, String elevator, Path trace) throws Exception {
        try (BlktraceWriter w = new BlktraceWriter(trace, 8, 0)) {
            TraceEvents events = new TraceEvents(w);
            Simulation sim = new Simulation(QueueSetup.defaults().withElevator(elevator).withEvents(events),
                    new SimulatedDisk(DiskProfile.default7200()));
            Random rnd = new Random(seed);
            long cap = sim.queue().capacitySectors();
            for (int client = 0; client < 3; client++) {
                long[] pos = {Math.floorMod(rnd.nextLong(), cap - 1_000_000) / 8 * 8};
                long[] left = {400};
                int owner = client;
                long[] ids = {client * 1_000_000L};
                Runnable[] next = new Runnable[1];
                next[0] = () -> {
                    if (left[0]-- <= 0) return;
                    IoRequest io = owner == 0 ? IoRequest.read(ids[0]++, pos[0], 8, owner)
                            : owner == 1 ? IoRequest.write(ids[0]++, pos[0], 8, owner)
                            : IoRequest.write(ids[0]++, pos[0], 8, owner).with(IoFlag.META);
                    pos[0] += rnd.nextInt(4) == 0 ? 4096 : 8;
                    long think = rnd.nextInt(2_000_000);
                    sim.submit(io, (c, e) -> sim.at(sim.nowNanos() + think, next[0]));
                };
                sim.at(rnd.nextInt(1_000_000), next[0]);
            }
            sim.run();
            return new long[] {sim.nowNanos(), sim.deviceBusyNanos(), sim.stats().requestsDispatched()};
        }
    }

    @Test
    void twoRunsWithOneSeedWriteByteIdenticalTraces(@TempDir Path dir) throws Exception {
        long[] a = run(42, "deadline", dir.resolve("a.trace"));
        long[] b = run(42, "deadline", dir.resolve("b.trace"));
        assertArrayEquals(a, b);
        byte[] ta = Files.readAllBytes(dir.resolve("a.trace"));
        assertTrue(ta.length > 10_000);
        assertArrayEquals(ta, Files.readAllBytes(dir.resolve("b.trace")));
        long[] c = run(43, "deadline", dir.resolve("c.trace"));
        assertNotEquals(a[0], c[0], "another seed is another run");
        assertEquals(1200, countQueued(dir.resolve("a.trace")) , "every submission traced once");
    }

    private static long countQueued(Path trace) throws Exception {
        // Q records: action code 1 with a category; notify records (category 0) carry a payload and are skipped
        byte[] t = Files.readAllBytes(trace);
        java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(t).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        long q = 0;
        while (b.remaining() >= 48) {
            int start = b.position();
            int action = b.getInt(start + 28);
            int pdu = Short.toUnsignedInt(b.getShort(start + 46));
            if ((action & 0xffff) == 1 && (action >>> 16) != 0 && pdu == 0) q++;
            b.position(start + 48 + pdu);
        }
        return q;
    }
}
