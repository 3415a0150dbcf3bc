package org.blockyard.runtime.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.blockyard.api.io.IoCompletion;
import org.blockyard.api.io.IoException;
import org.blockyard.api.io.IoRequest;
import org.blockyard.api.io.QueueLimits;
import org.blockyard.runtime.io.dio.DioSegment;
import org.blockyard.runtime.io.dio.DirectIoSplitter;
import org.blockyard.runtime.io.disk.DiskProfile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class QueueTest {
    private static final long MS = 1_000_000L;

    @Test
    void anUnalignedMegabyteDirectWriteGoesOutInAtMostTenRequests() {
        List<DioSegment> segs = DirectIoSplitter.split(512, 1 << 20, 512, 4096);
        Simulation sim = new Simulation(QueueSetup.defaults(), new SimulatedDisk(DiskProfile.default7200()));
        for (int i = 0; i < segs.size(); i++) {
            DioSegment s = segs.get(i);
            IoRequest io = IoRequest.write(i, s.byteOffset() / 512, s.bytes() / 512, 1);
            sim.at(0, () -> sim.submit(io, (c, e) -> {}));
        }
        sim.run();
        assertEquals(segs.size(), sim.stats().submissions());
        assertEquals(257, segs.size(), "head, 255 pages, tail");
        assertTrue(sim.stats().requestsDispatched() <= 10, sim.stats().toString());
        assertEquals(2048, sim.stats().sectorsDispatched());
    }

    @Test
    void aSubmissionBeyondTheDeviceOrLargerThanMaxSectorsIsRefusedAndChangesNothing() {
        Simulation sim = new Simulation(QueueSetup.defaults(), new ConstantLatencyDevice(1000, MS));
        assertThrows(IoException.InvalidRequest.class, () -> sim.submit(IoRequest.write(1, 996, 8, 1), (c, e) -> {}));
        assertThrows(IoException.InvalidRequest.class, () -> sim.submit(IoRequest.write(2, 0, 257, 1), (c, e) -> {}));
        assertEquals(0, sim.stats().submissions());
        assertEquals(0, sim.queue().queuedRequests());
    }

    @Test
    void frontMergesJoinASubmissionBelowAQueuedRequest() {
        Simulation sim = new Simulation(QueueSetup.defaults(), new ConstantLatencyDevice(1 << 20, MS));
        sim.submit(IoRequest.write(0, 64, 8, 1), (c, e) -> {});
        sim.submit(IoRequest.write(1, 56, 8, 1), (c, e) -> {});
        sim.submit(IoRequest.write(2, 48, 8, 1), (c, e) -> {});
        sim.run();
        assertEquals(2, sim.stats().frontMerges());
        assertEquals(1, sim.stats().requestsDispatched());
    }

    @Test
    void aGapFilledLaterCoalescesTheRequestsOnEitherSide() {
        Simulation sim = new Simulation(QueueSetup.defaults(), new ConstantLatencyDevice(1 << 20, MS));
        sim.submit(IoRequest.write(0, 0, 8, 1), (c, e) -> {});
        sim.submit(IoRequest.write(1, 16, 8, 1), (c, e) -> {});
        sim.submit(IoRequest.write(2, 8, 8, 1), (c, e) -> {});
        sim.run();
        assertEquals(1, sim.stats().coalesced());
        assertEquals(1, sim.stats().requestsDispatched());
        assertEquals(24, sim.stats().maxRequestSectors());
    }

    @Test
    void theMemoryDeviceReadsBackWhatWasWrittenThroughTheActorQueue() throws Exception {
        byte[] data = new byte[64 * 1024];
        for (int i = 0; i < data.length; i++) data[i] = (byte) (i * 31);
        List<byte[]> back = new ArrayList<>();
        ActorQueueHarness.run(QueueSetup.defaults(), new MemoryDevice(1 << 24), q -> {
            List<IoRequest> writes = new ArrayList<>();
            for (int i = 0; i < 16; i++)
                writes.add(IoRequest.write(i, 100 + 8L * i, 8, 1).withPayload(ByteBuffer.wrap(data, i * 4096, 4096)));
            for (var st : q.submitAll(writes)) st.toCompletableFuture().join();
            ByteBuffer into = ByteBuffer.allocate(data.length);
            IoCompletion c = q.submit(IoRequest.read(99, 100, 128, 2).withPayload(into)).toCompletableFuture().join();
            assertEquals(128, c.requestSectors());
            back.add(into.array());
        });
        assertArrayEquals(data, back.get(0));
    }

    @Test
    void theFileDeviceWritesThroughTheQueueAndReadsBack(@TempDir Path dir) throws Exception {
        Path img = dir.resolve("disk.img");
        byte[] data = new byte[32 * 1024];
        for (int i = 0; i < data.length; i++) data[i] = (byte) (i * 7 + 3);
        ActorQueueHarness.run(QueueSetup.defaults(), new FileDevice(img, 1 << 20, false), q -> {
            List<IoRequest> writes = new ArrayList<>();
            for (int i = 0; i < 8; i++)
                writes.add(IoRequest.write(i, 8L * i, 8, 1).withPayload(ByteBuffer.wrap(data, i * 4096, 4096)));
            for (var st : q.submitAll(writes)) st.toCompletableFuture().join();
            q.submit(IoRequest.flush(100, 1)).toCompletableFuture().join();
        });
        byte[] onDisk = Files.readAllBytes(img);
        byte[] head = new byte[data.length];
        System.arraycopy(onDisk, 0, head, 0, data.length);
        assertArrayEquals(data, head);
    }

    @Test
    void limitsRefuseAMaxSectorsBelowOnePhysicalBlock() {
        assertThrows(IllegalArgumentException.class, () -> new QueueLimits(4, 512, 4096, 1));
        assertThrows(IllegalArgumentException.class, () -> new QueueLimits(256, 512, 4096, 0));
    }

    /** Answers a wake-up time already past once, then behaves like noop. */
    private static final class LateWaker implements org.blockyard.api.io.Elevator {
        final java.util.ArrayDeque<org.blockyard.api.io.BlockRequest> fifo = new java.util.ArrayDeque<>();
        boolean woke;

        @Override public void add(org.blockyard.api.io.BlockRequest r, long now) { fifo.add(r); }
        @Override public boolean allowMerge(org.blockyard.api.io.BlockRequest r, IoRequest s,
                                            org.blockyard.api.io.MergeKind k) { return true; }
        @Override public void merged(org.blockyard.api.io.BlockRequest r, org.blockyard.api.io.MergeKind k, long p) {}
        @Override public void mergedRequests(org.blockyard.api.io.BlockRequest r, org.blockyard.api.io.BlockRequest n,
                                             long p) { fifo.remove(n); }
        @Override public org.blockyard.api.io.Dispatch dispatch(long now) {
            if (fifo.isEmpty()) return org.blockyard.api.io.Dispatch.IDLE;
            if (!woke) {
                woke = true;
                return org.blockyard.api.io.Dispatch.wakeAt(now - 1);
            }
            return org.blockyard.api.io.Dispatch.issue(fifo.poll());
        }
        @Override public void completed(org.blockyard.api.io.BlockRequest r, long now) {}
        @Override public List<org.blockyard.api.io.BlockRequest> drainAll() {
            List<org.blockyard.api.io.BlockRequest> all = new ArrayList<>(fifo);
            fifo.clear();
            return all;
        }
        @Override public int queued() { return fifo.size(); }
        @Override public java.util.Map<String, Object> stats() { return java.util.Map.of(); }
    }

    @Test
    void aWakeUpTimeAlreadyPastIsServedAtOnce() {
        Simulation sim = new Simulation(QueueSetup.defaults().withPlugging(1, 0), new ConstantLatencyDevice(1 << 20, MS));
        LateWaker late = new LateWaker();
        sim.queue().switchTo(late, "late", 0);
        List<Long> issued = new ArrayList<>();
        sim.at(5 * MS, () -> sim.submit(IoRequest.read(1, 64, 8, 1), (c, e) -> issued.add(c.issuedNanos())));
        sim.run();
        assertTrue(late.woke);
        assertEquals(List.of(5 * MS), issued);
    }

    @Test
    void metaRequestsMoveBetweenTheQueuesLaneAndAnElevatorThatSchedulesThem() {
        Simulation sim = new Simulation(QueueSetup.defaults().withElevator("noop"), new ConstantLatencyDevice(1 << 20, MS));
        List<Long> order = new ArrayList<>();
        sim.submit(IoRequest.write(0, 0, 8, 1), (c, e) -> order.add(c.id()));                 // on the device
        for (int i = 1; i <= 3; i++)
            sim.submit(IoRequest.write(i, 10_000L * i, 8, 1), (c, e) -> order.add(c.id()));
        sim.submit(IoRequest.write(9, 500_000, 8, 2).with(org.blockyard.api.io.IoFlag.META), (c, e) -> order.add(c.id()));
        assertEquals(3, sim.stats().elevatorStats().get("queued"), "noop holds the bulk writes, the lane the META one");
        sim.setElevator("deadline");
        assertEquals(4, sim.stats().elevatorStats().get("write_queued"), "deadline takes the META write too");
        sim.run();
        assertEquals(List.of(0L, 1L, 2L, 3L, 9L), order, "deadline sorts META with the other writes");
    }
}
