package org.blockyard.runtime.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

import org.junit.jupiter.api.Test;

import org.blockyard.api.alloc.Extent;

/** A session's magazines against a plain list of pieces. */
class MagazinesTest {

    @Test
    void piecesComeBackWholeOnceEachOfTheLengthAndAlignmentAsked() {
        Random rnd = new Random(7);
        Magazines m = new Magazines();
        List<Extent> model = new ArrayList<>();
        long next = 0;
        for (int op = 0; op < 20_000; op++) {
            long length = 1L << rnd.nextInt(5);
            if (rnd.nextInt(3) > 0) {
                next += rnd.nextInt(3); // some pieces start off the alignment asked below
                m.add(next, length);
                model.add(new Extent(next, length));
                next += length;
            } else {
                int align = rnd.nextBoolean() ? 1 : 4;
                Extent e = m.take(length, align);
                Extent expected = model.stream().filter(x -> x.blocks() == length && x.start() % align == 0)
                        .findAny().orElse(null);
                if (expected == null) {
                    assertNull(e, "no piece of " + length + " on " + align + " is held");
                } else {
                    assertTrue(e != null && e.blocks() == length && e.start() % align == 0, "took " + e);
                    assertTrue(model.remove(e), e + " was held once");
                }
            }
            assertEquals(model.stream().mapToLong(Extent::blocks).sum(), m.blocks());
        }
        List<Extent> sorted = new ArrayList<>(model);
        sorted.sort(null);
        assertEquals(sorted, m.toList());
        Set<Long> starts = new HashSet<>();
        for (Extent e : m.drain()) assertTrue(starts.add(e.start()));
        assertEquals(0, m.blocks());
        assertTrue(m.toList().isEmpty());
    }

    @Test
    void aHintTakesThePieceThatStartsThereAndOverlapsAreSeen() {
        Magazines m = new Magazines();
        m.add(100, 8);
        m.add(108, 8);
        m.add(200, 4);
        assertNull(m.takeAt(104, 8), "no piece starts at 104");
        assertEquals(new Extent(108, 8), m.takeAt(108, 8));
        assertNull(m.takeAt(108, 8), "taken already");
        assertTrue(m.intersects(107, 109));
        assertFalse(m.intersects(108, 116));
        assertTrue(m.intersects(203, 300));
        assertEquals(20 - 8, m.blocks());
    }

    @Test
    void theLongestLengthAskedForThatFitsIsFound() {
        Magazines m = new Magazines();
        assertEquals(0, m.askedAtMost(100));
        m.of(16, true).asked = 3;
        m.of(4, true).asked = 1;
        m.of(8, true); // made, never asked
        assertEquals(16, m.askedAtMost(100));
        assertEquals(4, m.askedAtMost(15));
        assertEquals(0, m.askedAtMost(3));
    }
}
