package org.blockyard.benches;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.AllocationSession;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.api.alloc.MapRequest;
import org.blockyard.runtime.config.BlockyardConfig;
import org.blockyard.runtime.store.FileStore;
import org.blockyard.runtime.volume.ExtentMap;
import org.blockyard.runtime.volume.Metadata;
import org.blockyard.runtime.volume.Volume;
import org.blockyard.runtime.volume.VolumeAllocator;

/**
 * The child process of {@code bench crash}: mixed load on a volume from several threads until it is killed.
 * Before each call it prints {@code GO <key> ...}, after the acknowledgement {@code ACK <key> ...}, one line
 * each, whole lines only:
 * <ul>
 * <li>{@code MAP file logical physical blocks} (GO: {@code MAP file logical}), and {@code MAPS file} then
 * {@code logical physical blocks} for each run of a batch (getBlocks(file, List), or a small file written
 * whole with writeFile);</li>
 * <li>{@code TRUNC file from}; {@code DEL file} (a small file, or a file of an earlier round);</li>
 * <li>{@code OPEN file} (a data file created), {@code WRITE file from blocks generation}: blocks written with
 * their {@link CrashPattern} through the volume's {@link FileStore};</li>
 * <li>{@code EXT owner} then {@code start blocks} for each extent allocated (GO: {@code EXT owner});
 * {@code REL owner} (GO: {@code REL owner} then {@code start blocks} for each extent released at once).</li>
 * </ul>
 * With sessions, each owner also prints {@code LOAN owner blocks} after each burst: the blocks the volume's sessions
 * hold on loan and have not handed out, as the allocator's stats say.
 * {@code NACK <key> reason}: the call in flight on that key was refused (the API says: changing nothing); the
 * thread goes on. {@code STOPPED <key> reason}: the thread stopped on an error, the call on that key in flight.
 *
 * <p>Files are named {@code k<round>-f<writer>} (appended to and truncated), {@code ...w<i>} (small files
 * written whole), {@code ...d<j>} (data files); before each file it creates, a writer deletes one file of an
 * earlier round that the parent gave up ({@code DELETE_BEFORE}), and more now and then, so the file table
 * stays bounded. Owners ({@code o<i>}) live across rounds: each starts from what the volume says it holds,
 * allocates in several groups and releases lists of extents that span several groups at once.
 *
 * <p>With {@code sessions}, each owner opens a session of the volume ({@link VolumeAllocator#openSession(String)})
 * on its thread and makes every call through it; between the ticks of its lists it runs a burst of
 * {@link #SESSION_BURST} calls a loan serves: allocations of a few lengths, no hint, and releases of pieces it took.
 *
 * <p>Arguments: IMAGE PREFIX WRITERS OWNERS SEED DELETE_BEFORE BIG_MAX_BLOCKS OWNER_MAX_BLOCKS OWNER_MAX_RUNS
 * MAX_RELEASE_EXTENTS [sessions].
 */
public final class CrashLoad {
    private CrashLoad() {}

    /** Small files each writer keeps writing whole, in turn. */
    static final int SMALL_FILES = 16;
    /** Data files per writer, and the blocks of each that writes reach. */
    static final int DATA_FILES = 4;
    static final int DATA_BLOCKS = 64;
    /** Owners' calls start on the ticks of one clock, this many ms apart. */
    static final long OWNER_TICK_MS = 100;
    /** With sessions: calls an owner makes through its session between two ticks, and the lengths they ask. */
    static final int SESSION_BURST = 24;
    static final long[] SESSION_LENGTHS = {1, 2, 4, 8, 16};
    /** With sessions: the pieces an owner keeps at most before its bursts release more than they take. */
    static final int SESSION_PIECES = 256;
    private static final long EPOCH = System.nanoTime();
    /** The round a file was made in, from its name. */
    static final Pattern ROUND = Pattern.compile("^k(\\d+)-");

