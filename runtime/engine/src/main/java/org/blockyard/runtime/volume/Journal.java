package org.blockyard.runtime.volume;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.zip.CRC32C;

import org.blockyard.runtime.volume.VolumeException.Structure;

/**
 * The metadata journal, after JBD: a transaction is a descriptor block listing the home locations of the
 * metadata blocks it logs, the logged blocks (whole images), and a commit block with a CRC32C over the
 * descriptor and the logged blocks; then, later, checkpointing writes the blocks home and moves the
 * journal's tail. The whole transaction goes out in one write followed by one {@code force}: the commit
 * checksum makes that safe (a torn transaction fails it and is dropped at recovery, as with JBD2's
 * async_commit).
 *
 * <p>Appends come from many threads (group and file actors, the volume's facade): each is a short critical
 * section that adds the record to a list and numbers it, nothing longer. One commit thread takes the
 * whole list, applies it to {@link Metadata} in order, and writes it as one transaction (group commit):
 * it waits at most {@code commitIntervalNanos} after the first record for company, and a transaction
 * holds at most {@code maxTransactionBlocks} logged blocks. {@link #durableThrough} completes once the
 * transaction holding a record is forced. After a commit, when the log is fuller than
 * {@code checkpointFraction} (or the next transaction might not fit), it checkpoints: the blocks changed
 * since the last checkpoint are written home from the committed state, forced, and the tail moves.
 *
 * <p>Log positions count blocks in the journal's data area (all its blocks but the first, the journal
 * superblock) and wrap; a transaction is found by its sequence number, so old ones beyond the head are
 * never mistaken for new ones.
 */
public final class Journal {
    static final int SUPER_MAGIC = 0x534A5942; // "BYJS"
    static final int DESC_MAGIC = 0x444A5942; // "BYJD"
    static final int TYPE_DESCRIPTOR = 1, TYPE_COMMIT = 2;
    static final int TAG_BYTES = 8, DESC_HEADER_BYTES = 24;

    /** The group-commit tunables (blockyard.volume.journal). */
    public record Settings(long commitIntervalNanos, int maxTransactionBlocks, double checkpointFraction) {
        public static final Settings DEFAULT = new Settings(TimeUnit.MILLISECONDS.toNanos(1), 256, 0.5);
    }

    /** What the journal did, for benchmarks and tests. */
    public record Stats(long records, long transactions, long loggedBlocks, long forces, long checkpoints) {}

    /** Where the log's and the checkpoints' blocks go: the channel until the volume's I/O queue runs. */
    private volatile LogWriter log;
    private final Metadata meta;
    private final Layout layout;
    private final byte[] seed;
    private final Settings settings;
    private final int capacity;
    private final int maxTx;

