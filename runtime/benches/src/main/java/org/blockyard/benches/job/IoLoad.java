package org.blockyard.benches.job;

import java.nio.ByteBuffer;
import java.util.Random;

import org.blockyard.api.io.IoCompletion;
import org.blockyard.api.io.IoOp;
import org.blockyard.api.io.IoRequest;

/**
 * One clone of an {@code ioengine=queue} job: which submission comes next and what a completion says. It holds
 * no clock and sends nothing: a driver does, the same one for every clone of a run: {@link IoClient} (an actor
 * telling the queue actor {@code Submit}, on a memory device or an image file) or {@link SimClients} (the
 * simulated disk's event loop). The driver asks {@link #next} until it answers null, ships each request, hands
 * each completion to {@link #completed}, and, after a think time, {@link #wake}s the slot.
 *
 * <p>A clone has {@code iodepth} slots, each free, in flight or thinking; a request's id carries its slot in
 * its low {@value #SLOT_BITS} bits. Offsets lie in the clone's region {@code [offset + clone * offset_increment,
 * + size)} (size: the rest of the device when not given): sequential ones one after the other, wrapping when
 * time-based; random ones aligned to the smallest request size. Real devices get a payload buffer per slot.
 */
final class IoLoad {
    static final int SLOT_BITS = 20;

    final JobStats stats;
    final long owner;
    private final JobSpec job;
    private final Random rnd;
    private final long regionSector, regionSectors, alignSectors;
    private final ByteBuffer[] buffers; // null on the simulated disk
    private final long[] sentAt;
    private final int[] free;
    private int freeCount, inFlight;
    private long seq, nextSector, issuedBytes;

    /**
     * @param owner      the io context of the clone's requests (anticipatory and cfq keep state per owner)
     * @param capacitySectors the device's; the region has been checked to fit
     * @param payloads   give each request a buffer (a real device moves the bytes)
     */
    IoLoad(JobSpec job, int clone, long owner, long capacitySectors, boolean payloads, long startNanos, long seed) {
        this.job = job;
        this.owner = owner;
        this.stats = new JobStats(job, clone, startNanos);
        this.rnd = new Random(seed * 1_000_003L + owner);
        this.regionSector = (job.offsetBytes() + clone * job.offsetIncrementBytes()) / IoRequest.SECTOR_BYTES;
        this.regionSectors = job.sizeBytes() != null ? job.sizeBytes() / IoRequest.SECTOR_BYTES : capacitySectors - regionSector;
        this.alignSectors = Math.max(1, job.bs().min() / IoRequest.SECTOR_BYTES);
        this.nextSector = regionSector;
        this.sentAt = new long[job.iodepth()];
        this.free = new int[job.iodepth()];
        for (int i = 0; i < free.length; i++) free[i] = free.length - 1 - i;
        this.freeCount = free.length;
        this.buffers = payloads ? new ByteBuffer[job.iodepth()] : null;
        if (payloads) {
            for (int i = 0; i < buffers.length; i++) {
                buffers[i] = ByteBuffer.allocateDirect((int) job.bs().max());
                while (buffers[i].hasRemaining()) buffers[i].put((byte) (owner + buffers[i].position()));
            }
        }
    }

    static int slot(long id) {
        return (int) (id & ((1 << SLOT_BITS) - 1));
    }

    /** The next submission at {@code now}, or null when no slot is free or the clone has issued what it will. */
    IoRequest next(long now) {
        if (freeCount == 0 || !stats.more(now, issuedBytes)) return null;
        int slot = free[--freeCount];
        long bytes = Math.min(job.bs().next(rnd), job.bytesPerClone() - issuedBytes); // the last one may be shorter
        int sectors = (int) (bytes / IoRequest.SECTOR_BYTES);
        long sector;
        if (job.rw().random) {
            long slots = Math.max(1, (regionSectors - sectors) / alignSectors + 1);
            sector = regionSector + Math.floorMod(rnd.nextLong(), slots) * alignSectors;
        } else {
            long end = regionSector + regionSectors;
            if (nextSector + sectors > end) {
                if (nextSector < end && !job.timeBased()) sectors = (int) (end - nextSector); // the region's last, shorter
                else nextSector = regionSector;
            }
            sector = nextSector;
            nextSector += sectors;
        }
        boolean read = job.rw().reads && (!job.rw().writes || rnd.nextInt(100) < job.rwmixread());
        IoRequest r = new IoRequest(seq++ << SLOT_BITS | slot, sector, sectors, read ? IoOp.READ : IoOp.WRITE,
                job.flags(), owner, null);
        if (buffers != null) r = r.withPayload(buffers[slot].duplicate().clear().limit(sectors * IoRequest.SECTOR_BYTES));
        issuedBytes += (long) sectors * IoRequest.SECTOR_BYTES;
        sentAt[slot] = now;
        inFlight++;
        stats.sent(inFlight);
        return r;
    }

    /**
     * The completion of request {@code id} at {@code now}, with the queue's own times in {@code c}. With
     * {@code roundTrip}, the time from {@link #next} to now less the queue's part is the submission latency.
     * Answers the think time before the slot may send again (0: it is free now).
     */
    long completed(long id, IoCompletion c, long now, boolean roundTrip) {
        int slot = slot(id);
        inFlight--;
        long bytes = (long) c.sectors() * IoRequest.SECTOR_BYTES;
        if (stats.answered(now, 1, bytes)) {
            long clat = Math.max(0, c.completedNanos() - c.queuedNanos());
            stats.clat.record(clat);
            if (roundTrip) stats.slat.record(Math.max(0, now - sentAt[slot] - clat));
            if (c.op() == IoOp.READ) {
                stats.reads++;
                stats.readBytes += bytes;
            } else {
                stats.writes++;
                stats.writeBytes += bytes;
            }
            if (c.requestSectors() > c.sectors()) stats.merged++;
            stats.requestSectors += c.requestSectors();
        }
        if (job.thinkNanos() > 0 && stats.more(now, issuedBytes)) return job.thinkNanos();
        free[freeCount++] = slot;
        return 0;
    }

    /** A slot's think time is over: it may send again. */
    void wake(int slot) {
        free[freeCount++] = slot;
    }

    /** Done when nothing is in flight and nothing more will be sent; marks the stats finished then. */
    boolean done(long now) {
        if (inFlight > 0 || stats.more(now, issuedBytes)) return false;
        if (!stats.finished) stats.finish(now);
        return true;
    }
}
