package org.blockyard.api.io;

import java.util.Map;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * Builds elevators of one kind. Built-in elevators are registered by the runtime; a plugin registers its
 * factory as an OSGi service and the runtime adds it to the queue's list while the bundle is active.
 */
@ConsumerType
public interface ElevatorFactory {

    ElevatorDescriptor descriptor();

    /**
     * A new, empty elevator for a queue with {@code limits}. {@code tunables} holds every tunable of the
     * descriptor, already checked against its range. The queue calls it whenever it switches to this
     * elevator, and again when one of its tunables changes while it runs: the new instance is given the queued
     * requests, in the old one's order, and the old one is closed. May throw to refuse; the queue then keeps
     * the elevator it has.
     */
    Elevator create(QueueLimits limits, Map<String, Long> tunables);
}
