package org.blockyard.runtime.volume;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;

/**
 * Multi-mount protection, as ext4's MMP: for a volume on storage that several hosts reach (a shared image, a
 * LUN, an NBD export), where no host's lock sees the others. The MMP block (docs/volume-format.md) holds a
 * sequence number, the time and the holder's name; a holder rewrites it with the next number every
 * {@code interval}, and {@link #CLEAN} when it lets go.
 *
 * <p><b>Taking it</b> (ext4's {@code ext4_multi_mount_protect}): read the block; if it is not clean, wait
 * {@link #waitMillis} and read again: a number that moved means a live holder, and the open is refused with
 * {@link VolumeException.InUse} naming it; one that stood still was left by a holder that died. Then write a
 * random number of our own, wait again, and read: another number means another opener wrote after us, and it
 * has the volume. Two openers that both found the block clean both write; the one that wrote last wins, the
 * other sees its number and gives up. So every open of such a volume waits at least once (ext4 waits the same).
 *
 * <p><b>Holding it</b>: a daemon thread rewrites the block every interval, first checking that it still holds
 * the number written last; if not, another host took the volume (it judged this one dead: a stall longer than
 * the wait), and {@code onLoss} is told once, so that the volume writes nothing more (ext4 goes read-only).
 *
 * <p>The block is read and written through the hold's {@code O_DIRECT} descriptor ({@link ImageLock#direct()})
 * where the file system allows it, so that a read sees what another host wrote rather than this host's page
 * cache.
 */
final class Mmp implements AutoCloseable {
    static final int MAGIC = 0x504D5942; // "BYMP"
    /** The sequence number of a block no one holds. */
    static final long CLEAN = 0;
    /** Numbers a holder takes stay below this (and above {@link #CLEAN}); the next after it wraps to 1. */
    static final long MAX_SEQ = 1L << 62;
    static final int HOLDER_BYTES = 128;

    /** What the MMP block says. */
    record Record(long seq, long millis, int intervalMillis, String holder) {
        boolean clean() {
            return seq == CLEAN;
        }

        String describe() {
            return "'" + holder + "' (sequence " + seq + ", last written " + Instant.ofEpochMilli(millis) + ")";
        }
    }

    private final FileChannel channel;
    private final Path image;
    private final long block;
    private final int blockSize;
    private final byte[] seed;
    private final int interval;
    private final String holder;
    private final ByteBuffer buffer;
    private long seq;
    private Thread updater;
    /** Wakes the updater to stop. Never an interrupt: one during its I/O would close the channel (and drop locks). */
    private final Object wake = new Object();
    private volatile boolean stopping;
    private volatile String lost;
    /** Who took the block, as {@link Record#describe()}; set with {@link #lost}. */
    private volatile String lostTo;
    /** Told once when another host takes the block: nobody while the open still watches it. */
    private volatile Consumer<String> listener = why -> {};

    private Mmp(ImageLock hold, Superblock sb, String holder) {
        FileChannel direct = hold.direct();
        this.channel = direct != null ? direct : hold.channel(); // a tmpfs: this host's page cache is all there is
        Path image = hold.image();
        this.image = image;
        this.block = sb.layout().mmpBlock();
        this.blockSize = sb.layout().blockSize();
        this.seed = sb.uuidBytes();
        this.interval = sb.mmpIntervalMillis();
        this.holder = holder;
        this.buffer = ByteBuffer.allocateDirect(blockSize * 2).alignedSlice(blockSize);
        this.buffer.limit(blockSize);
    }

    /** How long an opener watches the block: twice the interval and a second (ext4's {@code 2 * interval + 1}). */
    static long waitMillis(int intervalMillis) {
        return 2L * intervalMillis + 1000;
    }

