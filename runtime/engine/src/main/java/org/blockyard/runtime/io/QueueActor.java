package org.blockyard.runtime.io;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.DispatcherSelector;
import akka.actor.typed.PostStop;
import akka.actor.typed.Props;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;
import akka.actor.typed.javadsl.TimerScheduler;
import org.blockyard.api.io.ElevatorFactory;
import org.blockyard.api.io.ElevatorSwitch;
import org.blockyard.api.io.IoCompletion;
import org.blockyard.api.io.IoException;
import org.blockyard.api.io.IoRequest;
import org.blockyard.api.io.QueueStats;

/**
 * The queue of one real device (memory or image file) in real time. It owns a {@link RequestQueue} and the
 * device, and decides every switch; the elevator registry is its setup's, which a binder and a shell read and
 * set tunables in too (it is thread-safe); the device's blocking I/O runs on one thread of its own and its
 * completions come back as messages, so the queue keeps merging while the device works. Plug and elevator
 * wake-ups are Akka timers. Time is {@code System.nanoTime()} since the actor started.
 *
 * <p>Switching follows Linux {@code elevator_switch}: the new elevator is built first (if that fails the
 * old one stays and the caller gets {@link IoException.SwitchFailed}), every queued request moves to it in
 * the old one's dispatch order, then the old one is closed. Requests in flight are unaffected. All of it
 * happens inside one message, so no submission can slip between.
 */
public final class QueueActor extends AbstractBehavior<QueueActor.Command> {

    public interface Command {}

    /** Queue {@code request}; the answer comes when it completes (or at once when refused). */
    public record Submit(IoRequest request, ActorRef<Completed> replyTo) implements Command {}

    /**
     * Queue {@code request} for a caller outside the actor system (the {@link org.blockyard.api.io.BlockQueue}
     * service): the future completes on the queue's thread, without an ask's temporary actor and timer, which
     * matter at hundreds of thousands of submissions per second.
     */
    public record SubmitAsync(IoRequest request, CompletableFuture<IoCompletion> replyTo) implements Command {}

    /** {@link SubmitAsync} for many at once: {@code replyTo.get(i)} answers {@code requests.get(i)}. */
    public record SubmitBatch(List<IoRequest> requests, List<CompletableFuture<IoCompletion>> replyTo)
            implements Command {
        public SubmitBatch {
            if (requests.size() != replyTo.size())
                throw new IllegalArgumentException(requests.size() + " requests but " + replyTo.size() + " replies");
        }
    }

    /** Exactly one of {@code completion} and {@code error} is set. */
    public record Completed(IoCompletion completion, IoException error) {}

    /** Switch to {@code nameOrAlias} (run time: a name not available is an error). */
    public record SetElevator(String nameOrAlias, ActorRef<Switched> replyTo) implements Command {}

    /**
     * Select {@code nameOrAlias} as a configuration does: a name not available (not installed, retired) selects
     * the default, and the answer says it fell back.
     */
    public record SelectElevator(String nameOrAlias, ActorRef<Switched> replyTo) implements Command {}

    /**
     * Set tunable {@code name} of elevator {@code id} (checked; {@link IoException.InvalidTunable} changes
     * nothing); when {@code id} runs, it is rebuilt with the value in place, its queued requests moving over.
     */
    public record SetTunable(String id, String name, long value, ActorRef<Switched> replyTo) implements Command {}

    /**
     * Drop the value set at run time for tunable {@code name} of elevator {@code id} (the configured one or the
     * default applies again); a running {@code id} is rebuilt in place.
     */
    public record ResetTunable(String id, String name, ActorRef<Switched> replyTo) implements Command {}

    /** Exactly one of {@code result} and {@code error} is set. */
    public record Switched(ElevatorSwitch result, IoException error) {}

    public record GetListing(ActorRef<Listing> replyTo) implements Command {}

    /** @param sysfs the sysfs-style line, e.g. {@code noop [deadline]} */
    public record Listing(List<String> ids, String active, String sysfs, long capacitySectors) {}

    public record GetStats(ActorRef<QueueStats> replyTo) implements Command {}

    /** A plugin's elevator became available. */
    public record RegisterElevator(ElevatorFactory factory) implements Command {}

    /** A plugin's elevator went away; if it is active, the queue switches to the default first. */
    public record UnregisterElevator(String id) implements Command {}

