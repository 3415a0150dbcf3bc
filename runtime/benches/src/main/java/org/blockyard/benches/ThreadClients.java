package org.blockyard.benches;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.function.Consumer;

/**
 * Load clients as plain threads, for the lock peers (global-lock, group-locks), which callers call on their own threads.
 * Also the one thing every measured run does before its clock starts.
 */
final class ThreadClients {
    private ThreadClients() {}

    /**
     * Collects the garbage of earlier runs (the warm-up's, the previous policy's) before the clock starts,
     * so a short run does not pay for it with a pause that is not its own.
     */
    static void quiesce() {
        System.gc();
    }

    /**
     * Runs each body on its own thread, all released at once, each recording into a latency of its own;
     * corrects each for coordinated omission as a closed-loop client (its own elapsed time over its own
     * calls), merges them into {@code all} and answers the wall time from release to the last thread's end.
     */
    static long runTogether(List<Consumer<Latency>> bodies, Latency all, String name) {
        CyclicBarrier start = new CyclicBarrier(bodies.size() + 1);
        List<Thread> threads = new ArrayList<>();
        List<Latency> latencies = new ArrayList<>();
        for (int i = 0; i < bodies.size(); i++) {
            Consumer<Latency> body = bodies.get(i);
            Latency l = new Latency();
            latencies.add(l);
            Thread t = new Thread(() -> {
                try {
                    start.await();
                } catch (Exception e) {
                    return;
                }
                long t0 = System.nanoTime();
                body.accept(l);
                l.correctClosedLoop(System.nanoTime() - t0, 1);
                AllocationMeter.threadEnds();
            }, name + "-" + i);
            threads.add(t);
            t.start();
        }
        try {
            quiesce();
            start.await();
            long t0 = System.nanoTime();
            for (Thread t : threads) t.join();
            long elapsed = System.nanoTime() - t0;
            for (Latency l : latencies) all.merge(l);
            return elapsed;
        } catch (Exception e) {
            throw new IllegalStateException(name + " run failed: " + e.getMessage(), e);
        }
    }
}
