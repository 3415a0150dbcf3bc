package org.blockyard.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import org.blockyard.api.io.ElevatorFactory;
import org.blockyard.api.io.IoFlag;
import org.blockyard.api.io.IoOp;
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
 * What every elevator must do inside a queue, run on the virtual clock: every submission completed once and
 * issued in one request, merges within the limits and never of different kinds, nothing across a FLUSH,
 * SYNC and META ahead of bulk data, and switching to and from it under load losing nothing. An elevator's
 * test extends this class and names its factory; the built-in elevators' tests do the same in this module.
 *
 * <pre>{@code
 * class MyElevatorContractTest extends ElevatorContract {
 *     @Override protected ElevatorFactory factory() { return new MyElevatorFactory(); }
 * }
 * }</pre>
 */
public abstract class ElevatorContract {
    protected static final long MS = 1_000_000L;

    /** The elevator under test. */
    protected abstract ElevatorFactory factory();

    /** A built-in elevator other than the one under test, for switching back and forth. */
    protected String otherElevator() {
        return factory().descriptor().id().equals("noop") ? "deadline" : "noop";
    }

    protected QueueSetup setup(QueueLimits limits) {
        ElevatorRegistry registry = ElevatorRegistry.builtIn("deadline");
        if (registry.resolve(factory().descriptor().id()).isEmpty()) registry.register(factory());
        return new QueueSetup(registry, factory().descriptor().id(), Map.of(), limits, 4, 3 * MS, QueueEvents.NONE);
    }

    /** Records every issued request and every completion of a run. */
    protected static final class Recorder implements QueueEvents {
        final List<Request> issued = new ArrayList<>();
        final Map<Long, Long> issuedAt = new HashMap<>();
        final Map<Long, Integer> completions = new HashMap<>();
        final Map<Long, Long> completedAt = new HashMap<>();
        final List<IoRequest> submitted = new ArrayList<>();

        @Override
        public void issued(Request rq, long nowNanos) {
            issued.add(rq);
            for (Request.Bio b : rq.bios()) issuedAt.put(b.io().id(), nowNanos);
        }

        void done(IoRequest io, long nowNanos) {
            completions.merge(io.id(), 1, Integer::sum);
            completedAt.put(io.id(), nowNanos);
        }
    }

    private Simulation simulation(Recorder rec, QueueLimits limits, long serviceNanos) {
        return new Simulation(setup(limits).withEvents(rec), new ConstantLatencyDevice(1 << 24, serviceNanos));
    }

    private void submit(Simulation sim, Recorder rec, IoRequest io) {
        rec.submitted.add(io);
        sim.submit(io, (c, e) -> {
            assertNull(e, "submission " + io.id() + " failed");
            assertEquals(io.id(), c.id());
            rec.done(io, sim.nowNanos());
        });
    }

    /** A random mix: runs of contiguous 4 KiB submissions, both directions, flags, now and then a FLUSH. */
    private void randomLoad(Simulation sim, Recorder rec, long seed, int count, Runnable everyStep) {
        Random rnd = new Random(seed);
        long t = 0;
        long[] cursor = new long[8];
        for (int i = 0; i < 8; i++) cursor[i] = rnd.nextInt(1 << 20) * 8L;
        for (int i = 0; i < count; i++) {
            t += rnd.nextInt(3) * 100_000L;
            long id = i;
            int stream = rnd.nextInt(8);
            IoRequest io;
            int r = rnd.nextInt(100);
            if (r < 2) {
                io = IoRequest.flush(id, stream);
            } else {
                IoOp op = stream < 4 ? IoOp.READ : IoOp.WRITE;
                EnumSet<IoFlag> flags = EnumSet.noneOf(IoFlag.class);
                if (r < 10) flags.add(IoFlag.SYNC);
                else if (r < 20) flags.add(IoFlag.META);
                else if (r < 24 && op == IoOp.READ) flags.add(IoFlag.AHEAD);
                long sector = rnd.nextInt(10) == 0 ? cursor[stream] - 8 : cursor[stream];
                if (sector < 0) sector = 0;
                io = new IoRequest(id, sector, 8, op, flags, stream, null);
                cursor[stream] = sector + 8;
            }
            IoRequest fixed = io;
            sim.at(t, () -> {
                submit(sim, rec, fixed);
                everyStep.run();
            });
        }
        sim.run();
    }

