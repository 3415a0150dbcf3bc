package org.blockyard.runtime.io;

import java.util.HashMap;
import java.util.Map;

import org.blockyard.api.io.Elevator;
import org.blockyard.api.io.IoException;
import org.blockyard.api.io.QueueLimits;

/**
 * Everything a queue needs besides its device: the elevators, the one asked for, their tunables, the
 * limits and the plugging parameters. {@link IoSettings} builds one from configuration.
 *
 * @param registry           elevators by id and alias, with the built-in default
 * @param requestedElevator  the name configured or given on the command line
 * @param tunables           per elevator id, tunable overrides (missing ones take their defaults)
 * @param limits             queue limits
 * @param unplugThreshold    queued requests that unplug the queue (Linux 4)
 * @param unplugDelayNanos   how long a plugged queue waits at most (Linux 3 ms)
 * @param events             observer of Q/M/F/I/D/C events (a blktrace writer), or {@link QueueEvents#NONE}
 * @param elevatorStallLimitNanos longest one elevator call may take before the queue retires the elevator
 * @param deviceTimeoutNanos longest a request may stay on the device before the queue fails it with a
 *                           {@link org.blockyard.api.io.IoException.DeviceError} (a hung device)
 */
public record QueueSetup(ElevatorRegistry registry, String requestedElevator, Map<String, Map<String, Long>> tunables,
                         QueueLimits limits, int unplugThreshold, long unplugDelayNanos, QueueEvents events,
                         long elevatorStallLimitNanos, long deviceTimeoutNanos) {

    /** Default of {@code blockyard.io.elevator-stall-limit}: 100 ms. */
    public static final long DEFAULT_STALL_LIMIT_NANOS = 100_000_000L;

    /** Default of {@code blockyard.io.device-timeout}: 120 s, when Linux warns of a hung task. */
    public static final long DEFAULT_DEVICE_TIMEOUT_NANOS = 120_000_000_000L;

    public QueueSetup {
        tunables = Map.copyOf(tunables);
        if (events == null) events = QueueEvents.NONE;
        if (elevatorStallLimitNanos <= 0) throw new IllegalArgumentException("the elevator stall limit must be positive");
        if (deviceTimeoutNanos <= 0) throw new IllegalArgumentException("the device timeout must be positive");
    }

    /** With the default device timeout. */
    public QueueSetup(ElevatorRegistry registry, String requestedElevator, Map<String, Map<String, Long>> tunables,
                      QueueLimits limits, int unplugThreshold, long unplugDelayNanos, QueueEvents events,
                      long elevatorStallLimitNanos) {
        this(registry, requestedElevator, tunables, limits, unplugThreshold, unplugDelayNanos, events,
                elevatorStallLimitNanos, DEFAULT_DEVICE_TIMEOUT_NANOS);
    }

    /** With the default stall limit and device timeout. */
    public QueueSetup(ElevatorRegistry registry, String requestedElevator, Map<String, Map<String, Long>> tunables,
                      QueueLimits limits, int unplugThreshold, long unplugDelayNanos, QueueEvents events) {
        this(registry, requestedElevator, tunables, limits, unplugThreshold, unplugDelayNanos, events,
                DEFAULT_STALL_LIMIT_NANOS);
    }

    /** Built-in elevators, default and requested {@code deadline}, Linux plugging, default limits. */
    public static QueueSetup defaults() {
        return new QueueSetup(ElevatorRegistry.builtIn("deadline"), "deadline", Map.of(), QueueLimits.DEFAULT,
                4, 3_000_000L, QueueEvents.NONE);
    }

    public QueueSetup withElevator(String requested) {
        return new QueueSetup(registry, requested, tunables, limits, unplugThreshold, unplugDelayNanos, events,
                elevatorStallLimitNanos, deviceTimeoutNanos);
    }

    public QueueSetup withRegistry(ElevatorRegistry r) {
        return new QueueSetup(r, requestedElevator, tunables, limits, unplugThreshold, unplugDelayNanos, events,
                elevatorStallLimitNanos, deviceTimeoutNanos);
    }

    public QueueSetup withLimits(QueueLimits l) {
        return new QueueSetup(registry, requestedElevator, tunables, l, unplugThreshold, unplugDelayNanos, events,
                elevatorStallLimitNanos, deviceTimeoutNanos);
    }

    public QueueSetup withEvents(QueueEvents e) {
        return new QueueSetup(registry, requestedElevator, tunables, limits, unplugThreshold, unplugDelayNanos, e,
                elevatorStallLimitNanos, deviceTimeoutNanos);
    }

    public QueueSetup withPlugging(int threshold, long delayNanos) {
        return new QueueSetup(registry, requestedElevator, tunables, limits, threshold, delayNanos, events,
                elevatorStallLimitNanos, deviceTimeoutNanos);
    }

    public QueueSetup withStallLimit(long nanos) {
        return new QueueSetup(registry, requestedElevator, tunables, limits, unplugThreshold, unplugDelayNanos, events,
                nanos, deviceTimeoutNanos);
    }

    public QueueSetup withTunable(String elevatorId, String name, long value) {
        Map<String, Map<String, Long>> t = new HashMap<>(tunables);
        Map<String, Long> one = new HashMap<>(t.getOrDefault(elevatorId, Map.of()));
        one.put(name, value);
        t.put(elevatorId, Map.copyOf(one));
        return new QueueSetup(registry, requestedElevator, t, limits, unplugThreshold, unplugDelayNanos, events,
                elevatorStallLimitNanos, deviceTimeoutNanos);
    }

    /**
     * A new elevator of {@code id} with its tunables (configured here, set at run time in the registry);
     * {@link IoException.SwitchFailed} if it cannot start, {@link IoException.InvalidTunable} for a bad value.
     */
    public Elevator build(String id) {
        return registry.build(id, limits, tunables.getOrDefault(id, Map.of()));
    }

    /** The queue for a device of {@code capacitySectors}, running the selected elevator. */
    public RequestQueue newQueue(long capacitySectors) {
        ElevatorRegistry.Selection s = registry.select(requestedElevator);
        return new RequestQueue(limits, capacitySectors, build(s.id()), s.id(), unplugThreshold, unplugDelayNanos,
                events, supervisor(), elevatorStallLimitNanos);
    }

    /** Retired elevators are recorded in the registry; the default replaces them. */
    private GuardedElevator.Supervisor supervisor() {
        return new GuardedElevator.Supervisor() {
            @Override public String defaultId() { return registry.defaultId(); }
            @Override public boolean isFailed(String id) { return registry.isFailed(id); }
            @Override public boolean isBuiltIn(String id) { return registry.isBuiltIn(id); }
            @Override public Elevator build(String id) { return QueueSetup.this.build(id); }
            @Override public void retired(String id, String reason) { registry.markFailed(id, reason); }
        };
    }
}
