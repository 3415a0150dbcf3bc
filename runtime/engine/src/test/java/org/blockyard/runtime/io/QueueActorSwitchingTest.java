package org.blockyard.runtime.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

import org.blockyard.api.io.ElevatorSwitch;
import org.blockyard.api.io.IoCompletion;
import org.blockyard.api.io.IoRequest;
import org.blockyard.api.io.QueueStats;
import org.junit.jupiter.api.Test;

class QueueActorSwitchingTest {

    @Test
    void switchingAHundredTimesWhileSubmissionsFlowLosesNothingAndIssuesNothingTwice() {
        Map<Long, Integer> completions = new ConcurrentHashMap<>();
        List<ElevatorSwitch> switches = new ArrayList<>();
        QueueStats[] stats = new QueueStats[1];
        ActorQueueHarness.run(QueueSetup.defaults(), new MemoryDevice(1L << 26), q -> {
            List<CompletionStage<IoCompletion>> all = new ArrayList<>();
            long id = 0;
            for (int round = 0; round < 100; round++) {
                List<IoRequest> batch = new ArrayList<>();
                for (int i = 0; i < 60; i++, id++) {
                    long sector = (id * 7919 % 8000) * 8;            // scattered, with contiguous neighbours
                    batch.add(id % 3 == 0 ? IoRequest.read(id, sector, 8, round) : IoRequest.write(id, sector, 8, round));
                }
                all.addAll(q.submitAll(batch));
                switches.add(q.setElevator(round % 2 == 0 ? "noop" : "deadline").toCompletableFuture().join());
            }
            for (CompletionStage<IoCompletion> st : all)
                st.thenAccept(c -> completions.merge(c.id(), 1, Integer::sum));
            CompletableFuture.allOf(all.stream().map(CompletionStage::toCompletableFuture)
                    .toArray(CompletableFuture[]::new)).join();
            stats[0] = q.stats().toCompletableFuture().join();
        });
        assertEquals(100, switches.size());
        assertEquals("deadline", switches.get(99).active());
        assertEquals(6000, completions.size());
        assertTrue(completions.values().stream().allMatch(n -> n == 1));
        assertEquals(6000, stats[0].completed());
        assertTrue(switches.stream().anyMatch(s -> s.movedRequests() > 0), "some switches should have moved queued requests");
    }
}
