package org.blockyard.runtime.io;

import org.blockyard.api.io.IoRequest;

/**
 * What a queue reports as it works, one call per blktrace action (Q, M, F, I, D, C). Called on the queue's
 * thread with the queue's clock.
 */
public interface QueueEvents {
    QueueEvents NONE = new QueueEvents() {};

    /** Q: a submission entered the queue. */
    default void queued(IoRequest bio, long nowNanos) {}

    /** M: it joined the end of {@code into}. */
    default void backMerged(IoRequest bio, Request into, long nowNanos) {}

    /** F: it joined the start of {@code into}. */
    default void frontMerged(IoRequest bio, Request into, long nowNanos) {}

    /** I: a new request was inserted (into the elevator, the META list, the SYNC list or behind a FLUSH). */
    default void inserted(Request rq, long nowNanos) {}

    /** D: the request was issued to the device. */
    default void issued(Request rq, long nowNanos) {}

    /** C: the device completed it. */
    default void completed(Request rq, long nowNanos, boolean error) {}
}
