package org.blockyard.nbd;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.BlockAllocator;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.runtime.store.FileStore;

/**
 * One export: a file of the pool's {@link FileStore}, {@code sizeBytes} long, a whole number of blocks. Thin:
 * a block is allocated by its first write ({@code getBlocks} with create, so a sequential writer's blocks come
 * from its reservation window), a block never written reads as zeros and is reported a hole.
 *
 * <p>Every call blocks its thread until the store answered (at most {@link #TIMEOUT_SECONDS}), and fails with
 * an {@link NbdError} carrying the NBD error. Byte ranges are checked against the size by the caller.
 *
 * <ul>
 *   <li>A write of part of a block reads the block, changes the bytes and writes it whole (the store takes
 *       whole blocks only); two such writes to one block at once are serialised by a stripe lock.</li>
 *   <li>An overwrite never allocates, so it never fails for space; a write to a hole of a full pool fails at
 *       once with ENOSPC, and changes nothing.</li>
 *   <li>TRIM and WRITE_ZEROES without NO_HOLE free the whole blocks of a range, anywhere in the export (a hole
 *       punched in the file, through the journal): they read as zeros and are reported holes. WRITE_ZEROES
 *       writes zeros over the mapped part of a partial block at either edge; TRIM leaves partial blocks alone.</li>
 *   <li>FLUSH is the store's flush (the device's fdatasync) and covers every export of the pool: a write
 *       that allocated was durable when answered, data and journal; an overwrite is durable after it.</li>
 * </ul>
 */
public final class ThinExport {
    /** The longest one store call may take before the request fails with EIO. */
    static final long TIMEOUT_SECONDS = 120;
    /** Lookups one BLOCK_STATUS may make: a hole answers one block a lookup, so this bounds a reply's cost. */
    static final int STATUS_LOOKUPS = 8192;
    private static final int STRIPES = 64;
    private static final int ZERO_CHUNK_BYTES = 1 << 20;

    private final String name;
    private final String file;
    private final long sizeBytes;
    private final FileStore store;
    private final BlockAllocator files;
    private final int blockBytes;
    private final ReentrantLock[] stripes = new ReentrantLock[STRIPES];

    ThinExport(String name, String file, long sizeBytes, FileStore store, BlockAllocator files) {
        this.name = name;
        this.file = file;
        this.sizeBytes = sizeBytes;
        this.store = store;
        this.files = files;
        this.blockBytes = files.geometry().blockSizeBytes();
        for (int i = 0; i < STRIPES; i++) stripes[i] = new ReentrantLock();
    }

    public String name() {
        return name;
    }

    /** The volume file that holds the export's blocks. */
    public String file() {
        return file;
    }

    public long sizeBytes() {
        return sizeBytes;
    }

    public int blockBytes() {
        return blockBytes;
    }

    /** {@code length} bytes at {@code offset}. */
    public byte[] read(long offset, int length) {
        long from = alignDown(offset), to = alignUp(offset + length);
        ByteBuffer b = await(store.read(file, from, Math.toIntExact(to - from)));
        byte[] out = new byte[length];
        System.arraycopy(b.array(), (int) (offset - from), out, 0, length);
        return out;
    }

    /** Writes {@code data} at {@code offset}; with {@code fua}, durable before it returns. */
    public void write(long offset, byte[] data, boolean fua) {
        writeBytes(offset, data, 0, data.length);
        if (fua) flush();
    }

    private void writeBytes(long offset, byte[] data, int at, int length) {
        long from = alignDown(offset), to = alignUp(offset + length);
        if (from == offset && to == offset + length) {
            await(store.write(file, offset, ByteBuffer.wrap(data, at, length)));
            return;
        }
        long head = from / blockBytes, tail = (to / blockBytes) - 1;
        int ia = stripe(head), ib = stripe(tail);
        ReentrantLock a = stripes[Math.min(ia, ib)], b = stripes[Math.max(ia, ib)]; // one order: no deadlock
        a.lock();
        b.lock();
        try {
            byte[] whole = new byte[Math.toIntExact(to - from)];
            if (from != offset) System.arraycopy(read(from, blockBytes), 0, whole, 0, blockBytes);
            if (to != offset + length && (tail != head || from == offset))
                System.arraycopy(read(to - blockBytes, blockBytes), 0, whole, whole.length - blockBytes, blockBytes);
            System.arraycopy(data, at, whole, (int) (offset - from), length);
            await(store.write(file, from, ByteBuffer.wrap(whole)));
        } finally {
            b.unlock();
            a.unlock();
        }
    }

    private static int stripe(long block) {
        return (int) Math.floorMod(block * 0x9E3779B97F4A7C15L >>> 32, (long) STRIPES);
    }

    /** Frees the whole blocks of the range; answers the blocks freed. */
    public long trim(long offset, long length, boolean fua) {
        long first = alignUp(offset), last = alignDown(offset + length);
        long freed = first < last ? await(store.punchHole(file, first, last - first)) : 0;
        if (fua) flush();
        return freed;
    }