    @Test
    public void everySubmissionCompletesExactlyOnceAndIsIssuedInOneRequest() {
        Recorder rec = new Recorder();
        Simulation sim = simulation(rec, QueueLimits.DEFAULT, 2 * MS);
        randomLoad(sim, rec, 7, 3000, () -> {});
        assertEquals(3000, rec.submitted.size());
        for (IoRequest io : rec.submitted)
            assertEquals(1, rec.completions.getOrDefault(io.id(), 0), "completions of " + io.id());
        Set<Long> seen = new HashSet<>();
        for (Request rq : rec.issued)
            for (Request.Bio b : rq.bios()) assertTrue(seen.add(b.io().id()), b.io().id() + " issued twice");
        assertEquals(3000, seen.size());
        assertEquals(0, sim.queue().queuedRequests());
        assertEquals(0, sim.queue().inFlight());
    }

    @Test
    public void mergedRequestsStayWithinMaxSectorsAndNeverMixKinds() {
        Recorder rec = new Recorder();
        QueueLimits limits = new QueueLimits(64, 512, 4096, 1);
        Simulation sim = simulation(rec, limits, 2 * MS);
        randomLoad(sim, rec, 11, 3000, () -> {});
        boolean anyMerge = false;
        for (Request rq : rec.issued) {
            assertTrue(rq.sectors() <= 64, rq + " exceeds max_sectors");
            long next = rq.sector();
            for (Request.Bio b : rq.bios()) {
                IoRequest io = b.io();
                assertEquals(rq.op(), io.op(), rq + " mixes ops");
                assertEquals(rq.isMeta(), io.has(IoFlag.META), rq + " mixes META and bulk");
                assertEquals(rq.flags().contains(IoFlag.AHEAD), io.has(IoFlag.AHEAD), rq + " mixes read-ahead");
                assertEquals(next, io.sector(), rq + " has a gap or overlap");
                next = io.endSector();
            }
            assertEquals(rq.endSector(), next);
            if (rq.bios().size() > 1) {
                anyMerge = true;
                assertTrue(rq.bios().stream().noneMatch(b -> b.io().has(IoFlag.SYNC)), rq + " merged a SYNC submission");
            }
        }
        assertTrue(anyMerge, "the load should have produced merges");
    }

    @Test
    public void nothingCrossesAFlush() {
        Recorder rec = new Recorder();
        Simulation sim = simulation(rec, new QueueLimits(256, 512, 4096, 4), 2 * MS);
        randomLoad(sim, rec, 13, 3000, () -> {});
        List<IoRequest> all = rec.submitted;
        int flushes = 0;
        for (int i = 0; i < all.size(); i++) {
            if (all.get(i).op() != IoOp.FLUSH) continue;
            flushes++;
            long flushIssued = rec.issuedAt.get(all.get(i).id());
            long flushDone = rec.completedAt.get(all.get(i).id());
            for (int j = 0; j < i; j++)
                assertTrue(rec.completedAt.get(all.get(j).id()) <= flushIssued,
                        all.get(j) + " completed after the later FLUSH was issued");
            for (int j = i + 1; j < all.size(); j++)
                assertTrue(rec.issuedAt.get(all.get(j).id()) >= flushDone,
                        all.get(j) + " was issued before the earlier FLUSH completed");
        }
        assertTrue(flushes > 10);
    }

    @Test
    public void aSyncWriteIsIssuedAheadOfQueuedBulkData() {
        Recorder rec = new Recorder();
        Simulation sim = simulation(rec, QueueLimits.DEFAULT, 5 * MS);
        for (int i = 0; i < 20; i++) submit(sim, rec, IoRequest.write(i, 100_000 + i * 64L, 8, 1));
        submit(sim, rec, IoRequest.read(100, 500_000, 8, 2));
        submit(sim, rec, IoRequest.write(200, 10, 8, 3).with(IoFlag.SYNC));
        sim.run();
        Request first = rec.issued.get(0);
        assertEquals(0L, first.bios().get(0).io().id(), "the first write went out before the log write arrived");
        assertEquals(200L, rec.issued.get(1).bios().get(0).io().id(), "the SYNC write must be next");
    }

