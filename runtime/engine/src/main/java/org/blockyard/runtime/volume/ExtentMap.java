package org.blockyard.runtime.volume;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.blockyard.runtime.alloc.FileState;

/**
 * A file's extent map as the volume stores it: logical run to physical run, written or unwritten, kept
 * merged where runs continue each other in the same state (as {@link FileState} keeps it, so the stored
 * extent count is the file's). For an extent-API owner the logical block is the physical block. Not
 * thread-safe: the journal's commit thread owns the live copy.
 */
public final class ExtentMap {
    /** One mapped run {@code [logical, logical + blocks)} to {@code [physical, physical + blocks)}. */
    public record Run(long logical, long physical, long blocks, boolean unwritten) {
        public long physicalEnd() {
            return physical + blocks;
        }
    }

    private final TreeMap<Long, Run> runs = new TreeMap<>();

    public List<Run> runs() {
        return new ArrayList<>(runs.values());
    }

    public int size() {
        return runs.size();
    }

    public long mappedBlocks() {
        long n = 0;
        for (Run r : runs.values()) n += r.blocks();
        return n;
    }

    /** Maps {@code [logical, +blocks)} to {@code physical} over whatever was there. */
    public void put(long logical, long physical, long blocks, boolean unwritten) {
        remove(logical, blocks, false);
        Run cur = new Run(logical, physical, blocks, unwritten);
        Map.Entry<Long, Run> prev = runs.lowerEntry(logical);
        if (prev != null && continues(prev.getValue(), cur)) {
            runs.remove(prev.getKey());
            cur = new Run(prev.getValue().logical(), prev.getValue().physical(), prev.getValue().blocks() + blocks, unwritten);
        }
        Run next = runs.get(logical + blocks);
        if (next != null && continues(cur, next)) {
            runs.remove(next.logical());
            cur = new Run(cur.logical(), cur.physical(), cur.blocks() + next.blocks(), unwritten);
        }
        runs.put(cur.logical(), cur);
    }

    private static boolean continues(Run a, Run b) {
        return a.logical() + a.blocks() == b.logical() && a.physicalEnd() == b.physical() && a.unwritten() == b.unwritten();
    }

    /**
     * Unmaps {@code [logical, +blocks)} (only its unwritten runs with {@code unwrittenOnly}); answers the
     * pieces removed.
     */
    public List<Run> remove(long logical, long blocks, boolean unwrittenOnly) {
        long to = logical + blocks;
        List<Run> out = new ArrayList<>();
        for (Run r : overlapping(logical, to)) {
            if (unwrittenOnly && !r.unwritten()) continue;
            runs.remove(r.logical());
            long a = Math.max(r.logical(), logical), b = Math.min(r.logical() + r.blocks(), to);
            if (r.logical() < a) runs.put(r.logical(), new Run(r.logical(), r.physical(), a - r.logical(), r.unwritten()));
            long tail = r.logical() + r.blocks() - b;
            if (tail > 0) runs.put(b, new Run(b, r.physical() + (b - r.logical()), tail, r.unwritten()));
            out.add(new Run(a, r.physical() + (a - r.logical()), b - a, r.unwritten()));
        }
        return out;
    }

    /** Converts the unwritten runs in {@code [logical, +blocks)} to written. */
    public void markWritten(long logical, long blocks) {
        for (Run p : remove(logical, blocks, true)) put(p.logical(), p.physical(), p.blocks(), false);
    }

    public void truncate(long fromLogical) {
        remove(fromLogical, Long.MAX_VALUE / 2 - Math.max(0, fromLogical), false);
    }

    private List<Run> overlapping(long from, long to) {
        List<Run> out = new ArrayList<>();
        Map.Entry<Long, Run> head = runs.floorEntry(from);
        if (head != null && head.getValue().logical() + head.getValue().blocks() > from) out.add(head.getValue());
        for (Run r : runs.subMap(from, false, to, false).values()) out.add(r);
        if (head == null || head.getKey() != from) {
            Run at = runs.get(from);
            if (at != null && !out.contains(at)) out.add(0, at);
        }
        return out;
    }

    /** Applies one change as a {@link FileState} made it. */
    public void apply(FileState.Change change, long logical, long physical, long blocks) {
        switch (change) {
            case MAPPED -> put(logical, physical, blocks, true);
            case WRITTEN -> markWritten(logical, blocks);
            case DISCARDED -> remove(logical, blocks, true);
            case TRUNCATED -> truncate(logical);
        }
    }
}
