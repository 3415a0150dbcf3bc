package org.blockyard.api.io;

/**
 * The answer to one {@link IoRequest}. Times are on the queue's clock (virtual for the simulated disk).
 *
 * @param id             the submission's id
 * @param op             its op
 * @param sector         its start sector
 * @param sectors        its length in sectors
 * @param queuedNanos    when the queue took it
 * @param issuedNanos    when the device request carrying it was issued
 * @param completedNanos when that device request completed
 * @param requestSectors size of the device request it travelled in (after merging)
 */
public record IoCompletion(long id, IoOp op, long sector, int sectors, long queuedNanos, long issuedNanos,
                           long completedNanos, int requestSectors) {

    /** Queue-to-completion latency in nanoseconds. */
    public long latencyNanos() {
        return completedNanos - queuedNanos;
    }
}
