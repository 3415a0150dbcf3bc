package org.blockyard.runtime.volume;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;

import org.blockyard.runtime.alloc.FileState;
import org.blockyard.runtime.volume.VolumeException.Structure;

/**
 * The metadata journal, after JBD2: a transaction is a descriptor block listing the home locations of the
 * metadata blocks it logs, the logged blocks (whole images), and a commit block with a CRC32C over the
 * descriptor and the logged blocks; then, later, checkpointing writes the blocks home and moves the
 * journal's tail. A transaction goes out as one hand-over followed by one barrier: the commit checksum makes
 * that safe (a torn transaction fails it and is dropped at recovery, as with JBD2's async_commit).
 *
 * <p>Appends come from many threads (group and file actors, the volume's facade): each is a short critical
 * section that adds the record to a list and numbers it, nothing longer. One commit thread takes the list,
 * applies it to {@link Metadata} in order (the running transaction) and writes it (group commit), as JBD2's
 * running and committing transactions: while one transaction is on its way to stable storage, records keep
 * arriving for the next and the commit thread applies them as they come, so the next is built and written the
 * moment the first is durable. Only a journal with nothing in
 * flight waits for company, at most {@code commitIntervalNanos} after the first record; a transaction holds
 * at most {@code maxTransactionBlocks} logged blocks, each logged once however many records changed it.
 * {@link #durableThrough} completes once the transaction holding a record is durable.
 *
 * <p>Checkpoints do not stop the commits: once the log is fuller than {@code checkpointFraction}, the images of
 * every block logged so far (kept from the transactions that logged them, so nothing is rebuilt) go home in
 * slices that ride the next commits, behind their barriers, as a fuzzy checkpoint spreads its writes: each
 * commit carries at least {@code checkpointSliceBlocks} of them, more when the room left in the log would
 * otherwise run out first, so no one commit's barrier pays for hundreds of scattered home writes. The
 * journal superblock with the new tail goes with the commit after the last slice; only then is the log space
 * before the tail reused. A checkpoint step that goes alone (no record came within the commit interval, or
 * a transaction finds no room and waits for the tail) writes everything left at once.
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

    /**
     * The group-commit tunables (blockyard.volume.journal). With {@code onDemand} no timer decides anything: a
     * transaction is committed only when {@link #commitWaiting} asks for it (or it is full, or the journal stops),
     * and a checkpoint step never goes alone unless the log needs the room; so a load from one thread that asks
     * once its call waits and the actors are idle produces the same stream of writes and flushes on every run
     * (the power-loss harness replays seeds with it).
     */
    public record Settings(long commitIntervalNanos, int maxTransactionBlocks, double checkpointFraction,
                           int checkpointSliceBlocks, boolean onDemand) {
        public static final Settings DEFAULT = new Settings(TimeUnit.MILLISECONDS.toNanos(1), 256, 0.5, 64);

        public Settings {
            if (checkpointSliceBlocks < 1)
                throw new IllegalArgumentException("checkpoint-slice-blocks must be at least 1: " + checkpointSliceBlocks);
        }

        /** Timed group commit. */
        public Settings(long commitIntervalNanos, int maxTransactionBlocks, double checkpointFraction,
                        int checkpointSliceBlocks) {
            this(commitIntervalNanos, maxTransactionBlocks, checkpointFraction, checkpointSliceBlocks, false);
        }

        /** These settings, committing only on demand. */
        public Settings onDemandOnly() {
            return new Settings(commitIntervalNanos, maxTransactionBlocks, checkpointFraction, checkpointSliceBlocks, true);
        }

        /** With checkpoint slices of 64 blocks. */
        public Settings(long commitIntervalNanos, int maxTransactionBlocks, double checkpointFraction) {
            this(commitIntervalNanos, maxTransactionBlocks, checkpointFraction, 64);
        }
    }

    /**
     * What the journal did, for benchmarks and tests. {@code forces}: barriers (FLUSH requests or
     * {@code force} calls), commits and checkpoints alike; {@code barrierNanos}: their time from hand-over to
     * durable, summed; {@code flushNanos}: the part of it from the FLUSH's issue to the device until its
     * completion came back (the device's own force, without the wait for the writes before it);
     * {@code homeSteps}: hand-overs that carried checkpoint home writes, {@code homeWrites} of them.
     */
    public record Stats(long records, long transactions, long loggedBlocks, long forces, long checkpoints,
                        long barrierNanos, long flushNanos, long homeSteps, long homeWrites) {}

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
    /** Callers waiting for durability, and how many the last commit acknowledged (group commit's company). */
    private int callersWaiting, callersLastAcknowledged; // guarded by lock
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
    /** Taken from the appenders, not yet applied: the running transaction was full. */
    private final ArrayDeque<JournalRecord> carry = new ArrayDeque<>();
    private long applied; // the last record applied to the metadata
    private long committed; // the last record in a transaction handed to the log
    private long commitDueNanos; // when the running transaction is written, if nothing is in flight
    private boolean runningFull;
    /** The transaction (or checkpoint step) handed to the log and not yet known durable; at most one. */
    private InFlight inflight;
    /** The last logged image of every block logged since the last checkpoint began: what it will write home. */
    private Map<Long, ByteBuffer> logged = new HashMap<>();
    private Checkpoint checkpoint; // in progress, or null
    private int lastTxLogBlocks = 1; // log blocks the last transaction took: how fast the log fills
    private long records, transactions, loggedBlocks, forces, checkpoints, barrierNanos, flushNanos; // guarded by lock
    /**
     * The running transaction marks blocks written whose data went to the image just before (FileStore's
     * allocating writes): its commit goes behind a FLUSH of its own, so the data is on stable storage before the
     * commit block can be (JBD2's ordered mode, without async_commit). Without it, a disk that reorders what it
     * has not flushed could keep the commit and lose the data, and a file would show the block's old contents.
     * The commit thread's alone.
     */
    private boolean afterData;
    private long homeSteps, homeWrites; // guarded by lock

    /** What one hand-over to the log carried: a transaction ({@code blocks > 0}) and/or a checkpoint step. */
    private record InFlight(LogWriter.Barrier barrier, long through, int blocks, Stage carried, long startNanos) {}

    private enum Stage { HOME, TAIL }

    /**
     * A checkpoint: first the committed images of the blocks logged before it began go home (HOME), then the
     * journal superblock moves the tail to where the log stood then (TAIL). Each step rides on the next
     * hand-overs, or goes alone when the journal is idle; the tail moves in memory once the second is durable.
     */
    private static final class Checkpoint {
        final List<Map.Entry<Long, ByteBuffer>> images; // in block order
        final long newTail, newTailSeq;
        Stage stage = Stage.HOME;
        boolean stepSubmitted;
        int written; // images durable at home
        int sliceEnd; // images handed over, durable once the step in flight is

        Checkpoint(Map<Long, ByteBuffer> images, long newTail, long newTailSeq) {
            this.images = new ArrayList<>(new TreeMap<>(images).entrySet());
            this.newTail = newTail;
            this.newTailSeq = newTailSeq;
            if (images.isEmpty()) stage = Stage.TAIL;
        }
    }

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
            if (pending.size() == 1) firstPendingNanos = System.nanoTime();
            if (pending.size() == 1 || pending.size() == burstRecords()) lock.notifyAll();
            return ++appended;
        }
    }

    /** Records that end the wait for company at once: more than a transaction could hold. */
    private int burstRecords() {
        return maxTx * 4;
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
        synchronized (lock) {
            if (++callersWaiting == callersLastAcknowledged) lock.notifyAll(); // everyone is back: no need to wait
        }
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

    /** Completes the waiters that are durable now (all of them, failed, once the journal failed); answers how many. */
    private int release() {
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
        if (done.isEmpty() && fail.isEmpty()) return 0;
        synchronized (lock) {
            callersWaiting -= done.size() + fail.size();
        }
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
        return done.size();
    }

    public Stats stats() {
        synchronized (lock) {
            return new Stats(records, transactions, loggedBlocks, forces, checkpoints, barrierNanos, flushNanos,
                    homeSteps, homeWrites);
        }
    }

    // ---- the commit thread ----------------------------------------------------------------------------

    private void run() {
        try {
            while (!abandoned) {
                if (inflight != null) {
                    // While the barrier is out, the records that arrive are applied to the running transaction,
                    // so its commit is ready to go the moment the barrier completes.
                    take();
                    applyCarry();
                    if (!awaitDone(inflight, true)) return;
                    if (!inflight.barrier().done().toCompletableFuture().isDone()) continue;
                    finishInflight();
                    if (checkpoint == null && (head - tail > capacity * settings.checkpointFraction()
                            || head - tail + transactionBlocks(maxTx, layout.blockSize()) > capacity))
                        startCheckpoint();
                }
                take();
                applyCarry();
                if (applied > committed) {
                    if (!runningFull && !stopping && waitForCompany()) continue;
                    boolean ask = settings.onDemand() && pendingEmpty() && carry.isEmpty() && asked();
                    commit();
                    if (ask) askedDone();
                } else if (settings.onDemand() && asked()) {
                    if (pendingEmpty()) askedDone(); // nothing to commit; else the records are taken first
                } else if (checkpoint != null && !settings.onDemand()) {
                    if (!recordsWithin(settings.commitIntervalNanos())) submitAlone(); // else they commit first
                } else if (!waitForRecords()) {
                    return;
                }
            }
        } catch (Throwable t) {
            failure = t;
            release();
        }
    }

    /** Moves what the appenders added into {@link #carry}; a new running transaction is due an interval after. */
    private void take() {
        synchronized (lock) {
            if (pending.isEmpty()) return;
            if (applied == committed && carry.isEmpty())
                commitDueNanos = firstPendingNanos + settings.commitIntervalNanos();
            carry.addAll(pending);
            records += pending.size();
            pending = new ArrayList<>();
        }
    }

    /** Applies the records taken, in order, until the running transaction is as big as one may be. */
    private void applyCarry() {
        int margin = layout.bitmapBlocks() + 2;
        while (!carry.isEmpty()) {
            if (applied > committed && meta.pendingBlocks() + margin >= maxTx) {
                runningFull = true;
                return;
            }
            JournalRecord r = carry.poll();
            if (r instanceof JournalRecord.File f && f.change() == FileState.Change.WRITTEN) afterData = true;
            r.applyTo(meta);
            applied++;
        }
    }

    /**
     * Waits for company while that is worth it: the running transaction is not due yet, and fewer callers wait
     * than the last commit acknowledged (after JBD2, which lets a lone synchronous writer commit at once and
     * makes several wait for each other); true when it waited.
     */
    private boolean waitForCompany() throws InterruptedException {
        synchronized (lock) {
            if (settings.onDemand()) {
                // Until a commit is asked for (or the records would overfill a transaction, or the journal stops);
                // records that come meanwhile are taken first, so the commit holds every record appended before.
                if (!wantsCaller()) return false;
                while (wantsCaller() && pending.isEmpty()) lock.wait(1000);
                return true;
            }
            if (!worthWaiting()) return false;
            do {
                TimeUnit.NANOSECONDS.timedWait(lock, commitDueNanos - System.nanoTime());
            } while (worthWaiting());
            return true;
        }
    }

    private boolean wantsCaller() {
        return commitsAsked == commitsDone && !stopping && !abandoned && pending.size() < burstRecords();
    }

    /** On demand: commits asked for ({@link #commitWaiting}) and those the commit thread has handled. */
    private long commitsAsked, commitsDone; // guarded by lock

    /** How many callers wait for durability now. */
    public int callersWaiting() {
        synchronized (lock) {
            return callersWaiting;
        }
    }

    /**
     * With {@link Settings#onDemand()}: commits every record appended so far (nothing when none is left to
     * commit) and returns once the transaction is handed to the log (its waiters hear when it is durable), or
     * the journal failed or stopped, or {@code timeoutNanos} passed (false then).
     */
    public boolean commitWaiting(long timeoutNanos) throws InterruptedException {
        if (!settings.onDemand()) throw new IllegalStateException("the journal commits by itself: not on demand");
        long until = System.nanoTime() + timeoutNanos;
        synchronized (lock) {
            long ticket = ++commitsAsked;
            lock.notifyAll();
            while (commitsDone < ticket && failure == null && !abandoned && !stopping) {
                long left = until - System.nanoTime();
                if (left <= 0) return false;
                TimeUnit.NANOSECONDS.timedWait(lock, left);
            }
            return true;
        }
    }

    /** The commit thread has handled every commit asked for so far. */
    private void askedDone() {
        synchronized (lock) {
            if (commitsDone != commitsAsked) {
                commitsDone = commitsAsked;
                lock.notifyAll();
            }
        }
    }

    private boolean asked() {
        synchronized (lock) {
            return commitsAsked != commitsDone;
        }
    }

    private boolean worthWaiting() {
        return commitDueNanos - System.nanoTime() > 0 && !stopping && !abandoned && pending.size() < burstRecords()
                && callersWaiting < callersLastAcknowledged;
    }

    /**
     * Waits up to {@code nanos} for a record, so a checkpoint's next slice rides the next commit instead of
     * going alone the moment the journal is between commits; true when one came (and nothing stops the journal).
     */
    private boolean recordsWithin(long nanos) throws InterruptedException {
        long until = System.nanoTime() + nanos;
        synchronized (lock) {
            while (pending.isEmpty() && !stopping && !abandoned && until - System.nanoTime() > 0)
                TimeUnit.NANOSECONDS.timedWait(lock, until - System.nanoTime());
            return !pending.isEmpty() && !stopping && !abandoned;
        }
    }

    private boolean pendingEmpty() {
        synchronized (lock) {
            return pending.isEmpty();
        }
    }

    /** Waits for a record (or, on demand, a commit asked for); false when the thread is to end (stopped with nothing left, or abandoned). */
    private boolean waitForRecords() throws InterruptedException {
        synchronized (lock) {
            while (pending.isEmpty() && !stopping && !abandoned && commitsAsked == commitsDone) lock.wait();
            return !abandoned && !(stopping && pending.isEmpty());
        }
    }

    /** Waits for {@code f}'s barrier; false when the journal was abandoned meanwhile. */
    private boolean awaitDone(InFlight f) throws InterruptedException {
        return awaitDone(f, false);
    }

    /**
     * Waits for {@code f}'s barrier, or with {@code orRecords} until there are records to apply meanwhile (none
     * while the running transaction is full: they wait in {@link #carry}); false when the journal was abandoned.
     */
    private boolean awaitDone(InFlight f, boolean orRecords) throws InterruptedException {
        var done = f.barrier().done().toCompletableFuture();
        synchronized (lock) {
            while (!done.isDone() && !abandoned && !(orRecords && !pending.isEmpty() && !runningFull)) lock.wait(1000);
        }
        return !abandoned;
    }

    /** Commits what the metadata holds beyond the last commit: built, room made, handed to the log. */
    private void commit() throws IOException, InterruptedException {
        List<Long> blocks = meta.takeCommit();
        long through = applied;
        committed = applied;
        runningFull = false;
        commitDueNanos = System.nanoTime(); // records still carried are due at once
        if (blocks.isEmpty()) {
            if (inflight == null) acknowledge(through);
            return;
        }
        ByteBuffer tx = build(blocks);
        int size = tx.capacity() / layout.blockSize();
        if (size > capacity)
            throw new IllegalStateException("a transaction of " + blocks.size() + " blocks does not fit a journal of "
                    + capacity + " log blocks");
        makeRoom(size);
        lastTxLogBlocks = size;
        List<LogWriter.Write> writes = new ArrayList<>(3);
        int bs = layout.blockSize();
        // One write per contiguous stretch of the log (two when the transaction wraps), not one per block.
        for (int i = 0; i < size; ) {
            int j = i + 1;
            while (j < size && layoutBlock(head + j) == layoutBlock(head + j - 1) + 1) j++;
            writes.add(new LogWriter.Write(tx.slice(i * bs, (j - i) * bs), layoutBlock(head + i) * bs, false));
            i = j;
        }
        int k = size - blocks.size() - 1;
        for (int i = 0; i < blocks.size(); i++) logged.put(blocks.get(i), tx.slice((k + i) * bs, bs));
        head += size;
        nextSeq++;
        boolean preflush = afterData;
        afterData = false;
        submit(writes, through, blocks.size(), preflush);
    }

    /** Waits until a transaction of {@code size} log blocks fits, checkpointing as needed. */
    private void makeRoom(int size) throws IOException, InterruptedException {
        while (head - tail + size > capacity) {
            if (inflight == null) {
                if (checkpoint == null) startCheckpoint();
                submitAlone();
            }
            if (!awaitDone(inflight)) throw new IOException("the journal was abandoned");
            finishInflight();
        }
    }

    /**
     * Hands {@code writes} to the log, with the checkpoint's next step when one is waiting for a ride: a slice
     * of its home writes riding a transaction ({@code blocks > 0}), all that are left when it goes alone.
     */
    private void submit(List<LogWriter.Write> writes, long through, int blocks, boolean preflush) {
        Stage carried = null;
        if (checkpoint != null && !checkpoint.stepSubmitted) {
            carried = checkpoint.stage;
            checkpoint.stepSubmitted = true;
            if (carried == Stage.HOME) {
                int bs = layout.blockSize();
                int left = checkpoint.images.size() - checkpoint.written;
                checkpoint.sliceEnd = checkpoint.written + (blocks == 0 ? left : homeSlice(left));
                for (Map.Entry<Long, ByteBuffer> e : checkpoint.images.subList(checkpoint.written, checkpoint.sliceEnd))
                    writes.add(new LogWriter.Write(e.getValue(), e.getKey() * bs, true));
            } else {
                writes.add(new LogWriter.Write(ByteBuffer.wrap(superBlock(layout, seed, checkpoint.newTailSeq,
                        checkpoint.newTail)), layout.journalStart() * layout.blockSize(), false));
            }
        }
        long t0 = System.nanoTime();
        LogWriter.Barrier b = log.submit(writes, preflush);
        inflight = new InFlight(b, through, blocks, carried, t0);
        b.done().whenComplete((x, e) -> {
            // The callers hear at once, from the thread that saw the barrier complete; the commit thread,
            // woken too, checks the same and goes on with the next transaction.
            if (b.succeeded()) acknowledge(through);
            synchronized (lock) {
                lock.notifyAll();
            }
        });
    }

    /**
     * Everything through record {@code through} is durable: its waiters are answered (from any thread; the
     * monitor keeps {@code durable} from going back when a late callback meets the commit thread).
     */
    private synchronized void acknowledge(long through) {
        if (through <= durable) return;
        durable = through;
        int acknowledged = release();
        synchronized (lock) {
            callersLastAcknowledged = acknowledged;
        }
    }

    /** The checkpoint's next step on its own: the journal has no transaction for it to ride on. */
    private void submitAlone() {
        submit(new ArrayList<>(), durable, 0, false);
    }

    /**
     * Home writes for the next commit to carry, of {@code left}: the configured slice, or more when the log's
     * free room, at the last transaction's size per commit, leaves fewer than twice as many commits as slices.
     */
    private int homeSlice(int left) {
        long free = capacity - (head - tail);
        long commitsLeft = Math.max(1, free / Math.max(1, lastTxLogBlocks) / 2);
        long slice = Math.max(settings.checkpointSliceBlocks(), (left + commitsLeft - 1) / commitsLeft);
        return (int) Math.min(left, slice);
    }

    /** The hand-over in flight is durable (or failed: thrown): acknowledge, count, move the checkpoint on. */
    private void finishInflight() throws IOException {
        InFlight f = inflight;
        f.barrier().await();
        inflight = null;
        long nanos = System.nanoTime() - f.startNanos();
        synchronized (lock) {
            forces++;
            barrierNanos += nanos;
            flushNanos += f.barrier().flushNanos();
            if (f.blocks() > 0) {
                transactions++;
                loggedBlocks += f.blocks();
            }
        }
        acknowledge(f.through());
        if (f.carried() == Stage.HOME) {
            synchronized (lock) {
                homeSteps++;
                homeWrites += checkpoint.sliceEnd - checkpoint.written;
            }
            checkpoint.written = checkpoint.sliceEnd;
            if (checkpoint.written == checkpoint.images.size()) checkpoint.stage = Stage.TAIL;
            checkpoint.stepSubmitted = false;
        } else if (f.carried() == Stage.TAIL) {
            tail = checkpoint.newTail;
            tailSeq = checkpoint.newTailSeq;
            checkpoint = null;
            synchronized (lock) {
                checkpoints++;
            }
        }
    }

    /** Begins a checkpoint of everything logged so far (nothing may be in flight: all of it is committed). */
    private void startCheckpoint() {
        checkpoint = new Checkpoint(logged, head, nextSeq);
        logged = new HashMap<>();
    }

    /** Log blocks a transaction of {@code n} logged blocks takes: its descriptors, the blocks, the commit. */
    static long transactionBlocks(int n, int blockSize) {
        return descriptorsFor(n, blockSize) + n + 1L;
    }

    static int descriptorsFor(int n, int blockSize) {
        int cap = descriptorCapacity(blockSize);
        return (n + cap - 1) / cap;
    }

    /** The running transaction in one buffer, the images built in place from the metadata. */
    private ByteBuffer build(List<Long> blocks) {
        return encode(layout, seed, nextSeq, blocks, meta::image);
    }

    /** Writes the image of block {@code home} into {@code into[at, at + block size)}, which holds zeros. */
    interface Images {
        void image(long home, byte[] into, int at);
    }

    /**
     * Transaction {@code seq} logging {@code homes} in one buffer: descriptor blocks (as many as its tags need,
     * numbered), the logged blocks' images, the commit block with the CRC32C of all of them.
     */
    static ByteBuffer encode(Layout layout, byte[] seed, long seq, List<Long> homes, Images images) {
        int bs = layout.blockSize();
        int n = homes.size();
        int cap = descriptorCapacity(bs);
        int k = descriptorsFor(n, bs);
        byte[] all = new byte[(k + n + 1) * bs];
        ByteBuffer o = Layout.le(all);
        for (int i = 0; i < k; i++) {
            int at = i * bs;
            o.putInt(at, DESC_MAGIC).putInt(at + 4, TYPE_DESCRIPTOR).putLong(at + 8, seq).putInt(at + 16, n)
                    .putInt(at + 20, i);
            for (int t = i * cap; t < Math.min(n, (i + 1) * cap); t++)
                o.putLong(at + DESC_HEADER_BYTES + (t - i * cap) * TAG_BYTES, homes.get(t));
        }
        for (int i = 0; i < n; i++) images.image(homes.get(i), all, (k + i) * bs);
        CRC32C crc = seeded(seed, seq);
        crc.update(all, 0, (k + n) * bs);
        int at = (k + n) * bs;
        o.putInt(at, DESC_MAGIC).putInt(at + 4, TYPE_COMMIT).putLong(at + 8, seq).putInt(at + 16, n)
                .putInt(at + 20, (int) crc.getValue());
        return o;
    }

    /**
     * One past the highest sequence number any descriptor or commit block in the log carries (1 when none
     * does): where a journal whose superblock is lost starts again, past everything an old scan could find.
     */
    static long pastEverySeq(Layout layout, Metadata.BlockReader reader) {
        long highest = 0;
        for (int i = 0; i < layout.journalBlocks() - 1; i++) {
            ByteBuffer d = Layout.le(reader.read(layout.journalStart() + 1 + i));
            long s = d.getLong(8);
            if (d.getInt(0) == DESC_MAGIC && s > highest && s < MAX_SEQ) highest = s;
        }
        return highest + 1;
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
     * Checkpoints everything committed, from the calling thread (only while the commit thread is stopped, or
     * before it starts): the logged images home, a barrier, the journal superblock with the tail at the head,
     * a barrier. The log is empty afterwards.
     */
    void checkpoint() throws IOException {
        requireStopped();
        try {
            drainInflight();
            finishCheckpoint();
            startCheckpoint();
            finishCheckpoint();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while checkpointing");
        }
    }

    /** Waits for the hand-over in flight, if any, and finishes it (from the calling thread, the commit thread stopped). */
    private void drainInflight() throws IOException, InterruptedException {
        if (inflight != null && awaitDone(inflight)) finishInflight();
    }

    private void finishCheckpoint() throws IOException, InterruptedException {
        while (checkpoint != null) {
            submitAlone();
            if (!awaitDone(inflight)) throw new IOException("the journal was abandoned");
            finishInflight();
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

    /**
     * Stops at once as {@link #abandon} does, and from now on every waiter and every call fails with {@code why}
     * (another host took the volume): nothing more is written or acknowledged.
     */
    void fence(Throwable why) {
        if (failure == null) failure = why;
        abandon();
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

    private void requireStopped() {
        if (thread.isAlive()) throw new IllegalStateException("the commit thread is running");
    }

    /** Commits the metadata's changes since the last commit from the calling thread (only while it is stopped). */
    void commitNow() throws IOException {
        requireStopped();
        try {
            drainInflight();
            commit();
            drainInflight();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while committing");
        }
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

    /**
     * What a scan of the log found: the last image of each block logged by the transactions taken (whole and
     * in sequence from the tail), where the log goes on, and the sequence number the next transaction takes.
     * {@code nextSeq} lies past every sequence number the scan saw at or after the stop (JBD2's rule: a new
     * transaction never takes the number of one still in the log, so an old one is never taken for new).
     *
     * <p>{@code damage} is null when the log simply ends (never written beyond, or a torn last transaction,
     * which was never acknowledged: only one transaction is in flight at a time). Otherwise the transaction
     * at the stop was committed and cannot be replayed: later committed transactions prove it was once
     * durable, or its own valid commit block logs a block that is not metadata. Then nothing may be written
     * on the strength of this scan alone: the caller reports it ({@link VolumeException.JournalDamaged}).
     */
    record Replay(Map<Long, byte[]> blocks, int transactions, long position, long nextSeq, String stoppedBecause,
                  long lastStart, List<LoggedTransaction> taken, Damage damage) {}

    /**
     * Committed transactions after the stop that a scan could not replay in sequence: {@code stop} is the
     * sequence number the scan stopped at, {@code skipped} every sequence number at or after it that was seen
     * committed or damaged (in order), {@code later} those of the whole, committed ones after the stop (in
     * order), {@code skippedBlocks} the metadata blocks those log (the damaged one's own blocks are unknown
     * when its descriptor is gone).
     */
    record Damage(long stop, String why, List<Long> skipped, List<Long> later, long skippedBlocks) {
        String report() {
            return "the journal's transaction " + stop + " cannot be replayed (" + why + ") but "
                    + (later.isEmpty() ? "it was committed" : later.size() + " committed transaction"
                    + (later.size() == 1 ? "" : "s") + " follow it (" + range(later) + ")") + "; transactions "
                    + skipped + " (" + skippedBlocks + " metadata blocks) are held back";
        }

        private static String range(List<Long> later) {
            long a = later.get(0), b = later.get(later.size() - 1);
            return a == b ? "sequence " + a : "sequences " + a + " to " + b;
        }
    }

    /**
     * A committed transaction read whole from the log: its sequence number, log position, length in log
     * blocks, the home of each logged block and its image.
     */
    record Parsed(long seq, long position, int logBlocks, long[] homes, List<byte[]> images) {}

    /**
     * A committed transaction as a scan of the log found it: its sequence number, its log position, and the
     * image blocks it takes (descriptors, logged images, commit block), in order. For tools and crash tests.
     */
    public record LoggedTransaction(long seq, long position, List<Long> imageBlocks) {}

    /** Sequence numbers stop well short of overflow: a superblock naming one past this is corrupt. */
    static final long MAX_SEQ = 1L << 62;

    /** As {@link #scan(Layout, byte[], Metadata.BlockReader, boolean)}, looking for damage past the stop. */
    static Replay scan(Layout layout, byte[] seed, Metadata.BlockReader reader) {
        return scan(layout, seed, reader, true);
    }

    /**
     * Reads the log from its tail: each transaction whose descriptor has the next sequence number, whose commit
     * block's checksum matches and which logs only metadata blocks is taken; the first that is not ends the
     * replay. With {@code probe}, the rest of the log is then read for committed transactions with higher
     * sequence numbers (a damaged transaction in the middle, not a torn end); a volume closed cleanly has an
     * empty log, whose rest holds only older transactions, so its open skips that read.
     *
     * @throws VolumeException.Corrupt (JOURNAL) when the journal superblock fails its checksum or holds an
     *                                 impossible tail or sequence number
     */
    static Replay scan(Layout layout, byte[] seed, Metadata.BlockReader reader, boolean probe) {
        int bs = layout.blockSize();
        byte[] sb = reader.read(layout.journalStart());
        ByteBuffer o = Layout.le(sb);
        if (o.getInt(0) != SUPER_MAGIC || o.getInt(4) != Layout.crc(seed, layout.journalStart(), sb, 8, bs - 8))
            throw new VolumeException.Corrupt(Structure.JOURNAL, layout.journalStart(), "journal superblock fails its checksum");
        long seq = o.getLong(8), pos = o.getLong(16);
        if (o.getInt(24) != layout.journalBlocks() || pos < 0 || pos >= MAX_SEQ || seq < 1 || seq >= MAX_SEQ)
            throw new VolumeException.Corrupt(Structure.JOURNAL, layout.journalStart(), "journal superblock describes "
                    + o.getInt(24) + " blocks, tail " + pos + ", sequence " + seq);
        int capacity = layout.journalBlocks() - 1;
        pos = Math.floorMod(pos, capacity); // positions only matter modulo the log; a huge one is not carried on
        long tail = pos;
        Map<Long, byte[]> out = new LinkedHashMap<>();
        int count = 0;
        long lastStart = -1;
        String why;
        long scanned = 0;
        List<LoggedTransaction> taken = new ArrayList<>();
        boolean committedButBad = false;
        while (true) {
            String[] reason = new String[1];
            Parsed t = parse(layout, seed, reader, pos, seq, capacity - scanned, reason);
            if (t == null) {
                why = reason[0];
                break;
            }
            long bad = firstNonMetadata(layout, t.homes());
            if (bad >= 0) {
                why = "committed transaction " + seq + " logs block " + bad + ", which is not a bitmap, descriptor or"
                        + " file-table block of this volume";
                committedButBad = true;
                break;
            }
            for (int i = 0; i < t.homes().length; i++) out.put(t.homes()[i], t.images().get(i));
            count++;
            List<Long> where = new ArrayList<>(t.logBlocks());
            for (int i = 0; i < t.logBlocks(); i++) where.add(layoutBlock(layout, pos + i));
            taken.add(new LoggedTransaction(seq, pos, List.copyOf(where)));
            lastStart = pos;
            pos += t.logBlocks();
            scanned += t.logBlocks();
            seq++;
        }
        long nextSeq = seq;
        Damage damage = null;
        if (probe || committedButBad) {
            ByteBuffer at = Layout.le(reader.read(layoutBlock(layout, pos)));
            boolean tornHere = at.getInt(0) == DESC_MAGIC && at.getLong(8) == seq; // a torn last one: move past it
            // The rest of the log: [pos + 1, tail + capacity) holds older transactions, unless the one at pos
            // was damaged after it was committed, when the ones after it are there too.
            List<Long> skipped = new ArrayList<>();
            List<Long> later = new ArrayList<>();
            java.util.Set<Long> laterHomes = new java.util.HashSet<>();
            long highest = committedButBad || tornHere ? seq : seq - 1;
            long end = tail + capacity;
            for (long q = pos + 1; q < end; ) {
                byte[] b = reader.read(layoutBlock(layout, q));
                ByteBuffer d = Layout.le(b);
                long s = d.getLong(8);
                if (d.getInt(0) != DESC_MAGIC || s <= seq || s >= MAX_SEQ) {
                    q++;
                    continue;
                }
                highest = Math.max(highest, s);
                Parsed t = d.getInt(4) == TYPE_DESCRIPTOR && d.getInt(20) == 0
                        ? parse(layout, seed, reader, q, s, end - q, new String[1]) : null;
                if (t == null) {
                    q++;
                    continue;
                }
                if (!skipped.contains(s)) skipped.add(s);
                if (firstNonMetadata(layout, t.homes()) < 0) {
                    later.add(s);
                    for (long h : t.homes()) laterHomes.add(h);
                }
                q += t.logBlocks();
            }
            if (committedButBad || !later.isEmpty()) {
                skipped.add(seq);
                skipped.sort(null);
                later.sort(null);
                damage = new Damage(seq, why, List.copyOf(skipped), List.copyOf(later), laterHomes.size());
            }
            nextSeq = highest + 1;
        }
        return new Replay(out, count, pos, nextSeq, why, lastStart, List.copyOf(taken), damage);
    }

    /** The first of {@code homes} that is not a metadata block of the volume, or -1. */
    private static long firstNonMetadata(Layout layout, long[] homes) {
        for (long h : homes) if (!isMetadataHome(layout, h)) return h;
        return -1;
    }

    /**
     * The transaction numbered {@code seq} at log position {@code pos}, read whole and checked against its
     * commit block, taking at most {@code room} log blocks; null (with {@code why[0]} set) when it is not
     * there, not whole or fails its checksum.
     */
    private static Parsed parse(Layout layout, byte[] seed, Metadata.BlockReader reader, long pos, long seq,
                                long room, String[] why) {
        int bs = layout.blockSize();
        byte[] desc = reader.read(layoutBlock(layout, pos));
        ByteBuffer d = Layout.le(desc);
        if (d.getInt(0) != DESC_MAGIC || d.getInt(4) != TYPE_DESCRIPTOR || d.getLong(8) != seq) {
            why[0] = "no descriptor of transaction " + seq + " at log position " + pos;
            return null;
        }
        int n = d.getInt(16);
        if (n < 1 || d.getInt(20) != 0 || transactionBlocks(n, bs) > room) {
            why[0] = "descriptor of transaction " + seq + " lists " + n + " blocks";
            return null;
        }
        int k = descriptorsFor(n, bs), cap = descriptorCapacity(bs);
        CRC32C crc = seeded(seed, seq);
        crc.update(desc);
        long[] homes = new long[n];
        for (int i = 0; i < k; i++) {
            byte[] di = i == 0 ? desc : reader.read(layoutBlock(layout, pos + i));
            ByteBuffer o2 = Layout.le(di);
            if (i > 0) {
                if (o2.getInt(0) != DESC_MAGIC || o2.getInt(4) != TYPE_DESCRIPTOR || o2.getLong(8) != seq
                        || o2.getInt(16) != n || o2.getInt(20) != i) {
                    why[0] = "transaction " + seq + " has a broken descriptor chain";
                    return null;
                }
                crc.update(di);
            }
            for (int t = i * cap; t < Math.min(n, (i + 1) * cap); t++)
                homes[t] = o2.getLong(DESC_HEADER_BYTES + (t - i * cap) * TAG_BYTES);
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
            why[0] = "transaction " + seq + " has no valid commit block (torn or corrupt)";
            return null;
        }
        return new Parsed(seq, pos, k + n + 1, homes, images);
    }

    static boolean isMetadataHome(Layout layout, long block) {
        if (block < 0 || block >= layout.geometry().totalBlocks()) return false;
        if (block >= layout.gdtStart() && block < layout.journalStart()) return true;
        int g = layout.geometry().groupOf(block);
        long rel = block - layout.geometry().groupStart(g);
        return rel >= 1 && rel <= layout.bitmapBlocks();
    }
}
