package org.blockyard.api.alloc;

import java.util.List;

/**
 * One page of a free-extent enumeration, in ascending block order, clipped to the range asked for.
 *
 * @param extents    the free extents found (at most the count asked for)
 * @param nextCursor where to resume (pass it as {@code fromBlock}), or -1 when the range is exhausted
 */
public record FreeExtentPage(List<Extent> extents, long nextCursor) {
    public FreeExtentPage {
        extents = List.copyOf(extents);
    }

    public boolean done() {
        return nextCursor < 0;
    }
}
