package org.blockyard.api.io;

import java.util.Map;

/**
 * Counters of a queue since it started.
 *
 * @param submissions        submissions taken (FLUSH included)
 * @param requestsDispatched device requests issued
 * @param sectorsDispatched  sectors in them
 * @param maxRequestSectors  largest request issued
 * @param backMerges         submissions that joined a request at its end
 * @param frontMerges        submissions that joined a request at its start
 * @param coalesced          pairs of queued requests that became one
 * @param completed          submissions completed
 * @param elevator           id of the active elevator
 * @param elevatorStats      its {@link Elevator#stats()}
 */
public record QueueStats(long submissions, long requestsDispatched, long sectorsDispatched, int maxRequestSectors,
                         long backMerges, long frontMerges, long coalesced, long completed, String elevator,
                         Map<String, Object> elevatorStats) {

    public long merges() {
        return backMerges + frontMerges;
    }

    public double meanRequestSectors() {
        return requestsDispatched == 0 ? 0 : (double) sectorsDispatched / requestsDispatched;
    }
}
