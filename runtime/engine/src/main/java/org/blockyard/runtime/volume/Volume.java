package org.blockyard.runtime.volume;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

import com.typesafe.config.Config;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.api.io.QueueLimits;
import org.blockyard.runtime.alloc.ActorBlockAllocator;
import org.blockyard.runtime.alloc.AllocatorSettings;
import org.blockyard.runtime.alloc.BlockGroup;
import org.blockyard.runtime.alloc.FileCatalog;
import org.blockyard.runtime.alloc.FileState;
import org.blockyard.runtime.alloc.Policies;
import akka.actor.typed.ActorRef;

import org.blockyard.runtime.io.ActorBlockQueue;
import org.blockyard.runtime.io.BlockDevice;
import org.blockyard.runtime.io.FileDevice;
import org.blockyard.runtime.io.QueueActor;
import org.blockyard.runtime.io.QueueSetup;
import org.blockyard.runtime.io.IoSettings;
import org.blockyard.runtime.store.FileStore;

/**
 * A durable volume in an image file: open it, use it through {@link #allocator()} (the {@code BlockAllocator}
 * API) or {@link #fileStore()}, close it. Format in docs/volume-format.md.
 *
 * <p>Open: check the superblock, replay the journal's committed transactions (dropping a torn or corrupt
 * last one), load and check descriptors, bitmaps and the file table; after an unclean shutdown, make the
 * bitmaps agree with the owners (blocks claimed for preallocations or for calls never acknowledged are
 * freed) and commit that; mark the volume dirty; start the allocator's actors over the loaded bitmaps and
 * files, and the journal's commit thread. Close: stop the actors, commit and checkpoint everything, mark
 * the volume clean.
 *
 * <p>Durability: every bitmap change of a group and every extent-map change of a file appends a record to
 * the journal from the actor that makes it; the facade acknowledges a call only once the journal is
 * durable through the last record appended when the call's answer arrived (so concurrent calls share
 * commits). Reservation windows and preallocations are never written: they are hints, rebuilt in memory.
 */
public final class Volume implements AutoCloseable {
    /** The extent-API owner of {@code allocate}/{@code release} calls that name none. */
    public static final String DEFAULT_OWNER = "extents";

    private final Path image;
    private final FileChannel channel;
    /** This process's hold on the image, whose channel is {@link #channel}: given back after close's last write. */
    private ImageLock hold;
    private final Config config;
    private Superblock superblock;
    private final Metadata meta;
    private final Journal journal;
    private final ActorBlockAllocator actors;
    private final VolumeAllocator allocator;
    private final Catalog catalog;
    private final Recovery recovery;
    private FileStore store;
    /** The volume's block-I/O queue over the image, and its device: files' data and the journal. */
    private final BlockDevice device;
    /** Longest a close waits for the device to close (a request may be stuck in it). */
    private final long deviceTimeoutNanos;
    private final ActorRef<QueueActor.Command> queueRef;
    private final ActorBlockQueue queue;
    /** The io context the journal's requests carry (files' data carry their writers'). */
    static final long JOURNAL_OWNER = -2;
    private boolean closed;
    /** With multi-mount protection, the hold on its block; else null. */
    private Mmp mmp;
    /** Why nothing more may be written: another host took the volume (multi-mount protection); else null. */
    private volatile String lostTo;
    /** The close wrote everything and marked the volume clean: the MMP block is written clean too. */
    private boolean cleanClose;

    /** What opening found and did. */
    public record Recovery(boolean wasClean, int transactionsReplayed, int blocksReplayed, String logEnd,
                           long leaksFreed, long ownedBlocksMarked, long nanos) {}

    // ---- mkfs -----------------------------------------------------------------------------------------

    /**
     * Makes a volume of {@code layout} in {@code image} (created or overwritten; a regular file is sized to
     * the volume, a device must be big enough): superblock and backups, descriptors, empty bitmaps but for
     * the system zones, an empty file table, an empty journal.
     */
    public static Superblock mkfs(Path image, Layout layout) {
        return mkfs(image, layout, false);
    }

    /**
     * Makes a volume of {@code layout} in {@code image}, a file (created, or overwritten) or a device. Refuses,
     * writing nothing, an image a volume has open ({@link VolumeException.InUse}, even with {@code force}) and,
     * without {@code force}, one that already holds a Blockyard volume or a file whose first
     * {@value #OVERWRITE_PROBE_BYTES} bytes are not all zero ({@link VolumeException.WouldOverwrite}): the typo
     * that names a volume with files on it, or some other file, as mke2fs asks before it overwrites a file
     * system. A new, sparse or zero-filled file (truncate, fallocate) is taken as it is.
     */
    public static Superblock mkfs(Path image, Layout layout, boolean force) {
        return mkfs(image, layout, force, Superblock.DEFAULT_MMP_INTERVAL_MILLIS);
    }

