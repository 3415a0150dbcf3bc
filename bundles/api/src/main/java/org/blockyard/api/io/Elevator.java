package org.blockyard.api.io;

import java.util.List;
import java.util.Map;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * An I/O scheduler, modelled on the Linux 2.6 {@code elevator_ops}. The queue calls it from one thread at a
 * time (its actor), so an implementation needs no locking; it must never block and never read a clock:
 * every call that needs the time is given {@code nowNanos} on the queue's clock, which is virtual for the
 * simulated disk.
 *
 * <p>Division of work. The queue does the back- and front-merge lookup, checks kinds and
 * {@code max_sectors}, keeps FLUSH ordering and issues SYNC submissions ahead of everything. Asynchronous
 * META requests are kept by the queue in its own lane ahead of bulk data (seed 004), unless the elevator
 * {@linkplain #schedulesMeta schedules them itself}; the elevator orders the other requests it is given,
 * may veto merges, and hands requests out one at a time.
 *
 * <table>
 * <caption>Calls and their Linux counterparts</caption>
 * <tr><th>call</th><th>Linux</th><th>when</th></tr>
 * <tr><td>{@link #add}</td><td>{@code elevator_add_req_fn}</td><td>a new request enters</td></tr>
 * <tr><td>{@link #allowMerge}</td><td>{@code elevator_allow_merge_fn}, {@code front_merges}</td>
 *     <td>before a submission joins a queued request</td></tr>
 * <tr><td>{@link #merged}</td><td>{@code elevator_merged_fn}</td><td>after it joined</td></tr>
 * <tr><td>{@link #mergedRequests}</td><td>{@code elevator_merge_req_fn}</td>
 *     <td>two queued requests became one</td></tr>
 * <tr><td>{@link #dispatch}</td><td>{@code elevator_dispatch_fn}</td><td>the device can take one more</td></tr>
 * <tr><td>{@link #completed}</td><td>{@code elevator_completed_req_fn}</td>
 *     <td>a request this elevator issued finished</td></tr>
 * <tr><td>{@link #drainAll}</td><td>{@code dispatch_fn(q, force=1)}</td>
 *     <td>a FLUSH arrives, or the elevator is switched out</td></tr>
 * <tr><td>{@link #close}</td><td>{@code elevator_exit_fn}</td><td>after it was switched out</td></tr>
 * </table>
 */
@ConsumerType
public interface Elevator {

    /** Takes ownership of {@code request} until it is handed back by {@link #dispatch} or {@link #drainAll}. */
    void add(BlockRequest request, long nowNanos);

    /**
     * Whether {@code submission} may join {@code request} (already checked by the queue for kind, adjacency
     * and size). Noop allows every merge; deadline refuses front merges when {@code front_merges} is 0.
     */
    boolean allowMerge(BlockRequest request, IoRequest submission, MergeKind kind);

    /** {@code request} grew by a submission; after a FRONT merge it starts at a lower sector than {@code previousSector}. */
    void merged(BlockRequest request, MergeKind kind, long previousSector);

    /**
     * {@code next} was coalesced into {@code request} (which now covers both, starting at the lower sector,
     * {@code previousSector} being its start before) and is gone: drop it. The survivor keeps the earlier
     * arrival time.
     */
    void mergedRequests(BlockRequest request, BlockRequest next, long previousSector);

    /** The next request to issue, a time to be asked again, or {@link Dispatch#IDLE} when empty. */
    Dispatch dispatch(long nowNanos);

    /** A request this elevator issued has completed. */
    void completed(BlockRequest request, long nowNanos);

    /**
     * Removes and returns every request it holds, in the order it would have issued them; afterwards it is
     * empty. Used before a FLUSH and when switching elevators, where each request goes to the new one.
     */
    List<BlockRequest> drainAll();

    /** Requests it holds. */
    int queued();

    /** Its internal state for introspection (FIFO heads, batch position, starvation counters ...). */
    Map<String, Object> stats();

    /**
     * Whether this elevator takes asynchronous META requests and orders them by its own rules, as Linux
     * schedulers do (CFQ serves META before other requests of a queue and lets it preempt; deadline and
     * anticipatory give it no precedence at all). When false, the queue keeps them in its own lane ahead of
     * bulk data and this elevator never sees them. Asked once, when the elevator is installed.
     */
    default boolean schedulesMeta() {
        return false;
    }

    /** Releases what it holds; called once, after it was switched out and drained. */
    default void close() {}
}
