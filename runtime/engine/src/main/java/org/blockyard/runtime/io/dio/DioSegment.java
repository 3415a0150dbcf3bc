package org.blockyard.runtime.io.dio;

/**
 * One piece of a direct I/O request as the block layer receives it.
 *
 * @param byteOffset device offset of the first byte, a multiple of the sector size
 * @param bytes length; a page for page-granular pieces, a multiple of the sector size otherwise
 * @param pageGranular true for a whole, page-aligned page; false for the sector-granular head or tail
 */
public record DioSegment(long byteOffset, int bytes, boolean pageGranular) {
    public DioSegment {
        if (byteOffset < 0) throw new IllegalArgumentException("byte offset " + byteOffset + " is negative");
        if (bytes <= 0) throw new IllegalArgumentException("segment of " + bytes + " bytes; at least 1 is needed");
    }

    /** First byte after the segment (exclusive end). */
    public long endByteOffset() {
        return byteOffset + bytes;
    }
}