    /**
     * As {@link #mkfs(Path, Layout, boolean)}; on a layout with multi-mount protection, its holders update the
     * MMP block every {@code mmpIntervalMillis}.
     */
    public static Superblock mkfs(Path image, Layout layout, boolean force, int mmpIntervalMillis) {
        return mkfs(image, Superblock.fresh(layout, mmpIntervalMillis), force);
    }

    /**
     * As {@link #mkfs(Path, Layout, boolean)}, the new volume's superblock {@code sb} (its layout, uuid and times):
     * a harness that replays a seed makes the same bytes every run.
     */
    public static Superblock mkfs(Path image, Superblock sb, boolean force) {
        Layout layout = sb.layout();
        Geometry g = layout.geometry();
        int bs = g.blockSizeBytes();
        try (ImageLock held = ImageLock.exclusive(image, true)) {
            FileChannel ch = held.channel();
            if (!force) refuseOverwrite(ch, image);
            boolean regular = Files.isRegularFile(image);
            if (regular) {
                ch.truncate(0);
                ch.write(ByteBuffer.wrap(new byte[1]), g.bytes() - 1);
            } else if (ch.size() > 0 && ch.size() < g.bytes()) {
                throw new IllegalArgumentException(image + " holds " + ch.size() + " bytes; the volume needs " + g.bytes());
            }
            Metadata m = Metadata.fresh(sb);
            for (long b : m.allBlocks()) write(ch, m.image(b), b * bs);
            byte[] zero = new byte[bs];
            for (int i = 1; i < layout.journalBlocks(); i++) write(ch, zero, (layout.journalStart() + i) * bs);
            write(ch, Journal.superBlock(layout, sb.uuidBytes(), 1, 0), layout.journalStart() * bs);
            if (layout.mmp()) write(ch, Mmp.clean(sb), layout.mmpBlock() * bs);
            for (int group = 1; group < g.groups(); group++)
                if (Layout.hasBackup(group)) write(ch, sb.copyIn(group).encode(), layout.headerBlock(group) * bs);
            ch.force(true);
            write(ch, sb.encode(), 0); // last: an interrupted mkfs leaves no volume
            ch.force(true);
        } catch (IOException e) {
            throw new UncheckedIOException("mkfs " + image + ": " + e.getMessage(), e);
        }
        return sb;
    }

    /** Bytes at the start of an image mkfs looks at before it overwrites them. */
    static final int OVERWRITE_PROBE_BYTES = 64 * 1024;

    /** Throws {@link VolumeException.WouldOverwrite} when {@code image} holds a volume or data. */
    private static void refuseOverwrite(FileChannel ch, Path image) throws IOException {
        ByteBuffer head = ByteBuffer.allocate(OVERWRITE_PROBE_BYTES);
        while (head.hasRemaining() && ch.read(head, head.position()) > 0) {
            // read what there is: a short file, or a device
        }
        byte[] b = head.array();
        int n = head.position();
        if (n >= Superblock.MAGIC.length && Arrays.equals(b, 0, Superblock.MAGIC.length, Superblock.MAGIC, 0,
                Superblock.MAGIC.length)) {
            String what;
            try {
                Superblock old = Superblock.decode(Arrays.copyOf(b, Superblock.BYTES), 0, image.toString());
                what = "a Blockyard volume (uuid " + old.uuid() + ", " + old.layout().geometry().totalBlocks()
                        + " blocks of " + old.layout().blockSize() + " bytes)";
            } catch (VolumeException e) {
                what = "a Blockyard volume whose superblock does not check (" + e.getMessage() + ")";
            }
            throw new VolumeException.WouldOverwrite(image + " already holds " + what
                    + "; mkfs --force makes a new, empty volume over it");
        }
        for (int i = 0; i < n; i++)
            if (b[i] != 0) throw new VolumeException.WouldOverwrite(image + " holds data (a non-zero byte at offset "
                    + i + ") and is not a Blockyard volume; mkfs --force overwrites it");
    }

    static void write(FileChannel ch, byte[] b, long pos) throws IOException {
        ByteBuffer buf = ByteBuffer.wrap(b);
        while (buf.hasRemaining()) pos += ch.write(buf, pos);
    }

