package org.blockyard.benches.job;

import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import org.blockyard.api.io.IoRequest;
import org.blockyard.runtime.io.Simulation;

/**
 * The clones of the {@code ioengine=queue} jobs on the simulated disk: each a chain of completion callbacks
 * in the event loop's virtual time (an actor's messages cannot wait on a virtual clock), doing what
 * {@link IoClient} does: send what the free slots may, and on each completion record it and send again, after
 * the think time. A submission's hand-over costs no virtual time, so there is no submission latency here.
 */
final class SimClients {
    private SimClients() {}

    /** Schedules every clone's start; {@code failure} receives the first error a completion carried. */
    static void start(Simulation sim, List<IoLoad> loads, AtomicReference<Throwable> failure) {
        for (IoLoad l : loads) sim.at(l.stats.startNanos, () -> send(sim, l, failure));
    }

    private static void send(Simulation sim, IoLoad l, AtomicReference<Throwable> failure) {
        IoRequest r;
        while (failure.get() == null && (r = l.next(sim.nowNanos())) != null) {
            long id = r.id();
            sim.submit(r, (c, e) -> {
                if (e != null) {
                    failure.compareAndSet(null, e);
                    return;
                }
                long think = l.completed(id, c, sim.nowNanos(), false);
                if (think == 0) {
                    send(sim, l, failure);
                } else {
                    sim.at(sim.nowNanos() + think, () -> {
                        l.wake(IoLoad.slot(id));
                        send(sim, l, failure);
                    });
                }
            });
        }
        l.done(sim.nowNanos());
    }
}