    public static void main(String[] args) throws Exception {
        Path image = Path.of(args[0]);
        String prefix = args[1];
        int writers = Integer.parseInt(args[2]);
        int owners = Integer.parseInt(args[3]);
        long seed = Long.parseLong(args[4]);
        long deleteBefore = Long.parseLong(args[5]);
        long bigMax = Long.parseLong(args[6]);
        long ownerMaxBlocks = Long.parseLong(args[7]);
        int ownerMaxRuns = Integer.parseInt(args[8]);
        int maxRelease = Integer.parseInt(args[9]);
        boolean sessions = args.length > 10 && args[10].equals("sessions");
        Metadata before = Volume.inspect(image); // what the owners hold: the volume, not a list kept aside
        Volume v = Volume.open(image, BlockyardConfig.load());
        VolumeAllocator a = v.allocator();
        FileStore store = v.fileStore();
        Queue<String> old = new ConcurrentLinkedQueue<>();
        for (String f : a.files()) {
            Matcher m = ROUND.matcher(f);
            if (m.find() && Long.parseLong(m.group(1)) < deleteBefore) old.add(f);
        }
        for (int t = 0; t < writers; t++) {
            Writer w = new Writer(a, store, old, prefix + "f" + t, bigMax, new Random(seed * 31 + t));
            start(w, "crash-writer-" + t);
        }
        for (int i = 0; i < owners; i++) {
            String name = "o" + i;
            Metadata.Entry e = before.owner(name);
            OwnerLoad o = new OwnerLoad(a, name, e == null ? List.of() : e.map.runs(), ownerMaxBlocks, ownerMaxRuns,
                    maxRelease, sessions, new Random(seed * 37 + 1000 + i));
            start(o, "crash-owner-" + i);
        }
        say("READY");
        Thread.sleep(Long.MAX_VALUE);
    }

    private static void start(Runnable r, String name) {
        Thread th = new Thread(r, name);
        th.setDaemon(true);
        th.start();
    }

    static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    /** One line: the error's class and message (a CompletionException's or ExecutionException's cause). */
    static String reason(Throwable e) {
        Throwable t = (e instanceof CompletionException || e instanceof java.util.concurrent.ExecutionException)
                && e.getCause() != null ? e.getCause() : e;
        String msg = t.getMessage() == null ? "" : ": " + t.getMessage();
        return (t.getClass().getSimpleName() + msg).replace('\n', ' ').replace('\r', ' ');
    }

    private static boolean refused(Throwable e) {
        Throwable t = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
        return t instanceof AllocationException.NoSpace;
    }

    /**
     * What makes a FileStore write durable before its acknowledgement is printed: a write that allocates is
     * durable when it completes (its blocks are journalled as written, a commit that ends in fdatasync of the
     * image), but an overwrite of blocks already written is answered with its data in the page cache only, so
     * every write is followed by {@link FileStore#flush}, as a storage engine would before it acknowledges.
     */
    static void makeDurable(FileStore store, String file) {
        await(store.flush(file));
    }

    /** Longest the child waits for any one call: the parent's deadline for a silent child is longer. */
    static final long CALL_TIMEOUT_SECONDS = 30;