    /** Makes the range read as zeros; with {@code noHole} every block of it is allocated. */
    public void writeZeroes(long offset, long length, boolean noHole, boolean fua) {
        long end = offset + length;
        if (noHole) {
            byte[] zeros = new byte[ZERO_CHUNK_BYTES];
            for (long at = offset; at < end; ) {
                // every chunk after the first starts on a block boundary, so only the range's edges read-modify-write
                long next = Math.min(end, alignDown(at) + ZERO_CHUNK_BYTES);
                writeBytes(at, zeros, 0, (int) (next - at));
                at = next;
            }
        } else {
            long first = alignUp(offset), last = alignDown(end);
            if (first >= last) { // inside one block, or two partial ones
                zeroMapped(offset, end);
            } else {
                if (offset < first) zeroMapped(offset, first);
                if (last < end) zeroMapped(last, end);
                await(store.punchHole(file, first, last - first));
            }
        }
        if (fua) flush();
    }

    /** Writes zeros over the written runs inside {@code [from, to)}; holes and unwritten runs already read as zeros. */
    private void zeroMapped(long from, long to) {
        long block = from / blockBytes, endBlock = alignUp(to) / blockBytes;
        while (block < endBlock) {
            BlockRun run = await(files.getBlocks(file, block, (int) Math.min(endBlock - block, Integer.MAX_VALUE), false));
            long n = run.isHole() ? 1 : run.blocks();
            if (!run.isHole() && !run.unwritten()) {
                long a = Math.max(from, block * blockBytes), b = Math.min(to, (block + n) * blockBytes);
                byte[] zeros = new byte[(int) Math.min(ZERO_CHUNK_BYTES, b - a)];
                for (long at = a; at < b; ) {
                    int len = (int) Math.min(zeros.length, b - at);
                    writeBytes(at, zeros, 0, len);
                    at += len;
                }
            }
            block += n;
        }
    }

    /** Durable: every write answered before the call (of every export of the pool). */
    public void flush() {
        await(store.flush(file));
    }

    /**
     * The base:allocation extents from {@code offset}: pairs of (length, flags), at least one, covering at most
     * {@code length} bytes; with {@code one}, exactly one.
     */
    public List<long[]> blockStatus(long offset, long length, boolean one) {
        List<long[]> out = new ArrayList<>();
        long end = offset + length;
        long block = offset / blockBytes;
        long at = offset;
        for (int lookups = 0; at < end && lookups < STATUS_LOOKUPS; lookups++) {
            long endBlock = alignUp(end) / blockBytes;
            BlockRun run = await(files.getBlocks(file, block, (int) Math.min(endBlock - block, Integer.MAX_VALUE), false));
            long n = run.isHole() ? 1 : run.blocks();
            int flags = run.isHole() ? Nbd.STATE_HOLE | Nbd.STATE_ZERO : run.unwritten() ? Nbd.STATE_ZERO : 0;
            long upTo = Math.min(end, (block + n) * blockBytes);
            long[] last = out.isEmpty() ? null : out.get(out.size() - 1);
            if (last != null && last[1] == flags) last[0] += upTo - at;
            else {
                if (one && last != null) break;
                out.add(new long[] {upTo - at, flags});
            }
            at = upTo;
            block += n;
        }
        for (long[] d : out) // a descriptor's length is a u32
            if (d[0] > 0xFFFF_F000L) { d[0] = 0xFFFF_F000L; out.subList(out.indexOf(d) + 1, out.size()).clear(); break; }
        return out;
    }

    private long alignDown(long bytes) {
        return bytes / blockBytes * blockBytes;
    }

    private long alignUp(long bytes) {
        return (bytes + blockBytes - 1) / blockBytes * blockBytes;
    }

    /** The store's answer, or an {@link NbdError} with the NBD error its failure maps to. */
    static <T> T await(CompletionStage<T> stage) {
        try {
            return stage.toCompletableFuture().get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new NbdError(Nbd.ESHUTDOWN, "interrupted");
        } catch (TimeoutException e) {
            throw new NbdError(Nbd.EIO, "the store did not answer within " + TIMEOUT_SECONDS + " s");
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            while (c instanceof java.util.concurrent.CompletionException && c.getCause() != null) c = c.getCause();
            if (c instanceof AllocationException.NoSpace) throw new NbdError(Nbd.ENOSPC, c.getMessage());
            if (c instanceof AllocationException.InvalidRequest || c instanceof AllocationException.OutOfRange)
                throw new NbdError(Nbd.EINVAL, c.getMessage());
            if (c instanceof AllocationException.Closed) throw new NbdError(Nbd.ESHUTDOWN, c.getMessage());
            throw new NbdError(Nbd.EIO, String.valueOf(c));
        }
    }
}
