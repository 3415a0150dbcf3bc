package org.blockyard.runtime.io.elevator;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.blockyard.api.io.BlockRequest;
import org.blockyard.api.io.Dispatch;
import org.blockyard.api.io.Elevator;
import org.blockyard.api.io.ElevatorDescriptor;
import org.blockyard.api.plugin.Tunable;
import org.blockyard.api.io.ElevatorFactory;
import org.blockyard.api.io.IoRequest;
import org.blockyard.api.io.MergeKind;
import org.blockyard.api.io.QueueLimits;

/**
 * deadline, as Linux 2.6.20 {@code block/deadline-iosched.c}. Per direction (READ, WRITE) one list sorted
 * by start sector and one FIFO ordered by expiry. Dispatch continues a batch of up to {@code fifo_batch}
 * requests in ascending sector order while each starts where the last ended; otherwise it picks a direction
 * (reads first, writes once reads were picked {@code writes_starved} times in a row), serves that
 * direction's FIFO head if it has expired, else the next request above the last one, else wraps to the
 * lowest sector (one-way elevator). Asynchronous META requests are ordered like any other write
 * ({@link #schedulesMeta}).
 */
public final class DeadlineElevator implements Elevator {

    // ---- tunable defaults (Linux, HZ-independent since they are in ms) ----
    public static final long READ_EXPIRE_MS = 500;
    public static final long WRITE_EXPIRE_MS = 5000;
    public static final long WRITES_STARVED = 2;
    public static final long FIFO_BATCH = 16;
    public static final long FRONT_MERGES = 1;

    private static final int READ = 0, WRITE = 1;

    // ---- state ----
    private final long[] expireNanos = new long[2];
    private final int writesStarved;
    private final int fifoBatch;
    private final boolean frontMerges;

    /** Sort lists keyed by (start sector, seq); an entry's key is re-made after a front merge. */
    @SuppressWarnings("unchecked")
    private final TreeMap<Key, BlockRequest>[] sorted = new TreeMap[] {new TreeMap<>(), new TreeMap<>()};
    /** FIFOs keyed by (expiry, seq). */
    @SuppressWarnings("unchecked")
    private final TreeMap<Key, BlockRequest>[] fifo = new TreeMap[] {new TreeMap<>(), new TreeMap<>()};
    private final IdentityHashMap<BlockRequest, Entry> entries = new IdentityHashMap<>();

    /** The request that follows the last one issued, in sort order, per direction (at most one set). */
    private final BlockRequest[] nextRq = new BlockRequest[2];
    private long lastSector;
    private int batching;
    private int starved;
    private long expiredServed;
    private final long[] dispatched = new long[2];

    private record Key(long primary, long seq) implements Comparable<Key> {
        @Override
        public int compareTo(Key o) {
            int c = Long.compare(primary, o.primary);
            return c != 0 ? c : Long.compare(seq, o.seq);
        }
    }

    private static final class Entry {
        Key sortKey;
        Key fifoKey;
    }

    public DeadlineElevator(Map<String, Long> tunables) {
        expireNanos[READ] = tunables.get("read_expire") * 1_000_000L;
        expireNanos[WRITE] = tunables.get("write_expire") * 1_000_000L;
        writesStarved = tunables.get("writes_starved").intValue();
        fifoBatch = tunables.get("fifo_batch").intValue();
        frontMerges = tunables.get("front_merges") != 0;
    }

    // ---- helpers ----
    private static int dir(BlockRequest rq) {
        return rq.isWrite() ? WRITE : READ;
    }

    private BlockRequest latter(BlockRequest rq) {
        Entry e = entries.get(rq);
        var n = sorted[dir(rq)].higherEntry(e.sortKey);
        return n == null ? null : n.getValue();
    }

    private void remove(BlockRequest rq) {
        int d = dir(rq);
        if (nextRq[d] == rq) nextRq[d] = latter(rq);
        Entry e = entries.remove(rq);
        sorted[d].remove(e.sortKey);
        fifo[d].remove(e.fifoKey);
    }

    private boolean fifoExpired(int d, long nowNanos) {
        if (fifo[d].isEmpty()) return false;
        return fifo[d].firstKey().primary() <= nowNanos;
    }

    private void move(BlockRequest rq) {
        int d = dir(rq);
        BlockRequest after = latter(rq);
        nextRq[READ] = null;
        nextRq[WRITE] = null;
        nextRq[d] = after;
        lastSector = rq.endSector();
        remove(rq);
        dispatched[d]++;
    }

    // ---- dispatch ----
    @Override
    public Dispatch dispatch(long nowNanos) {
        boolean reads = !fifo[READ].isEmpty();
        boolean writes = !fifo[WRITE].isEmpty();
        BlockRequest rq = nextRq[WRITE] != null ? nextRq[WRITE] : nextRq[READ];
        if (rq != null) {
            if (lastSector != rq.sector()) batching += fifoBatch;   // a non-sequential request ends the batch
            if (batching < fifoBatch) return issue(rq);
        }
        int d;
        if (reads && !(writes && starved++ >= writesStarved)) {
            d = READ;
        } else if (writes) {
            starved = 0;
            d = WRITE;
        } else {
            return Dispatch.IDLE;
        }
        if (fifoExpired(d, nowNanos)) {
            batching = 0;
            expiredServed++;
            rq = fifo[d].firstEntry().getValue();
        } else if (nextRq[d] != null) {
            rq = nextRq[d];
        } else {
            batching = 0;
            rq = sorted[d].firstEntry().getValue();
        }
        return issue(rq);
    }

