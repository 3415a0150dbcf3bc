package org.blockyard.runtime.io;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.function.BiConsumer;

import org.blockyard.api.io.ElevatorSwitch;
import org.blockyard.api.io.IoCompletion;
import org.blockyard.api.io.IoRequest;
import org.blockyard.api.io.QueueStats;

/**
 * A queue and its device on a virtual clock: a discrete-event loop in one thread. Time moves only from one
 * event to the next (a completion, a wake-up, a load client's next submission), so a run depends on its
 * inputs alone, never on the machine or its load. The device answers service times (a simulated disk)
 * and serves one request at a time; with a queue depth above 1 the rest wait in the device's own queue.
 *
 * <p>Load clients schedule their work with {@link #at} and submit with {@link #submit}; their completion
 * callbacks run inside the loop at the completion time, and may submit again.
 */
public final class Simulation {
    private record Event(long atNanos, long seq, Runnable action) {}

    private final RequestQueue queue;
    private final QueueSetup setup;
    private final BlockDevice device;
    private final PriorityQueue<Event> events = new PriorityQueue<>((a, b) ->
            a.atNanos != b.atNanos ? Long.compare(a.atNanos, b.atNanos) : Long.compare(a.seq, b.seq));
    private long nowNanos;
    private long seq;
    private long deviceFreeAtNanos;
    private long deviceBusyNanos;
    private long scheduledWakeNanos = Long.MAX_VALUE;

    public Simulation(QueueSetup setup, BlockDevice device) {
        this.setup = setup;
        this.device = device;
        this.queue = setup.newQueue(device.capacitySectors());
    }

    public long nowNanos() {
        return nowNanos;
    }

    /** Runs {@code action} at {@code atNanos} (not before now). */
    public void at(long atNanos, Runnable action) {
        events.add(new Event(Math.max(atNanos, nowNanos), seq++, action));
    }

    /** Submits now; throws {@link org.blockyard.api.io.IoException.InvalidRequest} for bad input. */
    public void submit(IoRequest request, BiConsumer<IoCompletion, Throwable> done) {
        queue.submit(request, nowNanos, done);
        pump();
    }

    /** Switches the elevator now, as {@link org.blockyard.api.io.BlockQueue#setElevator}. */
    public ElevatorSwitch setElevator(String name) {
        String id = setup.registry().lookup(name);
        if (id.equals(queue.elevatorId())) return new ElevatorSwitch(name, id, false, 0);
        int moved = queue.switchTo(setup.build(id), id, nowNanos);
        pump();
        return new ElevatorSwitch(name, queue.elevatorId(), false, moved);   // the default, if the new one failed at once
    }

    public String listing() {
        return setup.registry().listing(queue.elevatorId());
    }

    /** Runs events until none is left. */
    public void run() {
        while (step()) { }
    }

    /** Runs events up to and including {@code untilNanos}. */
    public void runUntil(long untilNanos) {
        while (!events.isEmpty() && events.peek().atNanos <= untilNanos) step();
        nowNanos = Math.max(nowNanos, untilNanos);
    }

    /** Runs the earliest event; false when there is none. */
    public boolean step() {
        Event e = events.poll();
        if (e == null) return false;
        nowNanos = e.atNanos;
        e.action.run();
        return true;
    }

    private void pump() {
        Request rq;
        while ((rq = queue.next(nowNanos)) != null) {
            List<ByteBuffer> payloads = new ArrayList<>(rq.bios.size());
            for (Request.Bio b : rq.bios) if (b.io().payload() != null) payloads.add(b.io().payload());
            long service;
            Throwable error = null;
            try {
                service = device.perform(rq, payloads);
            } catch (IOException e) {
                service = 0;
                error = e;
            }
            long start = Math.max(nowNanos, deviceFreeAtNanos);
            long end = start + service;
            deviceFreeAtNanos = end;
            deviceBusyNanos += service;
            Request done = rq;
            Throwable err = error;
            at(end, () -> {
                queue.complete(done, nowNanos, err);
                pump();
            });
        }
        long wake = queue.wakeAtNanos();
        if (wake != Long.MAX_VALUE && wake <= nowNanos) wake = nowNanos + 1_000;   // never spin at one instant
        if (wake != Long.MAX_VALUE && wake != scheduledWakeNanos) {
            scheduledWakeNanos = wake;
            long at = wake;
            at(at, () -> {
                if (scheduledWakeNanos == at) scheduledWakeNanos = Long.MAX_VALUE;
                pump();
            });
        }
    }

    /** Total time the device spent serving requests. */
    public long deviceBusyNanos() {
        return deviceBusyNanos;
    }

    public QueueStats stats() {
        return queue.stats();
    }

    public RequestQueue queue() {
        return queue;
    }

    public BlockDevice device() {
        return device;
    }

    /** Closes the device; an I/O error is rethrown unchecked. */
    public void close() {
        try {
            device.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
