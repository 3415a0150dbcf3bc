package org.blockyard.runtime.io.dio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

class DirectIoSplitterTest {

    @Test
    void aMegabyteFromByte512HasASectorHeadPagesAndASectorTail() {
        // seed 003: raw I/O of 1 MiB starting one sector into the device
        List<DioSegment> s = DirectIoSplitter.split(512, 1 << 20, 512, 4096);
        assertEquals(new DioSegment(512, 3584, false), s.get(0), "7 sectors up to the first page boundary");
        assertEquals(new DioSegment(1 << 20, 512, false), s.get(s.size() - 1), "1 sector after the last page");
        List<DioSegment> pages = s.subList(1, s.size() - 1);
        assertEquals(255, pages.size());
        for (int i = 0; i < pages.size(); i++)
            assertEquals(new DioSegment(4096L * (i + 1), 4096, true), pages.get(i));
        assertTiles(s, 512, 1 << 20);
    }

    @Test
    void anAlignedRangeIsAllPages() {
        List<DioSegment> s = DirectIoSplitter.split(8192, 5 * 4096, 512, 4096);
        assertEquals(5, s.size());
        assertTrue(s.stream().allMatch(DioSegment::pageGranular));
        assertTiles(s, 8192, 5 * 4096);
    }

    @Test
    void aRangeWithoutAWholePageStaysSectorGranularAndNeverCrossesAPage() {
        assertEquals(List.of(new DioSegment(1024, 1024, false)), DirectIoSplitter.split(1024, 1024, 512, 4096));
        assertEquals(List.of(new DioSegment(3584, 512, false), new DioSegment(4096, 1024, false)),
                DirectIoSplitter.split(3584, 1536, 512, 4096));
    }

    @Test
    void whenSectorsArePagesEverySectorIsAPage() {
        List<DioSegment> s = DirectIoSplitter.split(4096, 3 * 4096, 4096, 4096);
        assertEquals(3, s.size());
        assertTrue(s.stream().allMatch(DioSegment::pageGranular));
    }

    @Test
    void anEmptyRangeHasNoSegments() {
        assertTrue(DirectIoSplitter.split(4096, 0, 512, 4096).isEmpty());
    }

    @Test
    void segmentsAlwaysTileTheRangeWithPagesOnlyInTheMiddle() {
        Random r = new Random(3);
        for (int i = 0; i < 2000; i++) {
            long off = 512L * r.nextInt(100_000);
            long len = 512L * r.nextInt(5_000);
            List<DioSegment> s = DirectIoSplitter.split(off, len, 512, 4096);
            assertTiles(s, off, len);
            int firstPage = -1;
            int lastPage = -1;
            for (int k = 0; k < s.size(); k++) {
                DioSegment g = s.get(k);
                assertEquals(g.byteOffset() / 4096, (g.endByteOffset() - 1) / 4096, () -> "within one page: " + g);
                if (g.pageGranular()) {
                    assertEquals(0, g.byteOffset() % 4096);
                    assertEquals(4096, g.bytes());
                    if (firstPage < 0) firstPage = k;
                    lastPage = k;
                }
            }
            if (firstPage >= 0) {
                assertTrue(firstPage <= 1 && lastPage >= s.size() - 2, () -> "at most one head and one tail segment: " + s);
                for (int k = firstPage; k <= lastPage; k++) assertTrue(s.get(k).pageGranular());
            } else {
                assertTrue(s.size() <= 2, () -> "no whole page: at most two partial pages " + s);
            }
        }
    }

    @Test
    void misalignedOrNegativeRangesAndOddSizesAreRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> DirectIoSplitter.split(100, 4096, 512, 4096));
        assertTrue(e.getMessage().contains("offset 100"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> DirectIoSplitter.split(512, 1000, 512, 4096));
        assertThrows(IllegalArgumentException.class, () -> DirectIoSplitter.split(-512, 512, 512, 4096));
        assertThrows(IllegalArgumentException.class, () -> DirectIoSplitter.split(0, -512, 512, 4096));
        assertThrows(IllegalArgumentException.class, () -> DirectIoSplitter.split(0, 512, 500, 4096));
        assertThrows(IllegalArgumentException.class, () -> DirectIoSplitter.split(0, 512, 512, 256));
        assertThrows(IllegalArgumentException.class, () -> DirectIoSplitter.split(0, 512, 0, 4096));
        assertThrows(IllegalArgumentException.class, () -> DirectIoSplitter.split(Long.MAX_VALUE - 511, 1024, 512, 4096));
        assertThrows(IllegalArgumentException.class, () -> new DioSegment(0, 0, false));
        assertFalse(new DioSegment(0, 512, false).pageGranular());
    }

    private static void assertTiles(List<DioSegment> s, long off, long len) {
        long at = off;
        for (DioSegment g : s) {
            assertEquals(at, g.byteOffset(), () -> "segments are contiguous: " + s);
            assertEquals(0, g.bytes() % 512);
            at = g.endByteOffset();
        }
        assertEquals(off + len, at);
    }
}