    private Dispatch issue(BlockRequest rq) {
        batching++;
        move(rq);
        return Dispatch.issue(rq);
    }

    // ---- callbacks ----
    @Override
    public void add(BlockRequest request, long nowNanos) {
        if (entries.containsKey(request)) throw new IllegalStateException(request + " added twice");
        int d = dir(request);
        Entry e = new Entry();
        e.sortKey = new Key(request.sector(), request.seq());
        e.fifoKey = new Key(request.arrivalNanos() + expireNanos[d], request.seq());
        entries.put(request, e);
        sorted[d].put(e.sortKey, request);
        fifo[d].put(e.fifoKey, request);
    }

    @Override
    public boolean allowMerge(BlockRequest request, IoRequest submission, MergeKind kind) {
        return kind == MergeKind.BACK || frontMerges;
    }

    @Override
    public void merged(BlockRequest request, MergeKind kind, long previousSector) {
        if (kind == MergeKind.FRONT) rekey(request);
    }

    private void rekey(BlockRequest request) {
        Entry e = entries.get(request);
        int d = dir(request);
        sorted[d].remove(e.sortKey);
        e.sortKey = new Key(request.sector(), request.seq());
        sorted[d].put(e.sortKey, request);
    }

    @Override
    public void mergedRequests(BlockRequest request, BlockRequest next, long previousSector) {
        Entry survivor = entries.get(request);
        Entry gone = entries.get(next);
        int d = dir(request);
        // the survivor takes the earlier deadline and FIFO place (deadline_merged_requests)
        if (gone.fifoKey.compareTo(survivor.fifoKey) < 0) {
            fifo[d].remove(survivor.fifoKey);
            survivor.fifoKey = new Key(gone.fifoKey.primary(), request.seq());
            fifo[d].put(survivor.fifoKey, request);
        }
        remove(next);
        if (request.sector() != previousSector) rekey(request);
    }

    @Override
    public void completed(BlockRequest request, long nowNanos) {}

    /**
     * deadline-iosched.c has no META rule: metadata waits in the write lists like any write. Taking META here
     * keeps that, so META against plain measures nothing under deadline, as in seed 004.
     */
    @Override
    public boolean schedulesMeta() {
        return true;
    }

    @Override
    public List<BlockRequest> drainAll() {
        List<BlockRequest> all = new ArrayList<>(entries.size());
        Dispatch d;
        while ((d = dispatch(Long.MAX_VALUE)) instanceof Dispatch.Issue issue) all.add(issue.request());
        return all;
    }

    @Override
    public int queued() {
        return entries.size();
    }

    // ---- introspection ----
    @Override
    public Map<String, Object> stats() {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("read_queued", sorted[READ].size());
        s.put("write_queued", sorted[WRITE].size());
        s.put("read_fifo_head_expiry_ns", fifo[READ].isEmpty() ? -1L : fifo[READ].firstKey().primary());
        s.put("write_fifo_head_expiry_ns", fifo[WRITE].isEmpty() ? -1L : fifo[WRITE].firstKey().primary());
        s.put("read_next_sector", nextRq[READ] == null ? -1L : nextRq[READ].sector());
        s.put("write_next_sector", nextRq[WRITE] == null ? -1L : nextRq[WRITE].sector());
        s.put("last_sector", lastSector);
        s.put("batching", batching);
        s.put("starved", starved);
        s.put("expired_served", expiredServed);
        s.put("reads_dispatched", dispatched[READ]);
        s.put("writes_dispatched", dispatched[WRITE]);
        return s;
    }

    // ---- descriptor ----
    public static final ElevatorDescriptor DESCRIPTOR = new ElevatorDescriptor("deadline", List.of("mq-deadline"),
            "sorted one-way elevator with per-direction expiry, reads preferred", List.of(
            new Tunable("read_expire", READ_EXPIRE_MS, 1, 600_000, "ms",
                    "a read waits at most this long before it is served out of sort order (HZ/2)"),
            new Tunable("write_expire", WRITE_EXPIRE_MS, 1, 600_000, "ms",
                    "writes are mostly asynchronous, so they may wait ten times longer (5*HZ; soft)"),
            new Tunable("writes_starved", WRITES_STARVED, 0, 1_000, "batches",
                    "read batches chosen over pending writes before writes get a turn"),
            new Tunable("fifo_batch", FIFO_BATCH, 1, 10_000, "requests",
                    "sequential requests issued per batch before expiry is checked again; 1 = FCFS"),
            new Tunable("front_merges", FRONT_MERGES, 0, 1, "bool",
                    "front merges are rare (backwards I/O); 0 saves the lookup")));

    public static final ElevatorFactory FACTORY = new ElevatorFactory() {
        @Override public ElevatorDescriptor descriptor() { return DESCRIPTOR; }
        @Override public Elevator create(QueueLimits limits, Map<String, Long> tunables) {
            return new DeadlineElevator(tunables);
        }
    };
}
