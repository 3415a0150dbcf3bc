package org.blockyard.runtime.io.dio;

import java.util.ArrayList;
import java.util.List;

/**
 * Splits a direct (raw) I/O request the way the multi-block raw I/O patch of 2.4 did (seed 003):
 * {@code <initial> <pagealigned> <final>} — the head up to the first page boundary and the tail
 * after the last one go down at sector granularity, the page-aligned middle one page at a time.
 * The pages are contiguous, so the queue merges them back into requests as large as its limit
 * allows (Jens Axboe: "a 1MB contiguous request broken into 256 pages ... will be merged into the
 * biggest possible request the lower level driver can handle").
 *
 * <p>The head and tail are each one segment: whole sectors inside one page. A sector-granular
 * segment never crosses a page boundary, so a range that holds no whole page gives one such
 * segment per page it touches. When the sector size equals the page size, every sector is a page. Direct I/O bypasses the page cache, so
 * offset and length must be multiples of the sector size.
 */
public final class DirectIoSplitter {
    private DirectIoSplitter() {}

    /**
     * @param byteOffset device offset, a multiple of {@code sectorBytes}
     * @param length bytes, a multiple of {@code sectorBytes}; 0 gives no segments
     * @param sectorBytes a power of two
     * @param pageBytes a power of two, at least {@code sectorBytes}
     * @return the segments in offset order; they tile {@code [byteOffset, byteOffset + length)}
     */
    public static List<DioSegment> split(long byteOffset, long length, int sectorBytes, int pageBytes) {
        if (sectorBytes <= 0 || Integer.bitCount(sectorBytes) != 1)
            throw new IllegalArgumentException("sector size " + sectorBytes + " is not a positive power of two");
        if (pageBytes < sectorBytes || Integer.bitCount(pageBytes) != 1)
            throw new IllegalArgumentException("page size " + pageBytes + " is not a power of two of at least the sector size "
                    + sectorBytes);
        if (byteOffset < 0) throw new IllegalArgumentException("byte offset " + byteOffset + " is negative");
        if (length < 0) throw new IllegalArgumentException("length " + length + " is negative");
        if (byteOffset % sectorBytes != 0)
            throw new IllegalArgumentException("direct I/O offset " + byteOffset + " is not a multiple of the sector size "
                    + sectorBytes);
        if (length % sectorBytes != 0)
            throw new IllegalArgumentException("direct I/O length " + length + " is not a multiple of the sector size "
                    + sectorBytes);
        if (length > Long.MAX_VALUE - byteOffset)
            throw new IllegalArgumentException("range " + byteOffset + " + " + length + " overflows");

        List<DioSegment> out = new ArrayList<>();
        long end = byteOffset + length;
        long firstPage = Math.floorDiv(byteOffset + pageBytes - 1, pageBytes) * pageBytes; // startpg
        long lastPage = Math.floorDiv(end, pageBytes) * pageBytes;                         // endpg
        if (firstPage >= lastPage) {
            addSectorRun(out, byteOffset, end, pageBytes);
            return out;
        }
        addSectorRun(out, byteOffset, firstPage, pageBytes);
        for (long p = firstPage; p < lastPage; p += pageBytes) out.add(new DioSegment(p, pageBytes, true));
        addSectorRun(out, lastPage, end, pageBytes);
        return out;
    }

    /** Sector-granular segments for {@code [from, to)}, cut at page boundaries. */
    private static void addSectorRun(List<DioSegment> out, long from, long to, int pageBytes) {
        while (from < to) {
            long next = Math.min(to, (from / pageBytes + 1) * pageBytes);
            out.add(new DioSegment(from, (int) (next - from), false));
            from = next;
        }
    }
}