    /**
     * The queue is closing: every request it holds, queued or in flight, fails with
     * {@link IoException.Closed}, and so does every call after; acknowledges.
     */
    public record Shutdown(ActorRef<akka.Done> replyTo) implements Command {}

    private record DeviceDone(Request request, Throwable error) implements Command {}

    private enum Wake implements Command { INSTANCE }

    /** Time to look for requests the device has held longer than {@link QueueSetup#deviceTimeoutNanos}. */
    private enum CheckDevice implements Command { INSTANCE }

    private final QueueSetup setup;
    private final BlockDevice device;
    private final RequestQueue queue;
    private final TimerScheduler<Command> timers;
    private final ExecutorService deviceThread;
    private final long originNanos = System.nanoTime();
    private long timerAtNanos = Long.MAX_VALUE;
    /** A {@link CheckDevice} is due: at most one at a time, for the oldest request in flight. */
    private boolean checkScheduled;

    /** Where a queue spawned beside busy actors runs: a thread of its own ({@code blockyard.io-dispatcher}). */
    public static Props props() {
        return DispatcherSelector.fromConfig("blockyard.io-dispatcher");
    }

    public static Behavior<Command> create(QueueSetup setup, BlockDevice device) {
        return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> new QueueActor(ctx, timers, setup, device)));
    }

    private QueueActor(ActorContext<Command> ctx, TimerScheduler<Command> timers, QueueSetup setup,
                       BlockDevice device) {
        super(ctx);
        this.timers = timers;
        this.setup = setup;
        this.device = device;
        this.queue = setup.newQueue(device.capacitySectors());
        this.deviceThread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "blockyard-device-" + device.kind());
            t.setDaemon(true);
            return t;
        });
    }

    private long now() {
        return System.nanoTime() - originNanos;
    }

    @Override
    public Receive<Command> createReceive() {
        return newReceiveBuilder()
                .onMessage(Submit.class, this::onSubmit)
                .onMessage(SubmitAsync.class, this::onSubmitAsync)
                .onMessage(SubmitBatch.class, this::onSubmitBatch)
                .onMessage(DeviceDone.class, this::onDeviceDone)
                .onMessageEquals(Wake.INSTANCE, this::onWake)
                .onMessageEquals(CheckDevice.INSTANCE, this::onCheckDevice)
                .onMessage(SetElevator.class, this::onSetElevator)
                .onMessage(SelectElevator.class, this::onSelectElevator)
                .onMessage(SetTunable.class, m -> onTunable(m.id(), m.name(), m.value(), m.replyTo()))
                .onMessage(ResetTunable.class, m -> onTunable(m.id(), m.name(), null, m.replyTo()))
                .onMessage(GetListing.class, this::onGetListing)
                .onMessage(GetStats.class, this::onGetStats)
                .onMessage(RegisterElevator.class, this::onRegisterElevator)
                .onMessage(UnregisterElevator.class, this::onUnregisterElevator)
                .onMessage(Shutdown.class, this::onShutdown)
                .onSignal(PostStop.class, s -> onPostStop())
                .build();
    }

    private Behavior<Command> onSubmit(Submit m) {
        ActorRef<Completed> replyTo = m.replyTo();
        try {
            queue.submit(m.request(), now(), (c, e) -> replyTo.tell(new Completed(c, (IoException) e)));
        } catch (IoException e) {
            replyTo.tell(new Completed(null, e));
            return this;
        }
        pump();
        return this;
    }

    private Behavior<Command> onSubmitAsync(SubmitAsync m) {
        submitOne(m.request(), m.replyTo(), now());
        pump();
        return this;
    }

    private Behavior<Command> onSubmitBatch(SubmitBatch m) {
        long now = now();
        for (int i = 0; i < m.requests().size(); i++) submitOne(m.requests().get(i), m.replyTo().get(i), now);
        pump();
        return this;
    }

    private void submitOne(IoRequest request, CompletableFuture<IoCompletion> replyTo, long now) {
        try {
            queue.submit(request, now, (c, e) -> {
                if (e == null) replyTo.complete(c);
                else replyTo.completeExceptionally(e);
            });
        } catch (IoException e) {
            replyTo.completeExceptionally(e);
        }
    }

    private Behavior<Command> onDeviceDone(DeviceDone m) {
        if (!queue.isInFlight(m.request())) return this; // failed already: it outstayed the device timeout
        queue.complete(m.request(), now(), m.error());
        pump();
        return this;
    }

    /** Fails the requests the device has held past the timeout, so their callers hear within bounded time. */
    private Behavior<Command> onCheckDevice() {
        checkScheduled = false;
        long limit = setup.deviceTimeoutNanos(), now = now();
        List<Request> overdue = queue.inFlightIssuedBy(now - limit);
        for (Request rq : overdue)
            queue.complete(rq, now, new IoException.DeviceError(rq + " was not answered by the " + device.kind()
                    + " device within " + Duration.ofNanos(limit).toMillis() + " ms", null));
        if (!overdue.isEmpty()) getContext().getLog().error("the {} device held {} requests longer than {} ms; "
                + "they failed", device.kind(), overdue.size(), Duration.ofNanos(limit).toMillis());
        scheduleCheck();
        pump();
        return this;
    }

    /** Looks again when the oldest request in flight would outstay the device timeout. */
    private void scheduleCheck() {
        if (checkScheduled) return;
        long oldest = queue.oldestIssuedNanos();
        if (oldest == Long.MAX_VALUE) return;
        long due = oldest + setup.deviceTimeoutNanos() - now();
        timers.startSingleTimer(CheckDevice.INSTANCE, CheckDevice.INSTANCE, Duration.ofNanos(Math.max(0, due)));
        checkScheduled = true;
    }

    private Behavior<Command> onWake() {
        timerAtNanos = Long.MAX_VALUE;
        pump();
        return this;
    }

    private Behavior<Command> onSetElevator(SetElevator m) {
        try {
            long t0 = System.nanoTime();
            ElevatorSwitch done = switchTo(m.nameOrAlias());
            m.replyTo().tell(new Switched(done.withPause(System.nanoTime() - t0), null));
        } catch (IoException e) {
            m.replyTo().tell(new Switched(null, e));
        }
        return this;
    }

    private ElevatorSwitch switchTo(String name) {
        return switchTo(name, setup.registry().lookup(name), false);
    }

    /** Switches to {@code id} (built anew) unless it runs already. */
    private ElevatorSwitch switchTo(String requested, String id, boolean fellBack) {
        if (id.equals(queue.elevatorId())) return new ElevatorSwitch(requested, id, fellBack, 0);
        int moved = queue.switchTo(setup.build(id), id, now());
        getContext().getLog().info("io scheduler switched to {} ({} requests moved)", id, moved);
        pump();
        return new ElevatorSwitch(requested, queue.elevatorId(), fellBack, moved);   // the default, if the new one failed at once
    }

    private Behavior<Command> onSelectElevator(SelectElevator m) {
        try {
            long t0 = System.nanoTime();
            var s = setup.registry().select(m.nameOrAlias());
            ElevatorSwitch done = switchTo(m.nameOrAlias(), s.id(), s.fellBack());
            m.replyTo().tell(new Switched(done.withPause(System.nanoTime() - t0), null));
        } catch (IoException e) {
            m.replyTo().tell(new Switched(null, e));
        }
        return this;
    }

    /** Sets ({@code value}) or resets (null) a tunable of {@code id}, and rebuilds {@code id} in place if it runs. */
    private Behavior<Command> onTunable(String id, String name, Long value, ActorRef<Switched> replyTo) {
        try {
            if (value != null) setup.registry().setTunable(id, name, value);
            else setup.registry().resetTunable(id, name);
            int moved = 0;
            if (id.equals(queue.elevatorId())) {
                moved = queue.switchTo(setup.build(id), id, now());
                getContext().getLog().info("io scheduler {} rebuilt with {} {} ({} requests moved)", id, name,
                        value != null ? "= " + value : "as configured", moved);
                pump();
            }
            replyTo.tell(new Switched(new ElevatorSwitch(id, queue.elevatorId(), false, moved), null));
        } catch (IoException e) {
            replyTo.tell(new Switched(null, e));
        }
        return this;
    }

    private Behavior<Command> onGetListing(GetListing m) {
        m.replyTo().tell(new Listing(setup.registry().ids(), queue.elevatorId(),
                setup.registry().listing(queue.elevatorId()), queue.capacitySectors()));
        return this;
    }

    private Behavior<Command> onGetStats(GetStats m) {
        m.replyTo().tell(queue.stats());
        return this;
    }

    private Behavior<Command> onRegisterElevator(RegisterElevator m) {
        try {
            setup.registry().register(m.factory());
        } catch (IllegalArgumentException e) {
            getContext().getLog().warn("io scheduler not registered: {}", e.getMessage());
        }
        return this;
    }

    private Behavior<Command> onUnregisterElevator(UnregisterElevator m) {
        if (setup.registry().isBuiltIn(m.id())) {
            getContext().getLog().warn("built-in io scheduler {} stays registered", m.id());
            return this;
        }
        if (m.id().equals(queue.elevatorId())) {
            String fallback = setup.registry().defaultId();
            getContext().getLog().warn("io scheduler {} is going away; switching to the default, {}", m.id(), fallback);
            queue.switchTo(setup.build(fallback), fallback, now());
        }
        setup.registry().unregister(m.id());
        pump();
        return this;
    }

    private void pump() {
        Request rq;
        while ((rq = queue.next(now())) != null) issue(rq);
        long wake = queue.wakeAtNanos();
        if (wake != Long.MAX_VALUE && wake < timerAtNanos) {
            timerAtNanos = wake;
            timers.startSingleTimer(Wake.INSTANCE, Wake.INSTANCE, Duration.ofNanos(Math.max(0, wake - now())));
        }
    }

    private void issue(Request rq) {
        List<ByteBuffer> payloads = new ArrayList<>(rq.bios.size());
        for (Request.Bio b : rq.bios) if (b.io().payload() != null) payloads.add(b.io().payload());
        scheduleCheck();
        CompletableFuture<Long> io = CompletableFuture.supplyAsync(() -> {
            try {
                return device.perform(rq, payloads);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }, deviceThread);
        getContext().pipeToSelf(io, (ok, err) -> new DeviceDone(rq,
                err == null ? null : err.getCause() != null ? err.getCause() : err));
    }

    private Behavior<Command> onShutdown(Shutdown m) {
        IoException.Closed closed = new IoException.Closed("the block queue is closed");
        int failed = queue.abortAll(closed);
        if (failed > 0) getContext().getLog().info("queue closed with {} submissions outstanding; they failed", failed);
        m.replyTo().tell(akka.Done.getInstance());
        return Behaviors.receive(Command.class)
                .onAnyMessage(x -> refuseClosed(x, closed))
                .onSignal(PostStop.class, s -> onPostStop())
                .build();
    }

    /** In the closed phase: every submission and question is answered with {@code closed}. */
    private Behavior<Command> refuseClosed(Command m, IoException.Closed closed) {
        if (m instanceof Submit s) s.replyTo().tell(new Completed(null, closed));
        else if (m instanceof SubmitAsync s) s.replyTo().completeExceptionally(closed);
        else if (m instanceof SubmitBatch b) for (CompletableFuture<IoCompletion> f : b.replyTo()) f.completeExceptionally(closed);
        else if (m instanceof SetElevator s) s.replyTo().tell(new Switched(null, closed));
        else if (m instanceof SelectElevator s) s.replyTo().tell(new Switched(null, closed));
        else if (m instanceof SetTunable s) s.replyTo().tell(new Switched(null, closed));
        else if (m instanceof ResetTunable s) s.replyTo().tell(new Switched(null, closed));
        else if (m instanceof GetListing l) l.replyTo().tell(new Listing(setup.registry().ids(), queue.elevatorId(),
                setup.registry().listing(queue.elevatorId()), queue.capacitySectors()));
        else if (m instanceof GetStats g) g.replyTo().tell(queue.stats());
        else if (m instanceof Shutdown s) s.replyTo().tell(akka.Done.getInstance());
        return Behaviors.same();
    }

    private Behavior<Command> onPostStop() {
        int failed = queue.abortAll(new IoException.Closed("the block queue stopped"));
        if (failed > 0) getContext().getLog().warn("queue stopped with {} submissions outstanding; they failed", failed);
        deviceThread.shutdown();
        try {
            if (!BlockDevice.closeWithin(device, setup.deviceTimeoutNanos()))
                getContext().getLog().error("the {} device did not close within {} ms (a request is stuck in it); "
                        + "the queue stopped without it", device.kind(),
                        Duration.ofNanos(setup.deviceTimeoutNanos()).toMillis());
        } catch (IOException | RuntimeException e) {
            getContext().getLog().warn("closing the {} device failed: {}", device.kind(), e.getMessage());
        }
        return this;
    }
}