    @Test
    public void metaRequestsMergeAndGoAheadOfBulkDataUnlessTheElevatorSchedulesThem() {
        Recorder rec = new Recorder();
        Simulation sim = simulation(rec, QueueLimits.DEFAULT, 5 * MS);
        for (int i = 0; i < 20; i++) submit(sim, rec, IoRequest.write(i, 100_000 + i * 64L, 8, 1));
        for (int i = 0; i < 4; i++) submit(sim, rec, IoRequest.write(300 + i, 8 + 8L * i, 8, 2).with(IoFlag.META));
        for (int i = 0; i < 4; i++) submit(sim, rec, IoRequest.read(400 + i, 900_000 + 64L * i, 8, 3));
        sim.run();
        Request metaRq = rec.issued.stream().filter(Request::isMeta).findFirst().orElseThrow();
        if (!factory().create(QueueLimits.DEFAULT, factory().descriptor().resolve(Map.of())).schedulesMeta())
            assertEquals(metaRq, rec.issued.get(1),
                    "after the request already on the device, the queue's META lane goes first: " + rec.issued);
        assertEquals(4, metaRq.submissions(), "the four adjacent META writes merged into one request");
        assertEquals(32, metaRq.sectors());
        assertEquals(1, rec.issued.stream().filter(Request::isMeta).count());
    }

    @Test
    public void contiguousSubmissionsMergeIntoFullRequestsOfMaxSectors() {
        Recorder rec = new Recorder();
        Simulation sim = simulation(rec, QueueLimits.DEFAULT, 2 * MS);
        for (int i = 0; i < 256; i++) submit(sim, rec, IoRequest.write(i, 8L * i, 8, 1));
        sim.run();
        assertEquals(8, rec.issued.size(), rec.issued.toString());
        for (Request rq : rec.issued) assertEquals(256, rq.sectors());
        assertEquals(256, sim.stats().maxRequestSectors());
        assertEquals(248, sim.stats().merges());
    }

    @Test
    public void readsAndWritesOfAdjacentSectorsAreNeverMerged() {
        Recorder rec = new Recorder();
        Simulation sim = simulation(rec, QueueLimits.DEFAULT, 2 * MS);
        submit(sim, rec, IoRequest.write(0, 800, 8, 1));
        submit(sim, rec, IoRequest.write(1, 0, 8, 1));
        submit(sim, rec, IoRequest.read(2, 8, 8, 1));
        submit(sim, rec, IoRequest.write(3, 16, 8, 1).with(IoFlag.META));
        submit(sim, rec, IoRequest.write(4, 24, 8, 1));
        sim.run();
        assertEquals(5, rec.issued.size());
        assertEquals(0, sim.stats().merges());
    }

    @Test
    public void handingOverToAFreshInstanceMovesEveryQueuedRequest() {
        Recorder rec = new Recorder();
        Simulation sim = simulation(rec, QueueLimits.DEFAULT, 5 * MS);
        for (int i = 0; i < 50; i++) submit(sim, rec, IoRequest.write(i, 1000L * i, 8, 1));
        int queued = sim.queue().queuedRequests();
        int moved = sim.queue().switchTo(factory().create(QueueLimits.DEFAULT,
                factory().descriptor().resolve(Map.of())), factory().descriptor().id(), sim.nowNanos());
        assertEquals(queued, moved);
        sim.run();
        assertEquals(50, rec.completions.size());
        assertTrue(rec.completions.values().stream().allMatch(n -> n == 1));
    }

    @Test
    public void switchingAHundredTimesUnderLoadLosesNothing() {
        Recorder rec = new Recorder();
        Simulation sim = simulation(rec, new QueueLimits(256, 512, 4096, 2), 1 * MS);
        String self = factory().descriptor().id();
        int[] switches = {0};
        int[] steps = {0};
        randomLoad(sim, rec, 17, 4000, () -> {
            if (++steps[0] % 40 == 0 && switches[0] < 100) {
                sim.setElevator(switches[0] % 2 == 0 ? otherElevator() : self);
                switches[0]++;
            }
        });
        assertEquals(100, switches[0]);
        Set<Long> seen = new HashSet<>();
        for (Request rq : rec.issued)
            for (Request.Bio b : rq.bios()) assertTrue(seen.add(b.io().id()), b.io().id() + " issued twice");
        assertEquals(4000, seen.size());
        assertTrue(rec.completions.values().stream().allMatch(n -> n == 1));
        assertEquals(4000, rec.completions.size());
    }
}
