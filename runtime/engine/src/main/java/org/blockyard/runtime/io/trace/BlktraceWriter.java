package org.blockyard.runtime.io.trace;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Writes block-layer events in the binary format of Linux blktrace, so that the standard
 * {@code blkparse} and {@code btt} read a simulated run as they read a real one.
 *
 * <p>Format ({@code struct blk_io_trace}, blktrace 1.2 / kernel trace version 7): a 48-byte
 * record in the writer's byte order, here little-endian as blktrace writes on x86 (blkparse
 * detects the order from the magic):
 * <pre>
 *  off size field
 *    0  u32 magic     0x65617400 | version 0x07
 *    4  u32 sequence  per CPU, 1, 2, 3, ... (blkparse counts gaps as "skips")
 *    8  u64 time      nanoseconds
 *   16  u64 sector    512-byte units
 *   24  u32 bytes
 *   28  u32 action    __BLK_TA_* | BLK_TC_* category bits << 16
 *   32  u32 pid
 *   36  u32 device    kernel dev_t: major << 20 | minor
 *   40  u32 cpu
 *   44  u16 error
 *   46  u16 pdu_len   bytes of payload after the record
 * </pre>
 * The six traced actions carry no payload. The first event of each pid is preceded by a
 * {@code BLK_TN_PROCESS} notify record (sequence 0, payload: the 16-byte command name), as the
 * kernel emits, so that blkparse prints {@code [name]} instead of {@code [(null)]}.
 *
 * <p>Reading the file: blkparse in file mode looks for {@code NAME.blktrace.0},
 * {@code NAME.blktrace.1}, ... (starting at CPU 0, stopping at the first missing number), and
 * every record in {@code NAME.blktrace.N} must carry cpu N. So either write all events with
 * cpu 0 to {@link #perCpuName(Path, String, int) perCpuName(dir, "sim", 0)} and run
 * {@code blkparse -i dir/sim}, or keep one writer per CPU, or feed any file, with any mix of
 * CPUs, through a pipe: {@code blkparse -i - < FILE}. For btt, let blkparse merge the CPUs into
 * one binary file first: {@code blkparse -i dir/sim -d sim.bin -O; btt -i sim.bin}.
 *
 * <p>Invariants: times never go backwards within one file (blkparse subtracts the first time
 * from every later one); identical calls produce byte-identical files. Not thread-safe: the
 * owner (the queue actor) is the only caller.
 */
public final class BlktraceWriter implements Closeable {

    /** The request writes data; its absence means a read. */
    public static final int RW_WRITE = 1;
    /** Synchronous request ({@code BLK_TC_SYNC}, blkparse letter S). */
    public static final int RW_SYNC = 1 << 1;
    /** File-system metadata ({@code BLK_TC_META}, letter M). */
    public static final int RW_META = 1 << 2;
    /** Read-ahead ({@code BLK_TC_AHEAD}, letter A). */
    public static final int RW_AHEAD = 1 << 3;
    /** Cache flush before the request ({@code BLK_TC_FLUSH}, leading letter F). */
    public static final int RW_FLUSH = 1 << 4;
    /** Forced unit access ({@code BLK_TC_FUA}, the F after the op letter). */
    public static final int RW_FUA = 1 << 5;

    private static final int RW_ALL = RW_WRITE | RW_SYNC | RW_META | RW_AHEAD | RW_FLUSH | RW_FUA;

    static final int MAGIC = 0x65617400;
    static final int VERSION = 0x07;
    static final int RECORD_BYTES = 48;
    /** TASK_COMM_LEN: the payload of a process notify. */
    static final int COMM_BYTES = 16;

    static final int TC_SHIFT = 16;
    static final int TC_READ = 1;
    static final int TC_WRITE = 1 << 1;
    static final int TC_FLUSH = 1 << 2;
    static final int TC_SYNC = 1 << 3;
    static final int TC_FS = 1 << 8;
    static final int TC_NOTIFY = 1 << 10;
    static final int TC_AHEAD = 1 << 11;
    static final int TC_META = 1 << 12;
    static final int TC_FUA = 1 << 15;
    /** {@code BLK_TN_PROCESS}: __BLK_TN_PROCESS (0) in the notify category. */
    static final int TN_PROCESS = TC_NOTIFY << TC_SHIFT;

    /** dev_t as blktrace records it: 12 bits of major, 20 bits of minor (MINORBITS). */
    static final int MINOR_BITS = 20;
    static final int MAX_MAJOR = (1 << (32 - MINOR_BITS)) - 1;
    static final int MAX_MINOR = (1 << MINOR_BITS) - 1;
    /** CPU numbers above this are refused: blkparse allocates per-CPU state up to the highest. */
    public static final int MAX_CPU = 4095;

    private static final String DEFAULT_PROCESS_NAME = "blockyard";
    private static final int BUFFER_BYTES = 64 * 1024;

    private final Path file;
    private final int device;
    private final FileChannel channel;
    private final ByteBuffer buffer = ByteBuffer.allocate(BUFFER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    private final Map<Integer, Integer> sequenceByCpu = new HashMap<>();
    private final Map<Integer, String> processNames = new HashMap<>();
    private final Set<Integer> announcedPids = new HashSet<>();
    private final EnumMap<BlktraceAction, Long> counts = new EnumMap<>(BlktraceAction.class);
    private long lastTimeNanos;
    private boolean closed;

    /**
     * Creates (or truncates) {@code file}.
     *
     * @param deviceMajor 0..4095, e.g. 8 for sd*
     * @param deviceMinor 0..1048575
     */
    public BlktraceWriter(Path file, int deviceMajor, int deviceMinor) throws IOException {
        if (file == null) throw new IllegalArgumentException("trace file is null");
        if (deviceMajor < 0 || deviceMajor > MAX_MAJOR)
            throw new IllegalArgumentException("device major " + deviceMajor + " outside 0.." + MAX_MAJOR);
        if (deviceMinor < 0 || deviceMinor > MAX_MINOR)
            throw new IllegalArgumentException("device minor " + deviceMinor + " outside 0.." + MAX_MINOR);
        this.file = file;
        this.device = (deviceMajor << MINOR_BITS) | deviceMinor;
        this.channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING);
        for (BlktraceAction a : BlktraceAction.values()) counts.put(a, 0L);
    }

    /**
     * The name blkparse expects for the trace of {@code device} on {@code cpu}:
     * {@code dir/device.blktrace.cpu}. Run {@code blkparse -i dir/device} on it.
     */
    public static Path perCpuName(Path dir, String device, int cpu) {
        if (dir == null) throw new IllegalArgumentException("directory is null");
        if (device == null || device.isEmpty() || device.contains("/") || device.contains(".blktrace."))
            throw new IllegalArgumentException("device name must be a non-empty file name, got '" + device + "'");
        if (cpu < 0 || cpu > MAX_CPU) throw new IllegalArgumentException("cpu " + cpu + " outside 0.." + MAX_CPU);
        return dir.resolve(device + ".blktrace." + cpu);
    }

    /**
     * Names the process {@code pid} (blkparse prints it in brackets); at most 15 bytes are kept.
     * Must come before the first event of that pid, whose notify record carries the name.
     */
    public void processName(int pid, String name) {
        ensureOpen();
        if (pid < 0) throw new IllegalArgumentException("pid " + pid + " is negative");
        if (name == null || name.isEmpty()) throw new IllegalArgumentException("process name is empty");
        if (announcedPids.contains(pid))
            throw new IllegalStateException("pid " + pid + " already has events; name it before its first event");
        processNames.put(pid, name);
    }

    /**
     * Appends one event.
     *
     * @param timeNanos not before the previous event's time
     * @param sector first sector (512-byte units)
     * @param bytes length of the bio or request
     * @param rwbs OR of the {@code RW_*} bits
     * @param cpu 0..{@link #MAX_CPU}; see the class comment for how blkparse wants CPUs in files
     */
    public void event(long timeNanos, BlktraceAction action, long sector, int bytes, int rwbs, int pid, int cpu) {
        ensureOpen();
        if (action == null) throw new IllegalArgumentException("action is null");
        if (timeNanos < 0) throw new IllegalArgumentException("time " + timeNanos + " ns is negative");
        if (timeNanos < lastTimeNanos)
            throw new IllegalArgumentException("time " + timeNanos + " ns is before the previous event at "
                    + lastTimeNanos + " ns; blkparse needs time order within a file");
        if (sector < 0) throw new IllegalArgumentException("sector " + sector + " is negative");
        if (bytes < 0) throw new IllegalArgumentException("bytes " + bytes + " is negative");
        if ((rwbs & ~RW_ALL) != 0) throw new IllegalArgumentException("unknown rwbs bits 0x" + Integer.toHexString(rwbs & ~RW_ALL));
        if (pid < 0) throw new IllegalArgumentException("pid " + pid + " is negative");
        if (cpu < 0 || cpu > MAX_CPU) throw new IllegalArgumentException("cpu " + cpu + " outside 0.." + MAX_CPU);

        if (announcedPids.add(pid)) writeProcessNotify(timeNanos, pid, cpu);
        int sequence = sequenceByCpu.merge(cpu, 1, Integer::sum);
        record(sequence, timeNanos, sector, bytes, actionWord(action, rwbs), pid, cpu, 0);
        lastTimeNanos = timeNanos;
        counts.merge(action, 1L, Long::sum);
    }

    /** Events of {@code a} written so far. */
    public long events(BlktraceAction a) {
        return counts.get(a);
    }

    /** The file this writer fills. */
    public Path file() {
        return file;
    }

    /** Writes buffered records to the file (not forced to disk). */
    public void flush() {
        ensureOpen();
        try {
            drain();
        } catch (IOException e) {
            throw new UncheckedIOException("writing " + file, e);
        }
    }

    @Override
    public void close() throws IOException {
        if (closed) return;
        closed = true;
        try (channel) {
            drain();
        }
    }

    /** The 32-bit action word: action code, its category, the data direction and the flags. */
    static int actionWord(BlktraceAction action, int rwbs) {
        int tc = action.categoryBit();
        tc |= (rwbs & RW_WRITE) != 0 ? TC_WRITE : TC_READ;
        if ((rwbs & RW_SYNC) != 0) tc |= TC_SYNC;
        if ((rwbs & RW_META) != 0) tc |= TC_META;
        if ((rwbs & RW_AHEAD) != 0) tc |= TC_AHEAD;
        if ((rwbs & RW_FLUSH) != 0) tc |= TC_FLUSH;
        if ((rwbs & RW_FUA) != 0) tc |= TC_FUA;
        if (action.requestEvent()) tc |= TC_FS;
        return action.code() | (tc << TC_SHIFT);
    }

    private void writeProcessNotify(long timeNanos, int pid, int cpu) {
        byte[] comm = new byte[COMM_BYTES];
        byte[] name = processNames.getOrDefault(pid, DEFAULT_PROCESS_NAME).getBytes(StandardCharsets.UTF_8);
        System.arraycopy(name, 0, comm, 0, Math.min(name.length, COMM_BYTES - 1));
        record(0, timeNanos, 0, 0, TN_PROCESS, pid, cpu, COMM_BYTES);
        buffer.put(comm);
    }

    private void record(int sequence, long timeNanos, long sector, int bytes, int action, int pid, int cpu, int pduBytes) {
        if (buffer.remaining() < RECORD_BYTES + pduBytes) {
            try {
                drain();
            } catch (IOException e) {
                throw new UncheckedIOException("writing " + file, e);
            }
        }
        buffer.putInt(MAGIC | VERSION)
                .putInt(sequence)
                .putLong(timeNanos)
                .putLong(sector)
                .putInt(bytes)
                .putInt(action)
                .putInt(pid)
                .putInt(device)
                .putInt(cpu)
                .putShort((short) 0)
                .putShort((short) pduBytes);
    }

    private void drain() throws IOException {
        buffer.flip();
        while (buffer.hasRemaining()) channel.write(buffer);
        buffer.clear();
    }

    private void ensureOpen() {
        if (closed) throw new IllegalStateException("trace writer for " + file + " is closed");
    }
}
