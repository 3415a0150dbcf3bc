package org.blockyard.runtime.io;

import java.util.EnumMap;
import java.util.Map;

import org.blockyard.api.io.BlockRequest;
import org.blockyard.api.io.IoFlag;
import org.blockyard.api.io.IoOp;
import org.blockyard.api.io.IoRequest;
import org.blockyard.runtime.io.trace.BlktraceAction;
import org.blockyard.runtime.io.trace.BlktraceWriter;

/**
 * Queue events written as a blktrace: Q per submission, M or F per merge, I per new request, D per issue,
 * C per completion. The pid of an event is the owner (io context) of the submission or request; cpu 0.
 * Also counts each action as the queue reports it, to compare with what blkparse reads back.
 */
public final class TraceEvents implements QueueEvents {
    private final BlktraceWriter writer;
    private final Map<BlktraceAction, Long> reported = new EnumMap<>(BlktraceAction.class);

    public TraceEvents(BlktraceWriter writer) {
        this.writer = writer;
    }

    private static int rwbs(IoOp op, java.util.Set<IoFlag> flags) {
        int r = 0;
        if (op == IoOp.WRITE) r |= BlktraceWriter.RW_WRITE;
        if (op == IoOp.FLUSH) r |= BlktraceWriter.RW_FLUSH;
        if (flags.contains(IoFlag.SYNC)) r |= BlktraceWriter.RW_SYNC;
        if (flags.contains(IoFlag.META)) r |= BlktraceWriter.RW_META;
        if (flags.contains(IoFlag.AHEAD)) r |= BlktraceWriter.RW_AHEAD;
        if (flags.contains(IoFlag.FUA)) r |= BlktraceWriter.RW_FUA;
        return r;
    }

    private static int pid(long owner) {
        return (int) Math.floorMod(owner, 1L << 30) + 1;
    }

    private void bio(long now, BlktraceAction a, IoRequest bio) {
        reported.merge(a, 1L, Long::sum);
        writer.event(now, a, bio.sector(), bio.sectors() * IoRequest.SECTOR_BYTES, rwbs(bio.op(), bio.flags()),
                pid(bio.owner()), 0);
    }

    private void rq(long now, BlktraceAction a, BlockRequest rq) {
        reported.merge(a, 1L, Long::sum);
        writer.event(now, a, rq.sector(), rq.sectors() * IoRequest.SECTOR_BYTES, rwbs(rq.op(), rq.flags()),
                pid(rq.owner()), 0);
    }

    @Override public void queued(IoRequest bio, long nowNanos) { bio(nowNanos, BlktraceAction.QUEUE, bio); }
    @Override public void backMerged(IoRequest bio, Request into, long nowNanos) { bio(nowNanos, BlktraceAction.BACKMERGE, bio); }
    @Override public void frontMerged(IoRequest bio, Request into, long nowNanos) { bio(nowNanos, BlktraceAction.FRONTMERGE, bio); }
    @Override public void inserted(Request rq, long nowNanos) { rq(nowNanos, BlktraceAction.INSERT, rq); }
    @Override public void issued(Request rq, long nowNanos) { rq(nowNanos, BlktraceAction.ISSUE, rq); }
    @Override public void completed(Request rq, long nowNanos, boolean error) { rq(nowNanos, BlktraceAction.COMPLETE, rq); }

    /** Events of {@code action} the queue reported. */
    public long reported(BlktraceAction action) {
        return reported.getOrDefault(action, 0L);
    }

    public BlktraceWriter writer() {
        return writer;
    }
}