    /** The value of {@code stage}, waited for at most {@link #CALL_TIMEOUT_SECONDS}. */
    static <T> T await(java.util.concurrent.CompletionStage<T> stage) {
        try {
            return stage.toCompletableFuture().get(CALL_TIMEOUT_SECONDS, java.util.concurrent.TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            throw new CompletionException(e.getCause());
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("a call took more than " + CALL_TIMEOUT_SECONDS + " s", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** Files: one appended to and truncated, small ones written whole, data files written through FileStore. */
    private static final class Writer implements Runnable {
        private final VolumeAllocator a;
        private final FileStore store;
        private final Queue<String> old;
        private final String big;
        private final long bigMax;
        private final Random rnd;
        private final int blockBytes;
        private long next;
        private final long[] smallNext = new long[SMALL_FILES]; // each small file's end, appended to whole
        private int small;
        private final boolean[] dataOpen = new boolean[DATA_FILES];
        private final int[] generation = new int[DATA_FILES];
        /** The key of the call in flight, named when the thread stops or a call is refused. */
        private String current;

        Writer(VolumeAllocator a, FileStore store, Queue<String> old, String big, long bigMax, Random rnd) {
            this.a = a;
            this.store = store;
            this.old = old;
            this.big = big;
            this.bigMax = bigMax;
            this.rnd = rnd;
            this.blockBytes = a.geometry().blockSizeBytes();
            this.current = big;
        }

        @Override
        public void run() {
            try {
                deleteOld();
                await(a.open(big));
                while (true) {
                    try {
                        step();
                    } catch (RuntimeException e) {
                        if (!refused(e)) throw e;
                        say("NACK " + current + " " + reason(e));
                        if (next > 0) truncate(0); // room for the others; the table frees as old files go
                    }
                }
            } catch (Throwable e) {
                say("STOPPED " + current + " " + reason(e));
            }
        }

        /** Deletes one file of an earlier round, if any is left. */
        private void deleteOld() {
            String name = old.poll();
            if (name == null) return;
            current = name;
            say("GO " + name + " DEL");
            await(a.delete(name));
            say("ACK " + name + " DEL");
        }

        private void truncate(long from) {
            current = big;
            say("GO " + big + " TRUNC " + from);
            await(a.truncate(big, from));
            next = Math.min(next, from);
            say("ACK " + big + " TRUNC " + from);
        }

        private void step() {
            if (!old.isEmpty() && rnd.nextInt(4) == 0) {
                deleteOld();
                return;
            }
            if (next > bigMax) {
                truncate(rnd.nextLong(next / 2));
                return;
            }
            int pick = rnd.nextInt(24);
            if (pick < 2 && next > 0) truncate(rnd.nextLong(next));
            else if (pick < 8) writeData();
            else if (pick < 9) truncateData();
            else if (pick < 11) smallFile();
            else if (pick < 18) batch();
            else single();
        }

        /** Blocks of a data file written through FileStore with their pattern of a new generation. */
        private void writeData() {
            int j = rnd.nextInt(DATA_FILES);
            String name = big + "d" + j;
            if (!dataOpen[j]) {
                deleteOld();
                current = name;
                say("GO " + name + " OPEN");
                await(a.open(name));
                say("ACK " + name + " OPEN");
                dataOpen[j] = true;
            }
            long from = rnd.nextInt(DATA_BLOCKS);
            int blocks = 1 + rnd.nextInt((int) Math.min(16, DATA_BLOCKS - from));
            int gen = ++generation[j];
            ByteBuffer data = ByteBuffer.allocate(blocks * blockBytes);
            for (int i = 0; i < blocks; i++) CrashPattern.fill(data, blockBytes, name, from + i, gen);
            data.flip();
            current = name;
            say("GO " + name + " WRITE " + from + " " + blocks + " " + gen);
            await(store.write(name, from * blockBytes, data));
            makeDurable(store, name);
            say("ACK " + name + " WRITE " + from + " " + blocks + " " + gen);
        }

        private void truncateData() {
            int j = rnd.nextInt(DATA_FILES);
            if (!dataOpen[j]) return;
            String name = big + "d" + j;
            long from = rnd.nextInt(DATA_BLOCKS);
            current = name;
            say("GO " + name + " TRUNC " + from);
            await(a.truncate(name, from));
            say("ACK " + name + " TRUNC " + from);
        }

        /** One of a few small files: deleted now and then, else opened, appended to and closed in one call. */
        private void smallFile() {
            String name = big + "w" + small;
            if (smallNext[small] > 0 && rnd.nextInt(4) == 0) {
                current = name;
                say("GO " + name + " DEL");
                await(a.delete(name));
                smallNext[small] = 0;
                say("ACK " + name + " DEL");
                small = (small + 1) % SMALL_FILES;
                return;
            }
            if (smallNext[small] == 0) deleteOld(); // a file made: an old one goes
            List<MapRequest> calls = new ArrayList<>();
            int size = 1 + rnd.nextInt(8);
            for (long l = smallNext[small]; calls.size() < size; l++) calls.add(MapRequest.allocate(l, 1));
            current = name;
            say("GO " + name + " MAP " + smallNext[small]);
            List<BlockRun> runs = await(a.writeFile(name, calls));
            StringBuilder b = new StringBuilder("ACK " + name + " MAPS");
            for (BlockRun r : runs) {
                b.append(' ').append(r.logicalStart()).append(' ').append(r.physicalStart()).append(' ').append(r.blocks());
                smallNext[small] = Math.max(smallNext[small], r.logicalStart() + r.blocks());
            }
            say(b.toString());
            small = (small + 1) % SMALL_FILES;
        }

        /** A batch of appends from next on (a short run leaves a hole the file keeps). */
        private void batch() {
            List<MapRequest> batch = new ArrayList<>();
            int size = 2 + rnd.nextInt(7);
            for (long l = next; batch.size() < size; ) {
                int want = 1 + rnd.nextInt(16);
                batch.add(MapRequest.allocate(l, want));
                l += want;
            }
            current = big;
            say("GO " + big + " MAP " + next);
            List<BlockRun> runs = await(a.getBlocks(big, batch));
            StringBuilder b = new StringBuilder("ACK " + big + " MAPS");
            for (BlockRun r : runs) {
                b.append(' ').append(r.logicalStart()).append(' ').append(r.physicalStart()).append(' ').append(r.blocks());
                next = Math.max(next, r.logicalStart() + r.blocks());
            }
            say(b.toString());
        }

        private void single() {
            int want = 1 + rnd.nextInt(16);
            current = big;
            say("GO " + big + " MAP " + next);
            BlockRun r = await(a.getBlocks(big, next, want, true));
            say("ACK " + big + " MAP " + next + " " + r.physicalStart() + " " + r.blocks());
            next += r.blocks();
        }
    }

    /**
     * An extent owner: allocates in several groups, and releases lists of extents at once: a comb (every
     * other piece of what it holds in two to four groups: hundreds to tens of thousands of extents), a sweep
     * (everything it holds in a span of groups) or a scatter (whole extents picked across the volume).
     */
    private static final class OwnerLoad implements Runnable {
        private final VolumeAllocator a;
        private final String owner;
        private final long maxBlocks;
        private final int maxRuns, maxRelease;
        private final boolean sessions;
        /** With sessions: the session of this owner, opened on its thread. */
        private AllocationSession session;
        /** With sessions: pieces the bursts took and it still holds whole, to release in the bursts. */
        private final List<Extent> pieces = new ArrayList<>();
        private final Random rnd;
        private final Geometry g;
        /** What it holds: start -> end (exclusive), merged as the volume's map merges them. */
        private final TreeMap<Long, Long> held = new TreeMap<>();
        private long heldBlocks;

        OwnerLoad(VolumeAllocator a, String owner, List<ExtentMap.Run> runs, long maxBlocks, int maxRuns,
                  int maxRelease, boolean sessions, Random rnd) {
            this.a = a;
            this.sessions = sessions;
            this.owner = owner;
            this.maxBlocks = maxBlocks;
            this.maxRuns = maxRuns;
            this.maxRelease = maxRelease;
            this.rnd = rnd;
            this.g = a.geometry();
            for (ExtentMap.Run r : runs) add(r.physical(), r.physical() + r.blocks());
        }

        @Override
        public void run() {
            try {
                if (sessions) session = a.openSession(owner);
                while (true) {
                    tick();
                    if (sessions) burst();
                    boolean allocate = heldBlocks < maxBlocks / 2 ? rnd.nextInt(10) < 7
                            : heldBlocks < maxBlocks && held.size() < maxRuns && rnd.nextBoolean();
                    try {
                        if (allocate || !release()) allocate();
                    } catch (RuntimeException e) {
                        if (!refused(e)) throw e;
                        say("NACK " + owner + " " + reason(e));
                        sweep(); // room for the others
                    }
                }
            } catch (Throwable e) {
                say("STOPPED " + owner + " " + reason(e));
            }
        }

        /**
         * Waits for the next tick of a clock all owners share, so that their calls start together: releases of
         * several owners at once, others allocating meanwhile; and the files' calls keep most of the journal.
         */
        private static void tick() throws InterruptedException {
            long now = System.nanoTime(), tick = TimeUnit.MILLISECONDS.toNanos(OWNER_TICK_MS);
            long next = (Math.floorDiv(now - EPOCH, tick) + 1) * tick + EPOCH;
            TimeUnit.NANOSECONDS.sleep(next - now);
        }

        private void allocate() {
            long room = Math.max(16, maxBlocks - heldBlocks);
            long want = 16 + rnd.nextInt((int) Math.min(4096, room));
            long[] maxExtent = {0, 1, 4, 32};
            long hint = rnd.nextInt(10) < 7 ? g.groupStart(rnd.nextInt(g.groups())) + rnd.nextInt(g.blocksPerGroup()) : -1;
            if (hint >= g.totalBlocks()) hint = -1;
            say("GO " + owner + " EXT");
            long cap = maxExtent[rnd.nextInt(maxExtent.length)];
            List<Extent> got = await(session != null ? session.allocate(want, 1, cap, hint)
                    : a.allocate(owner, want, 1, cap, hint));
            StringBuilder b = new StringBuilder("ACK " + owner + " EXT");
            for (Extent e : got) {
                b.append(' ').append(e.start()).append(' ').append(e.blocks());
                add(e.start(), e.start() + e.blocks());
            }
            say(b.toString());
        }

        /** Releases a list of extents it holds at once; false when it holds nothing to release. */
        private boolean release() {
            if (held.isEmpty()) return false;
            // 100 to maxRelease extents, as many lists of hundreds as of thousands as of tens of thousands.
            int target = (int) Math.round(100 * Math.pow(Math.max(1.0, maxRelease / 100.0), rnd.nextDouble()));
            List<Extent> list;
            int mode = rnd.nextInt(3);
            if (mode == 0 && held.size() + target <= maxRuns) list = comb(target);
            else if (mode == 1) list = scatter(target);
            else list = span(target);
            if (list.isEmpty()) list = span(target);
            if (list.isEmpty()) return false;
            releaseAll(list);
            return true;
        }

        private void sweep() {
            List<Extent> list = span(maxRelease);
            if (!list.isEmpty()) releaseAll(list);
        }

        private void releaseAll(List<Extent> list) {
            StringBuilder b = new StringBuilder("GO " + owner + " REL");
            for (Extent e : list) b.append(' ').append(e.start()).append(' ').append(e.blocks());
            say(b.toString());
            await(session != null ? session.release(list) : a.release(owner, list));
            for (Extent e : list) remove(e.start(), e.start() + e.blocks());
            say("ACK " + owner + " REL");
            if (!pieces.isEmpty()) pieces.removeIf(p -> !holds(p.start(), p.start() + p.blocks()));
        }

        /**
         * With sessions: calls a loan serves, through the session: a piece of one of a few lengths with no hint, or a
         * release of one to four pieces taken before; then the blocks on loan, as a LOAN line. NoSpace is a NACK.
         */
        private void burst() {
            for (int i = 0; i < SESSION_BURST; i++) {
                boolean room = heldBlocks < maxBlocks && held.size() < maxRuns && pieces.size() < SESSION_PIECES;
                try {
                    if (!pieces.isEmpty() && (!room || rnd.nextInt(5) < 2)) {
                        List<Extent> list = new ArrayList<>();
                        for (int k = 1 + rnd.nextInt(4); k > 0 && !pieces.isEmpty(); k--)
                            list.add(pieces.remove(rnd.nextInt(pieces.size())));
                        releaseAll(list);
                    } else if (room) {
                        say("GO " + owner + " EXT");
                        long length = SESSION_LENGTHS[rnd.nextInt(SESSION_LENGTHS.length)];
                        List<Extent> got = await(session.allocate(length, 1, 0, -1));
                        StringBuilder b = new StringBuilder("ACK " + owner + " EXT");
                        for (Extent e : got) {
                            b.append(' ').append(e.start()).append(' ').append(e.blocks());
                            add(e.start(), e.start() + e.blocks());
                            pieces.add(e);
                        }
                        say(b.toString());
                    }
                } catch (RuntimeException e) {
                    if (!refused(e)) throw e;
                    say("NACK " + owner + " " + reason(e));
                }
            }
            say("LOAN " + owner + " " + await(a.stats()).loanedBlocks());
        }

        /** Whether it holds every block of {@code [start, end)}. */
        private boolean holds(long start, long end) {
            Map.Entry<Long, Long> r = held.floorEntry(start);
            return r != null && r.getValue() >= end;
        }

        /**
         * Every other piece of what it holds, in two to four groups at least (one on a one-group volume), and in
         * more while the list is short of {@code target}.
         */
        private List<Extent> comb(int target) {
            List<Integer> groups = new ArrayList<>();
            for (int i = 0; i < g.groups(); i++) groups.add(i);
            Collections.shuffle(groups, rnd);
            int k = Math.min(groups.size(), 2 + rnd.nextInt(3));
            int piece = 1 + rnd.nextInt(2), stride = piece + 1 + rnd.nextInt(2);
            List<Extent> out = new ArrayList<>();
            for (int i = 0; i < groups.size() && out.size() < target; i++) {
                int group = groups.get(i);
                long from = g.groupStart(group), to = from + g.groupBlocks(group);
                int quota = i < k ? (target - out.size()) / (k - i) : target - out.size();
                int before = out.size();
                for (Map.Entry<Long, Long> r : held.subMap(from, true, to, false).entrySet()) {
                    for (long b = r.getKey(); b + piece <= r.getValue() && out.size() - before < quota; b += stride)
                        out.add(new Extent(b, piece));
                    if (out.size() - before >= quota) break;
                }
            }
            return out;
        }

        /** Whole extents picked across all it holds. */
        private List<Extent> scatter(int target) {
            List<Extent> out = new ArrayList<>();
            double p = Math.min(1.0, (double) target / held.size());
            for (Map.Entry<Long, Long> r : held.entrySet()) {
                if (out.size() >= target) break;
                if (rnd.nextDouble() < p) out.add(new Extent(r.getKey(), r.getValue() - r.getKey()));
            }
            return out;
        }

        /** Everything it holds in a span of two or more groups (the whole volume on a small one), up to target. */
        private List<Extent> span(int target) {
            int first = rnd.nextInt(g.groups()), last = Math.min(g.groups() - 1, first + 1 + rnd.nextInt(2));
            if (last == first) first = Math.max(0, last - 1);
            long from = g.groupStart(first), to = g.groupStart(last) + g.groupBlocks(last);
            List<Extent> out = new ArrayList<>();
            for (Map.Entry<Long, Long> r : held.subMap(from, true, to, false).entrySet()) {
                if (out.size() >= target) break;
                out.add(new Extent(r.getKey(), r.getValue() - r.getKey()));
            }
            return out;
        }

        private void add(long start, long end) {
            heldBlocks += end - start;
            Map.Entry<Long, Long> lo = held.floorEntry(start);
            if (lo != null && lo.getValue() >= start) {
                start = lo.getKey();
                end = Math.max(end, lo.getValue());
                held.remove(lo.getKey());
            }
            Long hi = held.get(end);
            if (hi != null) {
                held.remove(end);
                end = hi;
            }
            held.put(start, end);
        }

        private void remove(long start, long end) {
            heldBlocks -= end - start;
            Map.Entry<Long, Long> r = held.floorEntry(start);
            if (r == null || r.getValue() < end) throw new IllegalStateException(owner + " does not hold " + start + ".." + end);
            held.remove(r.getKey());
            if (r.getKey() < start) held.put(r.getKey(), start);
            if (end < r.getValue()) held.put(end, r.getValue());
        }
    }
}