    static byte[] read(FileChannel ch, long pos, int bytes) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(bytes);
        while (buf.hasRemaining()) {
            int n = ch.read(buf, pos + buf.position());
            if (n < 0) break;
        }
        return buf.array();
    }

    /** Reads and checks the primary superblock of {@code image}, and that the image holds the whole volume. */
    static Superblock readSuperblock(FileChannel ch, Path image) throws IOException {
        if (ch.size() < Superblock.BYTES && Files.isRegularFile(image))
            throw new VolumeException.NotAVolume(image + " is not a Blockyard volume (" + ch.size() + " bytes)");
        Superblock sb = Superblock.decode(read(ch, 0, Superblock.BYTES), 0, image.toString());
        long need = sb.layout().geometry().bytes();
        if (Files.isRegularFile(image) && ch.size() < need)
            throw new VolumeException.Truncated(image + " holds " + ch.size() + " bytes but its volume needs " + need
                    + " (" + sb.layout().geometry().totalBlocks() + " blocks of " + sb.layout().blockSize() + ")");
        return sb;
    }

    // ---- open -----------------------------------------------------------------------------------------

    public static Volume open(Path image, Config config) {
        return open(image, config, settingsFrom(config));
    }

    /** The journal's tunables from {@code blockyard.volume.journal}. */
    public static Journal.Settings settingsFrom(Config config) {
        Config j = config.getConfig("blockyard.volume.journal");
        return new Journal.Settings(j.getDuration("commit-interval").toNanos(), j.getInt("max-transaction-blocks"),
                j.getDouble("checkpoint-fraction"), j.getInt("checkpoint-slice-blocks"));
    }

    public static Volume open(Path image, Config config, Journal.Settings settings) {
        return open(image, config, settings, group -> {});
    }

    /**
     * As {@link #open(Path, Config, Journal.Settings)}; {@code memoryOnly} may mark blocks used in the allocator's
     * groups for this opening only, before the journal listens: they are never written and nobody owns them,
     * so they are never handed out and are gone at the next opening (a benchmark's prefill, as reservation
     * windows are).
     */
    public static Volume open(Path image, Config config, Journal.Settings settings, Consumer<BlockGroup> memoryOnly) {
        return open(image, config, settings, IoSettings.fromConfig(config), memoryOnly);
    }

    /** As {@link #open(Path, Config)}, its block-I/O queue set up by {@code io} (a host's elevator registry). */
    public static Volume open(Path image, Config config, IoSettings io) {
        return open(image, config, settingsFrom(config), io, group -> {});
    }

    private static Volume open(Path image, Config config, Journal.Settings settings, IoSettings io,
                               Consumer<BlockGroup> memoryOnly) {
        return open(image, config, settings, io, memoryOnly, d -> d);
    }

    /** As {@link #open(Path, Config, Journal.Settings)}, its image device seen through {@code device}: fault tests. */
    static Volume openOnDevice(Path image, Config config, Journal.Settings settings,
                               UnaryOperator<BlockDevice> device) {
        return open(image, config, settings, IoSettings.fromConfig(config), group -> {}, device);
    }

    private static Volume open(Path image, Config config, Journal.Settings settings, IoSettings io,
                               Consumer<BlockGroup> memoryOnly, UnaryOperator<BlockDevice> device) {
        // Held before any descriptor of the image is opened: a refusal here closes none, so it cannot drop the
        // lock of a volume this process has open on it (ImageLock says why).
        ImageLock held = ImageLock.exclusive(image, false);
        try {
            Volume v = new Volume(image, held, config, settings, io, memoryOnly, device);
            v.hold = held;
            return v;
        } catch (RuntimeException | Error e) {
            held.close();
            throw e;
        }
    }

    private Volume(Path image, ImageLock held, Config config, Journal.Settings settings, IoSettings io,
                   Consumer<BlockGroup> memoryOnly, UnaryOperator<BlockDevice> deviceView) {
        long t0 = System.nanoTime();
        FileChannel ch = held.channel();
        this.image = image;
        this.channel = ch;
        this.config = config;
        try {
            // Before anything is written (a replay, the superblock's state): another host may have it open.
            Superblock found = readSuperblock(ch, image);
            if (found.mmp()) mmp = Mmp.take(held, found, Mmp.holderName("volume " + image), this::lostToAnotherHost);
            Recovered r = recover(image, ch, settings);
            Superblock sb = r.superblock();
            Layout layout = sb.layout();
            this.meta = r.meta();
            this.journal = r.journal();
            this.superblock = r.opened();
            boolean wasClean = r.wasClean();
            Journal.Replay replay = r.replay();
            Map<Long, byte[]> overlay = replay.blocks();
            long[] fixed = r.fixed();
            this.catalog = new Catalog(meta, journal);
            Geometry g = layout.geometry();
            Config a = config.getConfig("blockyard.alloc");
            AllocationPolicy policy = Policies.configured(config, g);
            AllocatorSettings alloc = new AllocatorSettings(g, policy, a.getInt("search-slice-words"),
                    a.getInt("stash-capacity"), a.getInt("prealloc-min-window-blocks"), catalog);
            this.actors = ActorBlockAllocator.start(alloc, config, group -> {
                meta.forEachUsedDataRun(group.group(), (start, blocks) -> group.markUsed(start, blocks));
                memoryOnly.accept(group);
                group.journal((grp, start, blocks, used) -> journal.append(new JournalRecord.Bitmap(grp, start, blocks, used)));
            });
            // From here on the journal writes through the volume's block-I/O queue: its log as SYNC requests,
            // its checkpoints as META, each commit closed by a FLUSH. Recovery above wrote directly, as a
            // mount replays its journal before the file system runs.
            // No descriptor of its own. Guarded: a read is retried before it fails naming its blocks, and a flush
            // that failed fails every flush after it, the journal's too (GuardedDevice says why). Fenced: once
            // another host has taken the volume (multi-mount protection), nothing reaches the image.
            this.device = new GuardedDevice(deviceView.apply(new FileDevice(ch, layout.geometry().bytes())),
                    layout.blockSize(), () -> lostTo);
            this.deviceTimeoutNanos = io.setup().deviceTimeoutNanos();
            QueueLimits l = io.setup().limits();
            QueueSetup setup = io.setup().withLimits(new QueueLimits(l.maxSectors(), l.logicalBlockBytes(),
                    l.physicalBlockBytes(), config.getInt("blockyard.volume.queue-depth")));
            this.queueRef = actors.spawn(QueueActor.create(setup, device), "io-queue", QueueActor.props());
            this.queue = new ActorBlockQueue(queueRef, actors.system().scheduler(), setup.limits(),
                    device.capacitySectors(), io.submitTimeout());
            journal.writeThrough(LogWriter.queued(queue, (int) io.setup().limits().maxBytes(), ch, JOURNAL_OWNER,
                    config.getBoolean("blockyard.volume.journal.forced-commits")));
            journal.start();
            this.allocator = new VolumeAllocator(actors, journal, catalog);
            this.recovery = new Recovery(wasClean, replay.transactions(), overlay.size(), replay.stoppedBecause(),
                    fixed[0], fixed[1], System.nanoTime() - t0);
        } catch (IOException e) {
            releaseMmp();
            throw new UncheckedIOException("open " + image + ": " + e.getMessage(), e);
        } catch (RuntimeException | Error e) {
            releaseMmp();
            throw e;
        }
    }

    /**
     * What recovery of an image leaves: its superblock as found and as now marked (dirty, one more mount), the
     * checked metadata, the journal over it (its commit thread not started, the log empty), the replay, and
     * {leaks freed, owned blocks marked} when the volume was not closed cleanly.
     */
    record Recovered(Superblock superblock, Superblock opened, Metadata meta, Journal journal, Journal.Replay replay,
                     boolean wasClean, long[] fixed) {}

    /**
     * Recovers the volume {@code ch} holds, as every open does before the allocator runs: checks the superblock,
     * replays the journal's committed transactions (refusing, writing nothing, a damaged journal), checks what the
     * replay leads to, writes it home, reconciles the bitmaps with the owners after an unclean shutdown, empties
     * the log and marks the volume dirty. Through {@code ch} alone: an image file's channel, or an image in
     * memory ({@link CrashImage}, the power-loss harness's crash states).
     */
    static Recovered recover(Path image, FileChannel ch, Journal.Settings settings) throws IOException {
        Superblock sb = readSuperblock(ch, image);
        Layout layout = sb.layout();
        int bs = layout.blockSize();
        Metadata.BlockReader disk = b -> {
            try {
                return read(ch, b * bs, bs);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        };
        Journal.Replay replay = Journal.scan(layout, sb.uuidBytes(), disk, !sb.clean());
        if (replay.damage() != null)
            throw new VolumeException.JournalDamaged(image + ": " + replay.damage().report() + "; nothing was "
                    + "replayed or written, the volume is left as it is (fsck shows it; fsck --repair replays the "
                    + "transactions that can be and decides)", replay.damage().skipped(),
                    replay.damage().skippedBlocks());
        // Check what the replay leads to before writing anything: a corrupt volume is left as it was.
        Map<Long, byte[]> overlay = replay.blocks();
        Metadata checked = Metadata.load(sb, b -> overlay.containsKey(b) ? overlay.get(b) : disk.read(b), null);
        for (Map.Entry<Long, byte[]> e : overlay.entrySet()) write(ch, e.getValue(), e.getKey() * bs);
        boolean wasClean = sb.clean() && replay.transactions() == 0;
        if (!overlay.isEmpty()) ch.force(false);
        // The image now holds what was checked: reading it all again would only double the open's reads (a
        // second of an 8 TiB volume's open).
        Journal journal = new Journal(ch, checked, settings, replay.position(), replay.nextSeq());
        long[] fixed = {0, 0};
        if (!wasClean) fixed = reconcileInSteps(checked, journal);
        journal.checkpoint(); // the log is empty from here: the replayed blocks are home
        Superblock opened = sb.withState(false, sb.mounts() + 1);
        if (settings.onDemand()) // a replayed load: the mark is the same bytes every run, its time kept as it was
            opened = new Superblock(opened.layout(), opened.uuid(), opened.featuresCompat(), opened.featuresIncompat(),
                    opened.featuresRoCompat(), false, opened.mounts(), opened.createdSeconds(), sb.writtenSeconds(),
                    opened.copyOf(), opened.mmpIntervalMillis());
        write(ch, opened.encode(), 0);
        ch.force(false);
        return new Recovered(sb, opened, checked, journal, replay, wasClean, fixed);
    }

    /**
     * Makes the bitmaps agree with the owners ({@link Metadata#reconcile}) and commits it, a few groups per
     * transaction: leaks in every group of a big volume would otherwise make one transaction larger than the
     * log. Each step is whole on its own (a crash between steps leaves the volume dirty, and the next open
     * reconciles again). Only while the journal's commit thread is stopped. Answers {leaks freed, owned set}.
     */
    private static long[] reconcileInSteps(Metadata meta, Journal journal) throws IOException {
        long[][] owned = meta.ownedBitmaps();
        int groups = meta.geometry.groups();
        int step = Math.max(1, (journal.maxTransactionBlocks() - 2) / (meta.layout.bitmapBlocks() + 1));
        long[] fixed = {0, 0};
        for (int g = 0; g < groups; g += step) {
            long[] f = meta.reconcile(owned, g, Math.min(groups, g + step));
            fixed[0] += f[0];
            fixed[1] += f[1];
            journal.commitNow();
        }
        return fixed;
    }

    public Path image() {
        return image;
    }

    public Layout layout() {
        return superblock.layout();
    }

    public Superblock superblock() {
        return superblock;
    }

    public Geometry geometry() {
        return superblock.layout().geometry();
    }

    /** What opening did: replayed transactions, leaks freed, how long it took. */
    public Recovery recovery() {
        return recovery;
    }

    /** The durable allocator: every call that changes metadata completes once it is in the journal. */
    public VolumeAllocator allocator() {
        return allocator;
    }

    public ActorBlockAllocator actors() {
        return actors;
    }

    /** The volume's journal: for a harness that drives its commits ({@link Journal.Settings#onDemand()}). */
    public Journal journal() {
        return journal;
    }

    public Journal.Stats journalStats() {
        return journal.stats();
    }

    /** Files with data through the I/O queue onto this image (created on first call): the journal's queue. */
    public synchronized FileStore fileStore() {
        if (store == null) store = FileStore.over(actors, allocator, queue, queueRef, device, deviceTimeoutNanos);
        return store;
    }

    /** The volume's block-I/O queue: files' data, the journal (SYNC) and its checkpoints (META). */
    public org.blockyard.api.io.BlockQueue queue() {
        return queue;
    }

    /**
     * Closes the queue (what it holds fails as closed), the actors, then the device: nothing reaches the image
     * through them after. The device works on the volume's own channel and closes no descriptor (one would drop
     * the volume's lock), so the image stays locked for the close's last writes.
     */
    private void stopIo() {
        if (store != null) {
            store.close();
            return;
        }
        queue.close();
        actors.close();
        try {
            BlockDevice.closeWithin(device, deviceTimeoutNanos); // not in time: the queue's stop logged it
        } catch (IOException e) {
            throw new UncheckedIOException("device did not close: " + e.getMessage(), e);
        }
    }

    /** An open that failed after taking the MMP block gives it back clean: it wrote nothing that needs a holder. */
    private void releaseMmp() {
        if (mmp == null) return;
        try {
            mmp.release();
        } catch (RuntimeException ignored) {
            // left as it is: the next opener waits and sees it stand still
        }
    }

    /**
     * Another host took the volume (its multi-mount protection block holds another's number): nothing more may
     * be written here. The device refuses every request from now on, then the journal stops, failing every call
     * that waits for it and every later one with the reason.
     */
    private void lostToAnotherHost(String why) {
        if (lostTo == null) lostTo = why;
        Journal j = journal;
        if (j != null) j.fence(new VolumeException.InUse(why));
    }

    /** Stops the actors, commits and checkpoints everything, frees what only memory held, marks the volume clean. */
    @Override
    public synchronized void close() {
        if (closed) return;
        closed = true;
        if (lostTo != null) { // another host has it: write nothing, as a crash would
            journal.abandon();
            try {
                stopIo();
            } catch (RuntimeException ignored) {
                // the device refuses everything now
            }
            release();
            throw new VolumeException.InUse(lostTo);
        }
        try {
            // The journal's last commits and checkpoints go straight to the image: the queue closes now.
            journal.writeThrough(LogWriter.direct(channel));
            stopIo();
            journal.stop();
            if (journal.failure() != null)
                throw new VolumeException.JournalFailed("journal failed; the volume stays marked dirty", journal.failure());
            journal.checkpoint(); // everything committed is home: the log is empty for what follows
            reconcileInSteps(meta, journal); // preallocations the actors did not give back: memory only
            journal.checkpoint();
            superblock = superblock.withState(true, superblock.mounts());
            write(channel, superblock.encode(), 0);
            channel.force(false);
            cleanClose = true;
        } catch (IOException e) {
            throw new UncheckedIOException("close " + image + ": " + e.getMessage(), e);
        } finally {
            journal.shutdownAcks();
            release(); // after the last write and force: until then no other process can open the volume
        }
    }

    /**
     * Ends the volume as {@code kill -9} would: the journal commits nothing more, nothing is checkpointed,
     * the superblock stays dirty. What a transaction already forced survives. For crash tests.
     */
    public synchronized void abandon() {
        if (closed) return;
        closed = true;
        journal.abandon();
        try {
            stopIo();
        } catch (RuntimeException ignored) {
            // a crash does not wait for anyone
        }
        release();
    }

    /**
     * Gives the image back: its channel closes and the lock goes. That close waits for a request still stuck in
     * the channel (the device did not close in time), so it runs in a thread of its own and the volume's close
     * waits for it at most the device timeout, as for the device: the image stays held until it is done.
     */
    private void release() {
        if (mmp != null) {
            try {
                if (cleanClose) mmp.release();
                else mmp.close();
            } catch (RuntimeException e) {
                // the block could not be written clean: the next opener waits and sees it stand still
            }
        }
        if (hold == null) return;
        Thread t = new Thread(hold::close, "blockyard-image-release");
        t.setDaemon(true);
        t.start();
        try {
            t.join(Math.max(1, deviceTimeoutNanos / 1_000_000));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // ---- files ----------------------------------------------------------------------------------------

    /**
     * Which files and owners exist, and their extent maps as the actors last changed them. Makes each file's
     * {@link FileState} for the allocator from its stored map, and gives every state a listener that appends
     * the journal record and keeps the mirror here (for a file the actors have not opened in this run).
     */
    static final class Catalog implements FileCatalog {
        private final Journal journal;
        private final Map<String, Long> ids = new ConcurrentHashMap<>();
        private final Map<Long, ExtentMap> mirrors = new ConcurrentHashMap<>();
        private final Map<Long, Integer> kinds = new ConcurrentHashMap<>();
        /** Per entry, the number of the last journal record appended for it: what a call on it waits for. */
        private final Map<Long, Long> lastRecord = new ConcurrentHashMap<>();
        private final AtomicLong nextId;
        /**
         * File-table slots: the table's size, the runs one holds, and the slots every entry's runs need now
         * (guarded by {@code slotLock}). A new entry is admitted while the need stays below the table less a
         * reserve, which is left for entries that grow; an entry grows while the need stays within the table,
         * and no entry grows past {@code maxRuns} runs (a change to a bigger one might not fit a transaction):
         * the commit that lays out more than the table holds, or a transaction bigger than the log, cannot be
         * written, and the journal fails, so the refusal has to come before the record.
         *
         * <p>Counts go up before the record that needs the slots is appended, and down only after the record
         * that frees them: at every point of the journal's order the entries fit the table, so every commit,
         * which holds a prefix of that order, can be laid out.
         */
        private final int tableSlots, runsPerSlot, growthReserve, maxRuns, maxSlots;
        private final Object slotLock = new Object();
        private long slotsNeeded;

        Catalog(Metadata meta, Journal journal) {
            this.journal = journal;
            this.tableSlots = meta.layout.fileTableBlocks();
            this.runsPerSlot = meta.layout.extentsPerTableBlock();
            this.growthReserve = meta.layout.fileTableGrowthReserve();
            this.maxRuns = meta.layout.maxEntryExtents();
            this.maxSlots = meta.layout.maxEntryTableBlocks();
            for (Metadata.Entry e : meta.entries()) {
                ExtentMap copy = new ExtentMap();
                for (ExtentMap.Run r : e.map.runs()) copy.put(r.logical(), r.physical(), r.blocks(), r.unwritten());
                ids.put(key(e.kind, e.name), e.id);
                mirrors.put(e.id, copy);
                kinds.put(e.id, e.kind);
                copy.slotsCounted = slotsFor(copy.size());
                slotsNeeded += copy.slotsCounted;
            }
            nextId = new AtomicLong(meta.maxEntryId() + 1);
        }

        /** The table blocks an entry of {@code runs} runs takes. */
        int slotsFor(int runs) {
            return Math.max(1, (runs + runsPerSlot - 1) / runsPerSlot);
        }

        /**
         * Counts what {@code m}'s runs need now, after the record that changed them was appended (a growth was
         * counted by {@link #grow} before it); the caller holds the lock that guards {@code m}.
         */
        void counted(ExtentMap m) {
            counted(m, m.size());
        }

        /** As {@link #counted(ExtentMap)}, for an entry that will hold {@code runs} runs once its records are in. */
        private void counted(ExtentMap m, int runs) {
            int need = slotsFor(Math.max(runs, m.size()));
            if (need == m.slotsCounted) return;
            synchronized (slotLock) {
                slotsNeeded += need - m.slotsCounted;
            }
            m.slotsCounted = need;
        }

        /** The most runs one entry may hold on this volume ({@link Layout#maxEntryExtents()}). */
        int maxRuns() {
            return maxRuns;
        }

        /**
         * Counts, before the record that makes them, the slots entry {@code name} (which holds {@code holds} runs)
         * needs with {@code runs}; answers the refusal instead (nothing counted) when that is more runs than one
         * entry may hold or more slots than the table has left. The caller holds the lock that guards {@code m}.
         */
        AllocationException.NoSpace grow(ExtentMap m, int holds, int runs, int kind, String name) {
            if (runs > maxRuns) return tooManyRuns(kind, name, holds, runs);
            int need = slotsFor(runs);
            if (need <= m.slotsCounted) return null;
            synchronized (slotLock) {
                if (slotsNeeded + need - m.slotsCounted > tableSlots)
                    return new AllocationException.NoSpace("the file table is full: " + what(kind, name) + " would need "
                            + need + " of its blocks for " + runs + " extents; of its " + tableSlots + " blocks the "
                            + "entries there need " + slotsNeeded + " (make the volume with more --file-table-blocks)");
                slotsNeeded += need - m.slotsCounted;
            }
            m.slotsCounted = need;
            return null;
        }

        AllocationException.NoSpace tooManyRuns(int kind, String name, int runs, int wouldHold) {
            return new AllocationException.NoSpace(what(kind, name) + " holds " + runs + " extents and would hold "
                    + wouldHold + "; one file-table entry of this volume holds at most " + maxRuns + " (" + maxSlots
                    + " table blocks of " + runsPerSlot + ", so that any change to it fits one journal transaction)"
                    + ": refused, nothing changed");
        }

        private static String what(int kind, String name) {
            return (kind == Metadata.KIND_FILE ? "file '" : "extent owner '") + name + "'";
        }

        /**
         * Refuses with NoSpace a new entry the table has no room for, {@code slots} slots; with {@code take},
         * counts them.
         */
        private void admit(int kind, String name, int slots, boolean take) {
            synchronized (slotLock) {
                if (slotsNeeded + slots > tableSlots - growthReserve) throw full(kind, name, slots);
                if (take) slotsNeeded += slots;
            }
        }

        /** Refuses with NoSpace, before anything is allocated for it, an entry that is new and would not be admitted. */
        void checkAdmits(int kind, String name) {
            if (!ids.containsKey(key(kind, name))) admit(kind, name, 1, false);
        }

        private AllocationException.NoSpace full(int kind, String name, int slots) {
            return new AllocationException.NoSpace("the file table is full: " + what(kind, name) + " would need "
                    + (slots == 1 ? "a block" : slots + " blocks") + " of it; of its " + tableSlots + " blocks the "
                    + "entries there need " + slotsNeeded + " and " + growthReserve + " are kept for their growth "
                    + "(make the volume with more --file-table-blocks)");
        }

        private static String key(int kind, String name) {
            return (kind == Metadata.KIND_FILE ? "f:" : "o:") + name;
        }

        /** The entry id of {@code name}, created (and journalled) when it is new. */
        long idOf(int kind, String name) {
            return idOf(kind, name, 1);
        }

        /** As {@link #idOf(int, String)}; a new entry is admitted and counted with {@code slots} slots. */
        long idOf(int kind, String name, int slots) {
            return ids.computeIfAbsent(key(kind, name), k -> {
                admit(kind, name, slots, true);
                long id = nextId.getAndIncrement();
                ExtentMap fresh = new ExtentMap();
                fresh.slotsCounted = slots;
                mirrors.put(id, fresh);
                kinds.put(id, kind);
                appended(id, journal.append(new JournalRecord.Create(id, kind, name)));
                return id;
            });
        }

        Long existing(int kind, String name) {
            return ids.get(key(kind, name));
        }

        void appended(long id, long record) {
            lastRecord.merge(id, record, Math::max);
        }

        /**
         * The last record appended for entry {@code name}: once it is durable, so is every change made for it
         * before, and their causes (records are appended causes first, and commits take prefixes).
         */
        long lastRecord(int kind, String name) {
            Long id = existing(kind, name);
            Long record = id == null ? null : lastRecord.get(id);
            return record == null ? 0 : record;
        }

        ExtentMap mirror(long id) {
            return mirrors.get(id);
        }

        List<String> names(int kind) {
            String prefix = kind == Metadata.KIND_FILE ? "f:" : "o:";
            return ids.keySet().stream().filter(k -> k.startsWith(prefix)).map(k -> k.substring(2)).sorted().toList();
        }

        @Override
        public boolean stored(String name) {
            return existing(Metadata.KIND_FILE, name) != null;
        }

        /** Forgets the file and journals its deletion; then its table slots count no more. */
        @Override
        public void deleted(FileState file) {
            ExtentMap m = mirrors.remove(file.id);
            ids.remove(key(Metadata.KIND_FILE, file.name), file.id);
            kinds.remove(file.id);
            lastRecord.remove(file.id);
            journal.append(new JournalRecord.Delete(file.id));
            synchronized (slotLock) {
                slotsNeeded -= m.slotsCounted;
            }
        }

        @Override
        public FileState create(long suggestedId, String name, int homeGroup, int initialWindowBlocks) {
            long id = idOf(Metadata.KIND_FILE, name);
            FileState fs = new FileState(id, name, homeGroup, initialWindowBlocks);
            ExtentMap m = mirrors.get(id);
            synchronized (m) {
                for (ExtentMap.Run r : m.runs()) {
                    fs.map(r.logical(), r.physical(), (int) r.blocks());
                    if (!r.unwritten()) fs.markWritten(r.logical(), r.blocks());
                }
            }
            // A change that would give the file more runs is counted before it is made (refused when it cannot be);
            // one that leaves it fewer gives its slots back once its record is appended.
            fs.bound((file, call, runs) -> {
                synchronized (m) {
                    return grow(m, file.extentCount(), Math.max(runs, m.size()), Metadata.KIND_FILE, file.name);
                }
            });
            fs.listen((file, change, logical, physical, blocks) -> {
                synchronized (m) {
                    m.apply(change, logical, physical, blocks);
                }
                appended(file.id, journal.append(new JournalRecord.File(file.id, change, logical, physical, blocks)));
                synchronized (m) {
                    counted(m, file.extentCount());
                }
            });
            return fs;
        }
    }

    /**
     * A read-only look at a closed image: superblock, metadata with the journal applied in memory. Runs beside
     * other looks; refused ({@link VolumeException.InUse}) while a volume or a repair holds the image.
     */
    public static Metadata inspect(Path image) {
        try (ImageLock held = ImageLock.shared(image)) {
            FileChannel ch = held.channel();
            Superblock sb = readSuperblock(ch, image);
            int bs = sb.layout().blockSize();
            Metadata.BlockReader disk = b -> {
                try {
                    return read(ch, b * bs, bs);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            };
            Map<Long, byte[]> overlay = new HashMap<>(Journal.scan(sb.layout(), sb.uuidBytes(), disk).blocks());
            return Metadata.load(sb, b -> overlay.containsKey(b) ? overlay.get(b) : disk.read(b), null);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + image + ": " + e.getMessage(), e);
        }
    }

    /**
     * The committed transactions the journal of {@code image} holds from its tail, in order, as recovery would
     * find them (a read-only look, under the shared lock): for crash tests that damage one on purpose.
     */
    public static List<Journal.LoggedTransaction> journalTransactions(Path image) {
        try (ImageLock held = ImageLock.shared(image)) {
            FileChannel ch = held.channel();
            Superblock sb = readSuperblock(ch, image);
            int bs = sb.layout().blockSize();
            return Journal.scan(sb.layout(), sb.uuidBytes(), b -> {
                try {
                    return read(ch, b * bs, bs);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }).taken();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + image + ": " + e.getMessage(), e);
        }
    }
}
