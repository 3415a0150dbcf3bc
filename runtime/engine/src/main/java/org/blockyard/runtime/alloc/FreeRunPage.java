package org.blockyard.runtime.alloc;

import java.util.ArrayList;
import java.util.List;

import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.FreeExtentPage;

/**
 * One page of a free-extent enumeration, filled group by group in ascending order: runs that touch across
 * a group boundary are merged. The page is full once it holds {@code max} runs and one more run was seen,
 * so its last run is known to be complete and the cursor can resume right after it.
 */
final class FreeRunPage {
    private final long to;
    private final int max;
    private final List<Extent> runs = new ArrayList<>();
    private boolean full;

    FreeRunPage(long to, int max) {
        this.to = to;
        this.max = max;
    }

    /** How many runs to ask the next group for. */
    int wanted() {
        return (int) Math.min(Integer.MAX_VALUE, max - runs.size() + 1L);
    }

    /** Adds a group's runs, in order; answers false once the page is full. */
    boolean add(List<Extent> groupRuns) {
        for (Extent e : groupRuns) {
            int last = runs.size() - 1;
            if (last >= 0 && runs.get(last).end() == e.start()) {
                runs.set(last, new Extent(runs.get(last).start(), runs.get(last).blocks() + e.blocks()));
            } else if (runs.size() < max) {
                runs.add(e);
            } else {
                full = true;
                return false;
            }
        }
        return true;
    }

    boolean full() {
        return full;
    }

    FreeExtentPage page() {
        long next = full && runs.get(runs.size() - 1).end() < to ? runs.get(runs.size() - 1).end() : -1;
        return new FreeExtentPage(runs, next);
    }
}