    private final Object lock = new Object();
    private ArrayList<JournalRecord> pending = new ArrayList<>(); // guarded by lock
    private long appended; // guarded by lock
    private long firstPendingNanos; // guarded by lock
    private volatile long durable;
    private final TreeMap<Long, List<CompletableFuture<Void>>> waiters = new TreeMap<>(); // guarded by itself
    private final ExecutorService acks = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "blockyard-journal-acks");
        t.setDaemon(true);
        return t;
    });
    private final Thread thread;
    private volatile boolean stopping;
    private volatile boolean abandoned;
    private volatile Throwable failure;

    // Owned by the commit thread (and by the closing thread once it has stopped).
    private long head; // next log position to write
    private long tail; // log position of the oldest transaction not yet checkpointed
    private long nextSeq;
    private long tailSeq;
    private long records, transactions, loggedBlocks, forces, checkpoints;

    Journal(FileChannel channel, Metadata meta, Settings settings, long position, long nextSeq) {
        this.log = LogWriter.direct(channel);
        this.meta = meta;
        this.layout = meta.layout;
        this.seed = meta.superblock.uuidBytes();
        this.settings = settings;
        this.capacity = layout.journalBlocks() - 1;
        this.maxTx = Math.max(1, Math.min(Math.min(settings.maxTransactionBlocks(), descriptorCapacity(layout.blockSize())),
                capacity / 2 - 2));
        if (capacity < 8) throw new IllegalArgumentException("a journal of " + layout.journalBlocks() + " blocks");
        this.head = position;
        this.tail = position;
        this.nextSeq = nextSeq;
        this.tailSeq = nextSeq;
        this.thread = new Thread(this::run, "blockyard-journal");
        this.thread.setDaemon(true);
    }

    static int descriptorCapacity(int blockSize) {
        return (blockSize - DESC_HEADER_BYTES) / TAG_BYTES;
    }

    void start() {
        thread.start();
    }

    // ---- appends (any thread) --------------------------------------------------------------------------

    /** Appends a record; answers its number. Fails once the journal has failed or stopped. */
    public long append(JournalRecord r) {
        synchronized (lock) {
            if (abandoned || failure != null) return appended; // nothing more becomes durable; sync() says why
            pending.add(r);
            if (pending.size() == 1) {
                firstPendingNanos = System.nanoTime();
                lock.notifyAll();
            }
            return ++appended;
        }
    }

    /** Completes once every record appended before this call is in a forced transaction. */
    public CompletableFuture<Void> sync() {
        long seq;
        synchronized (lock) {
            seq = appended;
        }
        return durableThrough(seq);
    }

    /** Completes once record {@code seq} (and everything before it) is in a forced transaction. */
    public CompletableFuture<Void> durableThrough(long seq) {
        if (failure != null) return CompletableFuture.failedFuture(failed());
        // Appends after a stop are dropped; a caller whose record may be among them must not be told "durable".
        if (abandoned) return CompletableFuture.failedFuture(
                new VolumeException.JournalFailed("the volume was abandoned before this change was durable", null));
        if (durable >= seq) return CompletableFuture.completedFuture(null);
        CompletableFuture<Void> f = new CompletableFuture<>();
        synchronized (waiters) {
            waiters.computeIfAbsent(seq, k -> new ArrayList<>()).add(f);
        }
        if (durable >= seq || failure != null || abandoned) release(); // raced with a commit or a stop
        return f;
    }

    private VolumeException failed() {
        Throwable t = failure;
        return new VolumeException.JournalFailed("the journal failed, so nothing more is acknowledged: " + t, t);
    }

    private void release() {
        List<CompletableFuture<Void>> done = new ArrayList<>();
        List<CompletableFuture<Void>> fail = new ArrayList<>();
        synchronized (waiters) {
            var head = waiters.headMap(durable, true);
            head.values().forEach(done::addAll);
            head.clear();
            if (failure != null || abandoned) {
                waiters.values().forEach(fail::addAll);
                waiters.clear();
            }
        }
        if (done.isEmpty() && fail.isEmpty()) return;
        Throwable why = failure != null ? failed()
                : new VolumeException.JournalFailed("the volume was abandoned before this change was durable", null);
        try {
            acks.execute(() -> {
                for (CompletableFuture<Void> f : done) f.complete(null);
                for (CompletableFuture<Void> f : fail) f.completeExceptionally(why);
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            for (CompletableFuture<Void> f : done) f.complete(null);
            for (CompletableFuture<Void> f : fail) f.completeExceptionally(why);
        }
    }

    public Stats stats() {
        synchronized (lock) {
            return new Stats(records, transactions, loggedBlocks, forces, checkpoints);
        }
    }

    // ---- the commit thread ----------------------------------------------------------------------------

    private void run() {
        try {
            while (true) {
                ArrayList<JournalRecord> batch;
                long last;
                synchronized (lock) {
                    while (pending.isEmpty() && !stopping && !abandoned) lock.wait();
                    if (abandoned || pending.isEmpty() && stopping) return;
                    long wait = firstPendingNanos + settings.commitIntervalNanos() - System.nanoTime();
                    while (wait > 0 && !stopping && !abandoned && pending.size() < maxTx * 4L) {
                        TimeUnit.NANOSECONDS.timedWait(lock, wait);
                        wait = firstPendingNanos + settings.commitIntervalNanos() - System.nanoTime();
                    }
                    if (abandoned) return;
                    batch = pending;
                    pending = new ArrayList<>();
                    last = appended;
                    records += batch.size();
                }
                long first = last - batch.size() + 1;
                int margin = layout.bitmapBlocks() + 2;
                for (int i = 0; i < batch.size(); i++) {
                    batch.get(i).applyTo(meta);
                    if (meta.pendingBlocks() + margin >= maxTx && i < batch.size() - 1) commit(first + i);
                    if (abandoned) return;
                }
                commit(last);
            }
        } catch (Throwable t) {
            failure = t;
            release();
        }
    }

    /** Writes what is applied as one transaction, forces it, and acknowledges through {@code seq}. */
    private void commit(long seq) throws IOException {
        List<Long> blocks = meta.takeCommit();
        if (!blocks.isEmpty()) {
            long size = transactionBlocks(blocks.size(), layout.blockSize());
            if (head - tail + size > capacity)
                throw new IllegalStateException("a transaction of " + blocks.size() + " blocks does not fit the "
                        + (capacity - (head - tail)) + " free blocks of the journal");
            writeTransaction(blocks);
        }
        durable = seq;
        release();
        if (head - tail > capacity * settings.checkpointFraction() || head - tail + maxTx + 2 > capacity) checkpoint();
    }

    /** Log blocks a transaction of {@code n} logged blocks takes: its descriptors, the blocks, the commit. */
    static long transactionBlocks(int n, int blockSize) {
        return descriptorsFor(n, blockSize) + n + 1L;
    }

    static int descriptorsFor(int n, int blockSize) {
        int cap = descriptorCapacity(blockSize);
        return (n + cap - 1) / cap;
    }

    /**
     * One transaction: descriptor blocks (as many as its tags need, numbered), the logged blocks, the commit
     * block with the CRC32C of all of them; one write per block, then one force.
     */
    private void writeTransaction(List<Long> blocks) throws IOException {
        int bs = layout.blockSize();
        int n = blocks.size();
        int cap = descriptorCapacity(bs);
        int k = descriptorsFor(n, bs);
        CRC32C crc = seeded(nextSeq);
        ByteBuffer all = ByteBuffer.allocate((k + n + 1) * bs);
        for (int i = 0; i < k; i++) {
            byte[] desc = new byte[bs];
            ByteBuffer d = Layout.le(desc);
            d.putInt(0, DESC_MAGIC).putInt(4, TYPE_DESCRIPTOR).putLong(8, nextSeq).putInt(16, n).putInt(20, i);
            for (int t = i * cap; t < Math.min(n, (i + 1) * cap); t++)
                d.putLong(DESC_HEADER_BYTES + (t - i * cap) * TAG_BYTES, blocks.get(t));
            crc.update(desc);
            all.put(desc);
        }
        for (long b : blocks) {
            byte[] img = meta.image(b);
            crc.update(img);
            all.put(img);
        }
        byte[] commit = new byte[bs];
        Layout.le(commit).putInt(0, DESC_MAGIC).putInt(4, TYPE_COMMIT).putLong(8, nextSeq).putInt(16, n)
                .putInt(20, (int) crc.getValue());
        all.put(commit);
        all.flip();
        // One write per contiguous stretch of the log (two when the transaction wraps), not one per block.
        int total = k + n + 1;
        for (int i = 0; i < total; ) {
            int j = i + 1;
            while (j < total && layoutBlock(head + j) == layoutBlock(head + j - 1) + 1) j++;
            log.write(all.slice(i * bs, (j - i) * bs), layoutBlock(head + i) * bs, false);
            i = j;
        }
        log.force();
        synchronized (lock) {
            forces++;
            transactions++;
            loggedBlocks += n;
        }
        head += k + n + 1;
        nextSeq++;
    }

    private CRC32C seeded(long seq) {
        return seeded(seed, seq);
    }

    static CRC32C seeded(byte[] seed, long seq) {
        CRC32C c = new CRC32C();
        c.update(seed);
        byte[] s = new byte[8];
        Layout.le(s).putLong(seq);
        c.update(s);
        return c;
    }

    private long layoutBlock(long position) {
        return layoutBlock(layout, position);
    }

    static long layoutBlock(Layout layout, long position) {
        return layout.journalStart() + 1 + Math.floorMod(position, layout.journalBlocks() - 1);
    }

    /**
     * Writes every block changed since the last checkpoint home, from the committed state (only ever called
     * right after a commit, or after the thread stopped with everything committed), forces, then moves the
     * tail in the journal superblock and forces again.
     */
    void checkpoint() throws IOException {
        int bs = layout.blockSize();
        for (long b : meta.takeCheckpoint()) log.write(ByteBuffer.wrap(meta.image(b)), b * bs, true);
        log.force();
        tail = head;
        tailSeq = nextSeq;
        log.write(ByteBuffer.wrap(superBlock(layout, seed, tailSeq, tail)), layout.journalStart() * bs, false);
        log.force();
        synchronized (lock) {
            forces += 2;
            checkpoints++;
        }
    }

    /**
     * Writes the log and the checkpoints through {@code writer} from now on (the volume's I/O queue, once it
     * runs); called before {@link #start} or between commits.
     */
    void writeThrough(LogWriter writer) {
        this.log = writer;
    }

    static byte[] superBlock(Layout layout, byte[] seed, long firstSeq, long tailPosition) {
        byte[] b = new byte[layout.blockSize()];
        ByteBuffer o = Layout.le(b);
        o.putInt(0, SUPER_MAGIC).putLong(8, firstSeq).putLong(16, tailPosition).putInt(24, layout.journalBlocks());
        o.putInt(4, Layout.crc(seed, layout.journalStart(), b, 8, b.length - 8));
        return b;
    }

    /** Stops after committing everything appended so far; the commit thread is gone when this returns. */
    void stop() {
        stopping = true;
        synchronized (lock) {
            lock.notifyAll();
        }
        joinThread();
    }

    /** Answers every waiter still pending and stops the thread that completes them. */
    void shutdownAcks() {
        release();
        acks.shutdown();
    }

    /** Stops at once, committing nothing more (a crash, for tests): waiters still pending fail. */
    void abandon() {
        abandoned = true;
        synchronized (lock) {
            lock.notifyAll();
        }
        joinThread();
        release();
        acks.shutdown();
    }

    private void joinThread() {
        if (!thread.isAlive()) return;
        try {
            thread.join(TimeUnit.SECONDS.toMillis(60));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Commits the metadata's pending changes from the calling thread (only while the thread is stopped). */
    void commitNow() throws IOException {
        if (thread.isAlive()) throw new IllegalStateException("the commit thread is running");
        commit(durable);
    }

    /** Log blocks written since the last checkpoint, and the log's capacity (tests, benchmarks). */
    long logUsed() {
        return head - tail;
    }

    int logCapacity() {
        return capacity;
    }

    int maxTransactionBlocks() {
        return maxTx;
    }

    Throwable failure() {
        return failure;
    }

    // ---- recovery -------------------------------------------------------------------------------------

    /** What a scan of the log found: the last image of each logged block, and where the log goes on. */
    record Replay(Map<Long, byte[]> blocks, int transactions, long position, long nextSeq, String stoppedBecause,
                  long lastStart) {}

    /**
     * Reads the log from its tail: each transaction whose descriptor has the next sequence number and whose
     * commit block's checksum matches is taken; the first that does not (never written, torn, corrupt)
     * ends the log and is dropped.
     *
     * @throws VolumeException.Corrupt (JOURNAL) when the journal superblock fails its checksum, or a committed
     *                                 transaction logs a block that is not metadata (a journal pointing
     *                                 outside the volume)
     */
    static Replay scan(Layout layout, byte[] seed, Metadata.BlockReader reader) {
        int bs = layout.blockSize();
        byte[] sb = reader.read(layout.journalStart());
        ByteBuffer o = Layout.le(sb);
        if (o.getInt(0) != SUPER_MAGIC || o.getInt(4) != Layout.crc(seed, layout.journalStart(), sb, 8, bs - 8))
            throw new VolumeException.Corrupt(Structure.JOURNAL, layout.journalStart(), "journal superblock fails its checksum");
        long seq = o.getLong(8), pos = o.getLong(16);
        if (o.getInt(24) != layout.journalBlocks() || pos < 0 || seq < 1)
            throw new VolumeException.Corrupt(Structure.JOURNAL, layout.journalStart(), "journal superblock describes "
                    + o.getInt(24) + " blocks, tail " + pos + ", sequence " + seq);
        Map<Long, byte[]> out = new LinkedHashMap<>();
        int capacity = layout.journalBlocks() - 1;
        int count = 0;
        long lastStart = -1;
        String why;
        long scanned = 0;
        while (true) {
            byte[] desc = reader.read(layoutBlock(layout, pos));
            ByteBuffer d = Layout.le(desc);
            if (d.getInt(0) != DESC_MAGIC || d.getInt(4) != TYPE_DESCRIPTOR || d.getLong(8) != seq) {
                why = "no descriptor of transaction " + seq + " at log position " + pos;
                break;
            }
            int n = d.getInt(16);
            if (n < 1 || d.getInt(20) != 0 || scanned + transactionBlocks(n, bs) > capacity) {
                why = "descriptor of transaction " + seq + " lists " + n + " blocks";
                break;
            }
            int k = descriptorsFor(n, bs), cap = descriptorCapacity(bs);
            CRC32C crc = seeded(seed, seq);
            crc.update(desc);
            long[] homes = new long[n];
            boolean ok = true;
            for (int i = 0; i < k && ok; i++) {
                byte[] di = i == 0 ? desc : reader.read(layoutBlock(layout, pos + i));
                ByteBuffer o2 = Layout.le(di);
                if (i > 0) {
                    ok = o2.getInt(0) == DESC_MAGIC && o2.getInt(4) == TYPE_DESCRIPTOR && o2.getLong(8) == seq
                            && o2.getInt(16) == n && o2.getInt(20) == i;
                    crc.update(di);
                }
                for (int t = i * cap; t < Math.min(n, (i + 1) * cap); t++)
                    homes[t] = o2.getLong(DESC_HEADER_BYTES + (t - i * cap) * TAG_BYTES);
            }
            if (!ok) {
                why = "transaction " + seq + " has a broken descriptor chain; dropped";
                break;
            }
            List<byte[]> images = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                byte[] img = reader.read(layoutBlock(layout, pos + k + i));
                crc.update(img);
                images.add(img);
            }
            byte[] commit = reader.read(layoutBlock(layout, pos + k + n));
            ByteBuffer c = Layout.le(commit);
            if (c.getInt(0) != DESC_MAGIC || c.getInt(4) != TYPE_COMMIT || c.getLong(8) != seq || c.getInt(16) != n
                    || c.getInt(20) != (int) crc.getValue()) {
                why = "transaction " + seq + " has no valid commit block (torn or corrupt); dropped";
                break;
            }
            for (int i = 0; i < n; i++) {
                long home = homes[i];
                if (!isMetadataHome(layout, home))
                    throw new VolumeException.Corrupt(Structure.JOURNAL, layoutBlock(layout, pos), "committed transaction "
                            + seq + " logs block " + home + ", which is not a bitmap, descriptor or file-table block"
                            + " of this volume");
                out.put(home, images.get(i));
            }
            count++;
            lastStart = pos;
            pos += k + n + 1;
            scanned += k + n + 1;
            seq++;
        }
        return new Replay(out, count, pos, seq, why, lastStart);
    }

    static boolean isMetadataHome(Layout layout, long block) {
        if (block < 0 || block >= layout.geometry().totalBlocks()) return false;
        if (block >= layout.gdtStart() && block < layout.journalStart()) return true;
        int g = layout.geometry().groupOf(block);
        long rel = block - layout.geometry().groupStart(g);
        return rel >= 1 && rel <= layout.bitmapBlocks();
    }
}
