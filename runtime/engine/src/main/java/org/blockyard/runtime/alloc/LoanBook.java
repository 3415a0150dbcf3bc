package org.blockyard.runtime.alloc;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.Extent;

/**
 * One group's record of the blocks it lent to sessions: which session each lent piece belongs to, whether the
 * session has handed it out yet or not. Owned by the group's actor. The bitmap marks lent blocks used, so no
 * search of the group ever takes them; this book is how a release that reaches the group (from another
 * caller, or from the session's own allocator path) learns that blocks were the session's, and asks it.
 */
final class LoanBook {
    private record Piece(long end, LoanSession session) {}

    /** A part of a release that lies in a lent piece. */
    private record Part(long from, long to, LoanSession session) {}

    private final TreeMap<Long, Piece> pieces = new TreeMap<>();

    void lent(Extent e, LoanSession s) {
        pieces.put(e.start(), new Piece(e.end(), s));
    }

    /** Forgets whatever of {@code [from, to)} is booked. */
    void remove(long from, long to) {
        Map.Entry<Long, Piece> e = pieces.floorEntry(from);
        if (e == null || e.getValue().end() <= from) e = pieces.higherEntry(from);
        while (e != null && e.getKey() < to) {
            long s = e.getKey();
            Piece p = e.getValue();
            pieces.remove(s);
            if (s < from) pieces.put(s, new Piece(from, p.session()));
            if (p.end() > to) pieces.put(to, new Piece(p.end(), p.session()));
            e = pieces.higherEntry(s);
        }
    }

    /** Forgets every piece of {@code s}: what it handed out is an ordinary allocation from now on. */
    void ended(LoanSession s) {
        pieces.values().removeIf(p -> p.session() == s);
    }

    /**
     * Takes back, from the sessions that hold them, the lent blocks a release of {@code extents} touches: a
     * block a session handed out becomes an ordinary allocation, which the release may then free; a block no
     * session handed out (still on loan, or released already and on its way back) refuses the release with
     * {@code DoubleFree}, and then nothing changed. The sessions involved are locked together, in one order.
     */
    AllocationException takeBack(List<Extent> extents) {
        if (pieces.isEmpty()) return null;
        List<Part> parts = new ArrayList<>();
        for (Extent x : extents) {
            Map.Entry<Long, Piece> e = pieces.floorEntry(x.start());
            if (e == null || e.getValue().end() <= x.start()) e = pieces.higherEntry(x.start());
            while (e != null && e.getKey() < x.end()) {
                parts.add(new Part(Math.max(e.getKey(), x.start()), Math.min(e.getValue().end(), x.end()),
                        e.getValue().session()));
                e = pieces.higherEntry(e.getKey());
            }
        }
        if (parts.isEmpty()) return null;
        TreeSet<LoanSession> sessions = new TreeSet<>(Comparator.comparingLong(LoanSession::id));
        for (Part p : parts) sessions.add(p.session());
        List<LoanSession> locked = new ArrayList<>();
        try {
            for (LoanSession s : sessions) {
                s.lock();
                locked.add(s);
            }
            for (Part p : parts)
                if (!p.session().handedOutOrLetGo(p.from(), p.to()))
                    return new AllocationException.DoubleFree("blocks [" + p.from() + ", " + p.to()
                            + ") are free: lent to a session and not handed out, or released already");
            for (Part p : parts) {
                p.session().takenBack(p.from(), p.to());
                remove(p.from(), p.to());
            }
            return null;
        } finally {
            for (LoanSession s : locked) s.unlock();
        }
    }
}
