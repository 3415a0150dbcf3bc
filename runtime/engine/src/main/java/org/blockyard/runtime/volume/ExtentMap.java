package org.blockyard.runtime.volume;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
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

    private final TreeMap<Long, Run> runs = new TreeMap<>(); // every run but the tail
    /** The last run, held out of the tree while appends grow it (one field to replace, no tree search); or null. */
    private Run tail;
    /**
     * The lowest logical block at which a run was made, grown, cut or removed since {@link #takeChangedFrom}:
     * every run that starts below it is as it was. {@code Long.MAX_VALUE} when nothing changed.
     */
    private long changedFrom = Long.MAX_VALUE;
    /** File-table slots the volume's catalog counted for this map (guarded by whatever guards the map). */
    int slotsCounted;

    private void changed(long logical) {
        if (logical < changedFrom) changedFrom = logical;
    }

    /** Answers {@link #changedFrom} and starts counting again (the metadata lays out the changed part). */
    public long takeChangedFrom() {
        long c = changedFrom;
        changedFrom = Long.MAX_VALUE;
        return c;
    }

    /** Puts the tail back into the tree, before a change that is not an append. */
    private void settle() {
        if (tail != null) runs.put(tail.logical(), tail);
        tail = null;
    }

    public List<Run> runs() {
        List<Run> out = new ArrayList<>(runs.size() + 1);
        out.addAll(runs.values());
        if (tail != null) out.add(tail);
        return out;
    }

    /** The runs that start at {@code logical} or later, in order. */
    public Iterator<Run> from(long logical) {
        Iterator<Run> tree = runs.tailMap(logical, true).values().iterator();
        Run last = tail != null && tail.logical() >= logical ? tail : null;
        return new Iterator<>() {
            private boolean lastGiven = last == null;

            @Override
            public boolean hasNext() {
                return tree.hasNext() || !lastGiven;
            }

            @Override
            public Run next() {
                if (tree.hasNext()) return tree.next();
                if (lastGiven) throw new NoSuchElementException();
                lastGiven = true;
                return last;
            }
        };
    }

    /**
     * Whether {@code [logical, +blocks)} is mapped throughout, mapping each block to itself (an extent-API
     * owner's map): a walk over the runs that meet the range, not the whole map.
     */
    public boolean holdsIdentity(long logical, long blocks) {
        long at = logical, end = logical + blocks;
        Map.Entry<Long, Run> floor = runs.floorEntry(logical);
        // From the tree's run at or below it; with none, from the first run (the tail may hold the range).
        Iterator<Run> it = from(floor != null ? floor.getKey() : Long.MIN_VALUE);
        while (at < end && it.hasNext()) {
            Run r = it.next();
            if (r.logical() > at) return false; // a hole
            long rEnd = r.logical() + r.blocks();
            if (rEnd <= at) continue;
            if (r.physical() != r.logical()) return false;
            at = rEnd;
        }
        return at >= end;
    }

    public int size() {
        return runs.size() + (tail == null ? 0 : 1);
    }

    public long mappedBlocks() {
        long n = tail == null ? 0 : tail.blocks();
        for (Run r : runs.values()) n += r.blocks();
        return n;
    }

    /**
     * Maps {@code [logical, +blocks)} to {@code physical} over whatever was there. An append or a hole filled
     * (nothing mapped in the range, the common cases) touches only its neighbours.
     */
    public void put(long logical, long physical, long blocks, boolean unwritten) {
        Run last = tail != null ? tail : runs.isEmpty() ? null : runs.lastEntry().getValue();
        if (last == null || last.logical() + last.blocks() <= logical) { // an append: beyond every run
            Run cur = new Run(logical, physical, blocks, unwritten);
            if (last != null && continues(last, cur)) {
                changed(last.logical());
                cur = new Run(last.logical(), last.physical(), last.blocks() + blocks, unwritten);
                if (tail == null) runs.remove(last.logical()); // it leaves the tree to be the tail
            } else {
                changed(logical);
                if (tail != null) runs.put(tail.logical(), tail);
            }
            tail = cur;
            return;
        }
        settle();
        long to = logical + blocks;
        Map.Entry<Long, Run> before = runs.floorEntry(logical);
        Map.Entry<Long, Run> after = runs.ceilingEntry(logical);
        if ((before != null && before.getValue().logical() + before.getValue().blocks() > logical)
                || (after != null && after.getKey() < to)) {
            remove(logical, blocks, false); // cut what was there: nothing starts in the range any more
            before = runs.floorEntry(logical);
            after = runs.ceilingEntry(logical);
        }
        Run cur = new Run(logical, physical, blocks, unwritten);
        if (before != null && continues(before.getValue(), cur)) {
            Run p = before.getValue();
            cur = new Run(p.logical(), p.physical(), p.blocks() + blocks, unwritten); // replaces p: same key
        }
        if (after != null && after.getKey() == to && continues(cur, after.getValue())) {
            runs.remove(to);
            cur = new Run(cur.logical(), cur.physical(), cur.blocks() + after.getValue().blocks(), unwritten);
        }
        changed(cur.logical());
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
        settle();
        long to = logical + blocks;
        List<Run> out = new ArrayList<>();
        for (Run r : overlapping(logical, to)) {
            if (unwrittenOnly && !r.unwritten()) continue;
            changed(r.logical());
            runs.remove(r.logical());
            long a = Math.max(r.logical(), logical), b = Math.min(r.logical() + r.blocks(), to);
            if (r.logical() < a) runs.put(r.logical(), new Run(r.logical(), r.physical(), a - r.logical(), r.unwritten()));
            long rest = r.logical() + r.blocks() - b;
            if (rest > 0) runs.put(b, new Run(b, r.physical() + (b - r.logical()), rest, r.unwritten()));
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
            case PUNCHED -> remove(logical, blocks, false);
            case TRUNCATED -> truncate(logical);
        }
    }
}