    /** This process's name in the block: host, process id and what is held. */
    static String holderName(String what) {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            host = "unknown-host";
        }
        String name = host + " pid " + ProcessHandle.current().pid() + " " + what;
        byte[] b = name.getBytes(StandardCharsets.UTF_8);
        return b.length <= HOLDER_BYTES ? name : new String(b, 0, HOLDER_BYTES, StandardCharsets.UTF_8).trim();
    }

    // ---- the block's format -------------------------------------------------------------------------

    static byte[] encode(Record r, byte[] seed, long block, int blockSize) {
        byte[] b = new byte[blockSize];
        ByteBuffer o = Layout.le(b);
        byte[] name = r.holder().getBytes(StandardCharsets.UTF_8);
        int n = Math.min(name.length, HOLDER_BYTES);
        o.putInt(0, MAGIC).putLong(8, r.seq()).putLong(16, r.millis()).putInt(24, r.intervalMillis())
                .putShort(28, (short) n);
        System.arraycopy(name, 0, b, 32, n);
        o.putInt(4, Layout.crc(seed, block, b, 8, blockSize - 8));
        return b;
    }

    /** The record in {@code b}; {@link VolumeException.Corrupt} when its magic or checksum is wrong. */
    static Record decode(byte[] b, byte[] seed, long block) {
        ByteBuffer o = Layout.le(b);
        if (o.getInt(0) != MAGIC)
            throw new VolumeException.Corrupt(VolumeException.Structure.MMP, block, "no MMP magic");
        if (o.getInt(4) != Layout.crc(seed, block, b, 8, b.length - 8))
            throw new VolumeException.Corrupt(VolumeException.Structure.MMP, block, "checksum mismatch");
        int n = Math.min(o.getShort(28) & 0xffff, HOLDER_BYTES);
        return new Record(o.getLong(8), o.getLong(16), o.getInt(24), new String(b, 32, n, StandardCharsets.UTF_8));
    }

    /** The clean block mkfs writes. */
    static byte[] clean(Superblock sb) {
        return encode(new Record(CLEAN, System.currentTimeMillis(), sb.mmpIntervalMillis(), ""), sb.uuidBytes(),
                sb.layout().mmpBlock(), sb.layout().blockSize());
    }

    // ---- taking, holding, letting go ------------------------------------------------------------------

    /**
     * Takes the MMP block of {@code image} for {@code holder} ({@link #holderName}) and starts updating it;
     * {@code onLoss} hears, once, that another host took it. Waits as the class comment says.
     *
     * @throws VolumeException.InUse   when another host holds the volume, or took it while this one waited
     * @throws VolumeException.Corrupt when the block fails its checks (nothing written)
     */
    static Mmp take(ImageLock hold, Superblock sb, String holder, Consumer<String> onLoss) {
        Mmp m = new Mmp(hold, sb, holder);
        m.acquire();
        m.listener = onLoss;
        if (m.lost != null) { // lost between the watch's end and now
            m.stopUpdater();
            throw new VolumeException.InUse(m.lost);
        }
        return m;
    }

    /**
     * Refuses, with {@link VolumeException.InUse}, a look at {@code image} (a read-only fsck) while another
     * host holds it: a block that is not clean and whose number moves within the wait. Writes nothing.
     */
    static void checkIdle(ImageLock hold, Superblock sb) {
        Mmp m = new Mmp(hold, sb, "");
        Record r = m.read();
        if (!r.clean()) m.watch(r);
    }

    /**
     * Watches a block that is not clean for one wait; refuses with {@link VolumeException.InUse} when its number
     * moved (a live holder). Answers when the second read began, for the freshness of what it saw.
     */
    private long watch(Record r) {
        sleep(waitMillis(Math.max(interval, r.intervalMillis())));
        long readAt = System.nanoTime();
        Record again = read();
        if (again.seq() != r.seq()) throw inUse(again, r);
        return readAt;
    }

    private void acquire() {
        for (int tries = 0; ; tries++) {
            long readAt = System.nanoTime();
            Record r = read();
            long wait = waitMillis(Math.max(interval, r.intervalMillis()));
            // A number that stood still through the watch was left by a holder that died (a crash, a power cut).
            if (!r.clean()) readAt = watch(r);
            // What was read is acted on only while it is fresh: an opener stalled between its read and its write
            // (a pause longer than the others' watch) would write over a holder that took the volume meanwhile.
            if (System.nanoTime() - readAt > interval * 500_000L) {
                if (tries < 20) continue;
                throw new VolumeException.InUse(image + ": could not read and write its multi-mount protection "
                        + "block within half its interval (" + interval + " ms) in 20 tries; the host is too slow"
                        + " for the interval mkfs set");
            }
            // From its first write on, this opener updates the block as a holder does, so that one watching it
            // (an opener that found it not clean) sees it move; an update that finds another's number ends it.
            seq = ThreadLocalRandom.current().nextLong(1, MAX_SEQ);
            write(seq);
            start();
            sleep(wait);
            if (lost != null) {
                stopUpdater();
                throw new VolumeException.InUse(lostTo == null ? lost : image + " was opened by " + lostTo
                        + " while this open waited (multi-mount protection): it has the volume");
            }
            return;
        }
    }

    private VolumeException.InUse inUse(Record now, Record before) {
        return new VolumeException.InUse(image + " is in use by " + now.describe() + ": its multi-mount protection"
                + " block moved from sequence " + before.seq() + " within " + waitMillis(Math.max(interval,
                before.intervalMillis())) + " ms; close it there first");
    }

    private void start() {
        updater = new Thread(this::run, "blockyard-mmp");
        updater.setDaemon(true);
        updater.start();
    }

    private void run() {
        while (!stopping) {
            long until = System.nanoTime() + interval * 1_000_000L;
            synchronized (wake) {
                for (long left; !stopping && (left = until - System.nanoTime()) > 0; ) {
                    try {
                        wake.wait(Math.max(1, left / 1_000_000), 0);
                    } catch (InterruptedException e) {
                        return; // only a JVM going down interrupts it
                    }
                }
            }
            if (stopping) return;
            String why;
            try {
                synchronized (this) {
                    if (stopping) return;
                    Record r = read();
                    if (r.seq() == seq) {
                        seq = seq + 1 >= MAX_SEQ ? 1 : seq + 1;
                        write(seq);
                        continue;
                    }
                    lostTo = r.describe();
                    why = image + " was taken by " + r.describe() + " (multi-mount protection): this holder wrote "
                            + "sequence " + seq + " last; the volume writes nothing more";
                }
            } catch (RuntimeException e) {
                why = image + ": the multi-mount protection block could not be updated (" + e.getMessage()
                        + "); the volume writes nothing more, as another host may take it";
            }
            synchronized (wake) {
                lost = why;
                if (stopping) return;
            }
            listener.accept(why);
            return;
        }
    }

    /** Stops updating and writes the block clean: the last write of a volume's close. */
    void release() {
        stopUpdater();
        if (lost != null) return;
        Record r = read();
        if (r.seq() == seq) write(CLEAN); // else another host has it now: its block, not ours
    }

    /** Stops updating and writes nothing, as a crash would leave it. */
    @Override
    public void close() {
        stopUpdater();
    }

    private void stopUpdater() {
        synchronized (wake) {
            stopping = true;
            wake.notifyAll();
        }
        Thread t = updater;
        if (t == null) return;
        try {
            t.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private synchronized Record read() {
        try {
            buffer.clear().limit(blockSize);
            long at = block * blockSize;
            while (buffer.hasRemaining()) {
                int n = channel.read(buffer, at + buffer.position());
                if (n < 0) throw new IOException("the image ends before its multi-mount protection block " + block);
            }
            byte[] b = new byte[blockSize];
            buffer.flip().get(b);
            return decode(b, seed, block);
        } catch (IOException e) {
            throw new UncheckedIOException("read the multi-mount protection block of " + image + ": " + e.getMessage(), e);
        }
    }

    private synchronized void write(long number) {
        byte[] b = encode(new Record(number, System.currentTimeMillis(), interval, number == CLEAN ? "" : holder),
                seed, block, blockSize);
        try {
            buffer.clear();
            buffer.put(b).flip();
            long at = block * blockSize;
            while (buffer.hasRemaining()) channel.write(buffer, at + buffer.position());
            channel.force(false);
        } catch (IOException e) {
            throw new UncheckedIOException("write the multi-mount protection block of " + image + ": " + e.getMessage(), e);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new VolumeException.InUse("interrupted while watching the multi-mount protection block");
        }
    }
}
