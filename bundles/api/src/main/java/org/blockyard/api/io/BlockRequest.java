package org.blockyard.api.io;

import java.util.Set;

import org.osgi.annotation.versioning.ProviderType;

/**
 * A request as an elevator sees it (a Linux {@code struct request}): one or more merged submissions of
 * the same kind covering {@code [sector, endSector())}. The queue owns it; its start and length change only
 * through merges, and the elevator is told of each one ({@link Elevator#merged},
 * {@link Elevator#mergedRequests}). Identity is object identity.
 */
@ProviderType
public interface BlockRequest {

    /** Queue-wide sequence number, unique for the queue's lifetime; ties in sort order break on it. */
    long seq();

    long sector();

    int sectors();

    IoOp op();

    Set<IoFlag> flags();

    /** The io context of the first submission in it. */
    long owner();

    /** When the oldest submission in it was queued, in nanoseconds on the queue's clock. */
    long arrivalNanos();

    /** Submissions merged into it. */
    int submissions();

    default long endSector() {
        return sector() + sectors();
    }

    default boolean isWrite() {
        return op() == IoOp.WRITE;
    }

    /** Linux {@code rq_is_sync}: every read, and writes flagged SYNC. */
    default boolean isSync() {
        return op() == IoOp.READ || flags().contains(IoFlag.SYNC);
    }

    default boolean isMeta() {
        return flags().contains(IoFlag.META);
    }
}
