package org.blockyard.api.io;

/**
 * Limits a queue enforces, after {@code /sys/block/DEV/queue/}.
 *
 * @param maxSectors         largest request after merging, in sectors. Default 256 = 128 KiB, a whole
 *                           number of pages; with 255 (the IDE value) a stream of 4 KiB pages goes out as
 *                           127 KiB and 1 KiB requests in turn ("127K, 1K, 127K, 1K", seed 003)
 * @param logicalBlockBytes  smallest addressable unit of the device (512)
 * @param physicalBlockBytes unit the device writes internally (4096); direct I/O splits on it
 * @param queueDepth         requests in flight on the device at once; 1 for a disk without command queueing
 */
public record QueueLimits(int maxSectors, int logicalBlockBytes, int physicalBlockBytes, int queueDepth) {
    public static final QueueLimits DEFAULT = new QueueLimits(256, 512, 4096, 1);

    public QueueLimits {
        if (logicalBlockBytes < IoRequest.SECTOR_BYTES || Integer.bitCount(logicalBlockBytes) != 1)
            throw new IllegalArgumentException("logical block size must be a power of two >= 512: "
                    + logicalBlockBytes);
        if (physicalBlockBytes < logicalBlockBytes || Integer.bitCount(physicalBlockBytes) != 1)
            throw new IllegalArgumentException("physical block size must be a power of two >= the logical one: "
                    + physicalBlockBytes);
        if (maxSectors < physicalBlockBytes / IoRequest.SECTOR_BYTES)
            throw new IllegalArgumentException("max_sectors " + maxSectors + " is below one physical block");
        if (queueDepth < 1) throw new IllegalArgumentException("queue depth must be at least 1: " + queueDepth);
    }

    /** Largest request in bytes. */
    public long maxBytes() {
        return (long) maxSectors * IoRequest.SECTOR_BYTES;
    }
}
