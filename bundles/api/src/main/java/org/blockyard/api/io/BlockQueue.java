package org.blockyard.api.io;

import java.util.List;
import java.util.concurrent.CompletionStage;

import org.osgi.annotation.versioning.ProviderType;

/**
 * A block device's request queue: the service storage code submits to. Every call is asynchronous; a
 * refused call completes exceptionally with an {@link IoException} and changes nothing.
 */
@ProviderType
public interface BlockQueue {

    QueueLimits limits();

    /** Device capacity in sectors; a submission must end at or before it. */
    long capacitySectors();

    /**
     * Queues {@code request}; the stage completes when the device request carrying it completes (or
     * exceptionally with {@link IoException.InvalidRequest} / {@link IoException.DeviceError}).
     */
    CompletionStage<IoCompletion> submit(IoRequest request);

    /**
     * Queues {@code requests} in their order as one hand-over (Linux {@code blk_start_plug} ...
     * {@code blk_finish_plug}): the queue sees them all before it issues anything, so contiguous ones merge
     * and the caller pays one hand-over instead of one per request. Each completes on its own; a refused
     * one fails its own stage and does not stop the others.
     */
    List<CompletionStage<IoCompletion>> submitAll(List<IoRequest> requests);

    /** Ids of the registered elevators, in registration order. */
    CompletionStage<List<String>> elevators();

    /** Id of the active elevator. */
    CompletionStage<String> activeElevator();

    /**
     * Switches the active elevator online (Linux {@code elevator_switch}): builds the new one, moves every
     * queued request to it, retires the old. An unknown name fails with {@link IoException.UnknownElevator};
     * a new elevator that fails to start fails with {@link IoException.SwitchFailed}; either way the old one
     * keeps running. Switching to the active one does nothing.
     */
    CompletionStage<ElevatorSwitch> setElevator(String nameOrAlias);

    /** Registered elevators in the sysfs form, the active one in brackets: {@code noop [deadline]}. */
    CompletionStage<String> schedulerListing();

    CompletionStage<QueueStats> stats();
}
