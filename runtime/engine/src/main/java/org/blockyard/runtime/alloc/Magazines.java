package org.blockyard.runtime.alloc;

import java.util.ArrayList;
import java.util.List;

import org.blockyard.api.alloc.Extent;

/**
 * A session's free pieces, one magazine per piece length: a stack of starts, so the common take (a piece of
 * the length asked, on the alignment asked) and the common put are a few array operations, with no tree and no
 * boxing. Pieces never merge: each keeps the length it was lent or handed out with (a request is never carved out
 * of a piece cut for a larger one, where the allocator's own best fit would have placed it elsewhere).
 *
 * <p>Each magazine also counts how often its length was asked for, so the session knows which lengths to lend
 * ahead and which released pieces are worth keeping. No locking of its own: its holder guards it. Lookups by a
 * block (a hint, an overlap check) scan the magazines; they are the rare calls.
 */
final class Magazines {
    /** Lengths remembered at once; past that, a magazine left empty is forgotten for a new length. */
    static final int LENGTHS = 32;
    /** Pieces the first refill of a length asks for. */
    static final int FIRST_BATCH = 8;

    /** One length's pieces. */
    static final class Magazine {
        final long length;
        long[] starts = new long[8];
        int count;
        /** How often a piece of this length was asked for. */
        long asked;
        /**
         * Pieces one refill of this length asks for: a few at first, doubled (up to the session's most) whenever a
         * call found the magazine empty, so a length asked often is lent ahead far enough to cover a refill's round
         * trip, and one asked rarely holds little.
         */
        int batch = FIRST_BATCH;
        /** Pieces the refill in flight asked for, and those it brought so far. */
        int asking, brought;
        /** Whether the last refill brought fewer pieces than it asked: the volume is short of them, not the loan slow. */
        boolean scarce;

        Magazine(long length) {
            this.length = length;
        }

        void push(long start) {
            if (count == starts.length) starts = java.util.Arrays.copyOf(starts, count * 2);
            starts[count++] = start;
        }

        /** Takes the most recent piece starting on a multiple of {@code align}; -1 when none does. */
        long pop(int align) {
            for (int i = count - 1; i >= 0; i--) {
                long s = starts[i];
                if (align <= 1 || s % align == 0) {
                    starts[i] = starts[--count];
                    return s;
                }
            }
            return -1;
        }

        /** Pieces starting on a multiple of {@code align}, counted up to {@code enough}. */
        int aligned(int align, int enough) {
            if (align <= 1) return count;
            int n = 0;
            for (int i = 0; i < count && n < enough; i++) if (starts[i] % align == 0) n++;
            return n;
        }
    }

    private final List<Magazine> magazines = new ArrayList<>();
    /** The magazine of the last length looked up: consecutive calls mostly ask one length. */
    private Magazine last;
    private long blocks;

    long blocks() {
        return blocks;
    }

    /** The magazine of {@code length}, made (and counted as asked for) when {@code create}; else null if none. */
    Magazine of(long length, boolean create) {
        Magazine m = last;
        if (m != null && m.length == length) return m;
        for (int i = 0, n = magazines.size(); i < n; i++) {
            m = magazines.get(i);
            if (m.length == length) return last = m;
        }
        if (!create) return null;
        if (magazines.size() >= LENGTHS) forgetAnEmptyOne();
        m = new Magazine(length);
        magazines.add(m);
        return last = m;
    }

    /** The longest length asked for that is at most {@code blocks}; 0 when none is. */
    long askedAtMost(long blocks) {
        long best = 0;
        for (int i = 0, n = magazines.size(); i < n; i++) {
            Magazine m = magazines.get(i);
            if (m.asked > 0 && m.length <= blocks && m.length > best) best = m.length;
        }
        return best;
    }

    /** Adds the free piece {@code [start, start + length)}. */
    void add(long start, long length) {
        of(length, true).push(start);
        blocks += length;
    }

    /** Takes a piece of exactly {@code length} blocks on a multiple of {@code align}; null when none is held. */
    Extent take(long length, int align) {
        Magazine m = of(length, false);
        long s = m == null ? -1 : m.pop(align);
        if (s < 0) return null;
        blocks -= length;
        return new Extent(s, length);
    }

    /** Takes the piece of exactly {@code length} blocks that starts at {@code at}; null when none does. */
    Extent takeAt(long at, long length) {
        Magazine m = of(length, false);
        if (m == null) return null;
        for (int i = m.count - 1; i >= 0; i--) {
            if (m.starts[i] == at) {
                m.starts[i] = m.starts[--m.count];
                blocks -= length;
                return new Extent(at, length);
            }
        }
        return null;
    }

    /** Whether any held piece has a block in {@code [from, to)}. */
    boolean intersects(long from, long to) {
        if (blocks == 0) return false;
        for (Magazine m : magazines)
            for (int i = 0; i < m.count; i++) if (m.starts[i] < to && m.starts[i] + m.length > from) return true;
        return false;
    }

    /** Every piece; the magazines are left empty (the lengths and their counts are kept). */
    List<Extent> drain() {
        List<Extent> out = toList();
        for (Magazine m : magazines) m.count = 0;
        blocks = 0;
        return out;
    }

    /** Every piece, ascending by start. */
    List<Extent> toList() {
        List<Extent> out = new ArrayList<>();
        for (Magazine m : magazines) for (int i = 0; i < m.count; i++) out.add(new Extent(m.starts[i], m.length));
        out.sort(null);
        return out;
    }

    private void forgetAnEmptyOne() {
        Magazine least = null;
        for (Magazine m : magazines) if (m.count == 0 && (least == null || m.asked < least.asked)) least = m;
        if (least != null) {
            magazines.remove(least);
            if (last == least) last = null;
        }
    }
}
