package org.blockyard.runtime.store;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import akka.actor.typed.ActorRef;
import com.typesafe.config.Config;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.io.BlockQueue;
import org.blockyard.api.io.ElevatorFactory;
import org.blockyard.api.io.IoCompletion;
import org.blockyard.api.io.IoFlag;
import org.blockyard.api.io.IoRequest;
import org.blockyard.runtime.alloc.ActorBlockAllocator;
import org.blockyard.runtime.alloc.AllocatorSettings;
import org.blockyard.runtime.io.ActorBlockQueue;
import org.blockyard.runtime.io.BlockDevice;
import org.blockyard.runtime.io.IoSettings;
import org.blockyard.runtime.io.QueueActor;

/**
 * Files on a device through the whole stack: the allocator maps (or allocates) a file's blocks with
 * {@code getBlocks}, each mapped run becomes I/O requests of at most {@code max_sectors}, and the queue
 * (its elevator, merging, the device) carries them out. Both actors live in one actor system.
 *
 * <p>The caller waits for every read and write, so their requests are SYNC (Linux's {@code WRITE_SYNC}):
 * they unplug the queue and go out at once instead of waiting for the unplug timer; a storage engine that
 * wants its writes merged hands them to {@link #queue()} itself, as asynchronous requests.
 *
 * <p>Offsets and lengths are whole blocks: a storage engine writes blocks, and a partial block would need
 * a read-modify-write that belongs to a page cache, not here. A read of a hole answers zeros, and so does
 * a read of blocks allocated but not yet written (ext4's unwritten extents): the store never shows a file
 * bytes it did not write.
 *
 * <p>What is durable when, on a durable volume ({@code Volume.fileStore()}; a store in memory keeps nothing):
 * <ul>
 *   <li>A write that allocates blocks, or that writes blocks allocated but still unwritten, completes only
 *       once it is durable, data and map: its data reaches the image first, then the change of its blocks
 *       to written is committed to the journal, and that commit ends with a FLUSH of the image (fdatasync;
 *       with {@code forced-commits}, a FUA write, which an image file performs as a write and an fdatasync),
 *       which makes the data written before it durable too.</li>
 *   <li>An overwrite, a write of blocks the file already has written, changes no metadata: it completes once
 *       the image file has the data (its page cache, with buffered I/O), without a flush. A crash before
 *       the next flush may lose it, and may leave some of its blocks old and some new. {@link #flush} makes
 *       every write answered before it durable; so does the volume's {@code close()}, and any later journal
 *       commit's FLUSH (the image is flushed whole).</li>
 *   <li>A write that fails leaves the file's map as it was; its data may have reached some of the blocks it
 *       overwrote.</li>
 *   <li>Reads, and {@link #flush} itself, change nothing.</li>
 * </ul>
 * The allocator's own calls ({@code open}, {@code truncate}, {@code delete}, ...) on a volume complete once
 * their journal commit is durable (VolumeAllocator).
 *
 * <p>A null file name or buffer is refused like any bad argument: the stage fails with
 * {@link AllocationException.InvalidRequest}, nothing is thrown on the caller's thread.
 */
public final class FileStore implements AutoCloseable {
    private final ActorBlockAllocator actors;
    /** What file calls go to: the actors themselves, or a volume's facade that makes them durable. */
    private final org.blockyard.api.alloc.BlockAllocator allocator;
    private final ActorBlockQueue queue;
    private final ActorRef<QueueActor.Command> queueActor;
    private final BlockDevice device;
    private final int blockBytes;
    private final int maxRequestBlocks;
    private final AtomicLong nextId = new AtomicLong(1);
    /** Longest {@link #close} waits for the device to close (a request may be stuck in it). */
    private final long deviceTimeoutNanos;

    private FileStore(ActorBlockAllocator actors, org.blockyard.api.alloc.BlockAllocator allocator, ActorBlockQueue queue,
                      ActorRef<QueueActor.Command> queueActor, BlockDevice device, long deviceTimeoutNanos) {
        this.deviceTimeoutNanos = deviceTimeoutNanos;
        this.actors = actors;
        this.allocator = allocator;
        this.queue = queue;
        this.queueActor = queueActor;
        this.device = device;
        this.blockBytes = allocator.geometry().blockSizeBytes();
        this.maxRequestBlocks = Math.max(1, queue.limits().maxSectors() * IoRequest.SECTOR_BYTES / blockBytes);
    }

    /** Starts an allocator for {@code settings} and a queue over {@code device}, which must hold the volume. */
    public static FileStore start(AllocatorSettings settings, IoSettings io, BlockDevice device, Config config) {
        return start(settings, io, device, config, null);
    }

    /** As {@link #start(AllocatorSettings, IoSettings, BlockDevice, Config)}, over groups {@code prepare} fills first. */
    public static FileStore start(AllocatorSettings settings, IoSettings io, BlockDevice device, Config config,
                                  java.util.function.Consumer<org.blockyard.runtime.alloc.BlockGroup> prepare) {
        long volumeBytes = settings.geometry().bytes();
        if (device.capacitySectors() * IoRequest.SECTOR_BYTES < volumeBytes)
            throw new IllegalArgumentException("the device holds " + device.capacitySectors() * IoRequest.SECTOR_BYTES
                    + " bytes; the volume needs " + volumeBytes);
        ActorBlockAllocator allocator = ActorBlockAllocator.start(settings, config, prepare);
        return over(allocator, allocator, io, device);
    }

    /**
     * A store over allocator actors already running, whose file calls go through {@code files} (a durable
     * volume's facade over {@code actors}). Closing the store closes the actors and the device.
     */
    public static FileStore over(ActorBlockAllocator actors, org.blockyard.api.alloc.BlockAllocator files, IoSettings io,
                                 BlockDevice device) {
        ActorRef<QueueActor.Command> q = actors.spawn(QueueActor.create(io.setup(), device), "io-queue",
                QueueActor.props());
        ActorBlockQueue queue = new ActorBlockQueue(q, actors.system().scheduler(), io.setup().limits(),
                device.capacitySectors(), io.submitTimeout());
        return new FileStore(actors, files, queue, q, device, io.setup().deviceTimeoutNanos());
    }

    /**
     * A store over allocator actors and a block-I/O queue already running (a durable volume's, which its
     * journal shares). Closing the store closes the queue, the actors and the device.
     */
    public static FileStore over(ActorBlockAllocator actors, org.blockyard.api.alloc.BlockAllocator files,
                                 ActorBlockQueue queue, ActorRef<QueueActor.Command> queueRef, BlockDevice device,
                                 long deviceTimeoutNanos) {
        return new FileStore(actors, files, queue, queueRef, device, deviceTimeoutNanos);
    }

    public ActorBlockAllocator allocator() {
        return actors;
    }

    public BlockQueue queue() {
        return queue;
    }

    /**
     * A plugin's elevator became available (its service appeared): the queue can switch to it from now on.
     * Only tells the queue actor, so an OSGi bind callback may call it.
     */
    public void registerElevator(ElevatorFactory factory) {
        if (factory == null) throw new IllegalArgumentException("no elevator factory (null) to register");
        queueActor.tell(new QueueActor.RegisterElevator(factory));
    }

    /** A plugin's elevator is going away; if it is active, the queue switches to the default first. Only tells. */
    public void unregisterElevator(String id) {
        if (id == null) throw new IllegalArgumentException("no elevator id (null) to unregister");
        queueActor.tell(new QueueActor.UnregisterElevator(id));
    }

    private static AllocationException.InvalidRequest noName() {
        return new AllocationException.InvalidRequest("a file needs a non-empty name");
    }

    private long checkedBlocks(long bytes, String what) {
        if (bytes < 0 || bytes % blockBytes != 0)
            throw new AllocationException.InvalidRequest(what + " of " + bytes + " bytes is not a whole number of "
                    + blockBytes + "-byte blocks");
        return bytes / blockBytes;
    }

    /** What a call does with its range once checked: the first logical block and the number of blocks. */
    @FunctionalInterface
    private interface InBlocks<T> {
        CompletionStage<T> apply(long logical, long blocks);
    }

    /**
     * {@code then} over {@code [byteOffset, + length)} as whole blocks; a stage failed with an
     * {@code InvalidRequest} instead when the file has no name or the range is not whole blocks ({@code what}
     * names the length in the message: write, read, punch).
     */
    private <T> CompletionStage<T> inBlocks(String file, long byteOffset, long length, String what, InBlocks<T> then) {
        if (file == null) return CompletableFuture.failedFuture(noName());
        long logical, blocks;
        try {
            logical = checkedBlocks(byteOffset, "offset");
            blocks = checkedBlocks(length, what);
        } catch (AllocationException e) {
            return CompletableFuture.failedFuture(e);
        }
        return then.apply(logical, blocks);
    }

    /**
     * Writes {@code data} (whole blocks) at {@code byteOffset}, allocating the blocks it needs. The blocks
     * it allocates stay unwritten (they read as zeros) until the data is on the device; then they are
     * converted to written. If the allocation fails, nothing is written; if the device fails, the blocks
     * this write allocated are given back. Either way the file is left as it was and the write fails, with
     * the allocator's or the device's error. What is durable once it completes: the class comment.
     */
    public CompletionStage<Void> write(String file, long byteOffset, ByteBuffer data) {
        if (file != null && data == null)
            return CompletableFuture.failedFuture(new AllocationException.InvalidRequest("write of no data (a null buffer)"));
        return inBlocks(file, byteOffset, data == null ? 0 : data.remaining(), "write",
                (logical, blocks) -> writeBlocks(file, logical, blocks, data));
    }

    private CompletionStage<Void> writeBlocks(String file, long logical, long blocks, ByteBuffer data) {
        if (blocks == 0) return CompletableFuture.completedFuture(null);
        ByteBuffer src = data.duplicate();
        RunCollector mapping = new RunCollector(file, logical, blocks, true);
        return mapping.collect().handle((runs, mapFault) -> {
            if (mapFault != null) return discardThenFail(file, mapping.runs, mapFault);
            List<IoRequest> requests = new ArrayList<>();
            for (BlockRun run : runs) requests.addAll(requests(run, IoRequest::write, src));
            return all(queue.submitAll(requests)).handle((v, ioFault) -> ioFault != null
                    ? discardThenFail(file, runs, ioFault)
                    : allocator.markWritten(file, logical, blocks).thenApply(n -> (Void) null))
                    .thenCompose(x -> x);
        }).thenCompose(x -> x);
    }

    /** Gives back the runs this write allocated (those still unwritten), then fails with {@code cause}. */
    private CompletionStage<Void> discardThenFail(String file, List<BlockRun> runs, Throwable cause) {
        Throwable error = cause instanceof CompletionException && cause.getCause() != null ? cause.getCause() : cause;
        List<CompletableFuture<Long>> discards = new ArrayList<>();
        long from = -1, to = -1;
        for (BlockRun run : runs) {
            if (!run.fresh()) continue;
            if (run.logicalStart() != to) {
                if (from >= 0) discards.add(allocator.discardUnwritten(file, from, to - from).toCompletableFuture());
                from = run.logicalStart();
            }
            to = run.logicalStart() + run.blocks();
        }
        if (from >= 0) discards.add(allocator.discardUnwritten(file, from, to - from).toCompletableFuture());
        return CompletableFuture.allOf(discards.toArray(CompletableFuture[]::new))
                .handle((v, e) -> { throw error instanceof RuntimeException r ? r : new CompletionException(error); });
    }

    /** Reads {@code length} bytes (whole blocks) at {@code byteOffset}; holes and unwritten blocks read as zeros. */
    public CompletionStage<ByteBuffer> read(String file, long byteOffset, int length) {
        return inBlocks(file, byteOffset, length, "read", (logical, blocks) -> readBlocks(file, logical, blocks, length));
    }

    private CompletionStage<ByteBuffer> readBlocks(String file, long logical, long blocks, int length) {
        ByteBuffer out = ByteBuffer.allocate(length);
        if (blocks == 0) return CompletableFuture.completedFuture(out);
        return new RunCollector(file, logical, blocks, false).collect().thenCompose(runs -> {
            List<IoRequest> requests = new ArrayList<>();
            ByteBuffer dst = out.duplicate();
            for (BlockRun run : runs) {
                if (run.isHole()) {
                    dst.position(dst.position() + blockBytes); // a hole reads as zeros
                } else if (run.unwritten()) {
                    // Allocated but not written yet: the blocks still hold someone else's bytes.
                    dst.position(dst.position() + run.blocks() * blockBytes);
                } else {
                    requests.addAll(requests(run, IoRequest::read, dst));
                }
            }
            return all(queue.submitAll(requests)).thenApply(v -> out);
        });
    }

    /**
     * Frees every block of {@code file} from the first whole block at or after {@code byteOffset} to its end,
     * through the same allocator as the writes (on a durable volume, a journal commit that is durable once the
     * stage completes), and answers how many blocks it freed. The freed range reads as zeros from then on: the
     * hole at a file's end ({@code ftruncate} down, then up); {@link #punchHole} makes one anywhere.
     */
    public CompletionStage<Long> truncate(String file, long byteOffset) {
        if (file == null) return CompletableFuture.failedFuture(noName());
        if (byteOffset < 0)
            return CompletableFuture.failedFuture(new AllocationException.InvalidRequest("truncate at " + byteOffset));
        return allocator.truncate(file, (byteOffset + blockBytes - 1) / blockBytes);
    }

    /**
     * Frees every block of {@code file} inside {@code [byteOffset, byteOffset + length)}, written or not
     * ({@code fallocate(PUNCH_HOLE)}), through the same allocator as the writes (on a durable volume, a journal
     * commit that is durable once the stage completes), and answers how many blocks it freed. The range is whole
     * blocks (a partial block at an edge is the caller's to zero); it reads as zeros, and is a hole, from then on.
     */
    public CompletionStage<Long> punchHole(String file, long byteOffset, long length) {
        return inBlocks(file, byteOffset, length, "punch", (logical, blocks) -> blocks == 0
                ? CompletableFuture.completedFuture(0L) : allocator.punchHole(file, logical, blocks));
    }

    /**
     * Makes every write this store answered before the call durable, as {@code fsync} does for a file: one
     * FLUSH through the queue (the device's {@code fdatasync}), which completes once the device has returned
     * from it. An overwrite needs it (the class comment says why); a write that allocated was durable already.
     * The flush covers the whole device, so the answered writes of every file; a write still in flight when
     * it is called may or may not be covered. Fails with the device's error, or {@code IoException.Closed}
     * once the store is closed.
     */
    public CompletionStage<Void> flush(String file) {
        if (file == null) return CompletableFuture.failedFuture(noName());
        return queue.submit(IoRequest.flush(nextId.getAndIncrement(), 0)).thenApply(c -> (Void) null);
    }

    /**
     * The runs covering {@code [logical, logical + blocks)}: allocated with {@code create}, else mapped runs
     * and one-block holes (a hole is a run of 0 blocks at its logical block). One {@code getBlocks} at a
     * time, in a loop that does not grow the stack however many runs there are: an answer that is already
     * there when its continuation is attached runs that continuation inline, so the loop only counts it
     * and the running turn picks it up.
     */
    private final class RunCollector {
        private final String file;
        private final boolean create;
        private final CompletableFuture<List<BlockRun>> out = new CompletableFuture<>();
        private final AtomicInteger wip = new AtomicInteger();
        /** The runs got so far (also after a failure: a failed write gives them back). */
        final List<BlockRun> runs = new ArrayList<>();
        private long logical;
        private long left;
        private boolean waiting;
        private BlockRun answer;
        private Throwable fault;

        RunCollector(String file, long logical, long blocks, boolean create) {
            this.file = file;
            this.logical = logical;
            this.left = blocks;
            this.create = create;
        }

        CompletableFuture<List<BlockRun>> collect() {
            resume();
            return out;
        }

        private void resume() {
            if (wip.getAndIncrement() != 0) return;
            do {
                turn();
            } while (wip.decrementAndGet() != 0);
        }

        private void turn() {
            if (waiting) {
                waiting = false;
                if (fault != null) {
                    out.completeExceptionally(fault);
                    return;
                }
                runs.add(answer);
                long n = answer.isHole() ? 1 : answer.blocks();
                logical += n;
                left -= n;
            }
            if (left == 0) {
                out.complete(runs);
                return;
            }
            waiting = true;
            allocator.getBlocks(file, logical, (int) Math.min(left, Integer.MAX_VALUE), create)
                    .whenComplete((run, e) -> {
                        answer = run;
                        fault = e;
                        resume();
                    });
        }
    }

    private interface Make {
        IoRequest make(long id, long sector, int sectors, long owner);
    }

    /** One run as requests of at most max_sectors, each with its slice of {@code buffer} (advanced past it). */
    private List<IoRequest> requests(BlockRun run, Make make, ByteBuffer buffer) {
        List<IoRequest> out = new ArrayList<>();
        int sectorsPerBlock = blockBytes / IoRequest.SECTOR_BYTES;
        for (long done = 0; done < run.blocks(); ) {
            int n = (int) Math.min(maxRequestBlocks, run.blocks() - done);
            ByteBuffer slice = buffer.slice(buffer.position(), n * blockBytes);
            buffer.position(buffer.position() + n * blockBytes);
            out.add(make.make(nextId.getAndIncrement(), (run.physicalStart() + done) * sectorsPerBlock,
                    n * sectorsPerBlock, run.logicalStart()).with(IoFlag.SYNC).withPayload(slice));
            done += n;
        }
        return out;
    }

    private static CompletionStage<Void> all(List<CompletionStage<IoCompletion>> stages) {
        CompletableFuture<?>[] fs = new CompletableFuture<?>[stages.size()];
        for (int i = 0; i < fs.length; i++) fs[i] = stages.get(i).toCompletableFuture();
        return CompletableFuture.allOf(fs);
    }

    @Override
    public void close() {
        // The queue first: what it holds fails with IoException.Closed, and so does every later submission
        // (a write in flight gives back its blocks only while the allocator still answers).
        queue.close();
        actors.close();
        try {
            BlockDevice.closeWithin(device, deviceTimeoutNanos); // not in time: the queue's stop logged it
        } catch (java.io.IOException e) {
            throw new IllegalStateException("device did not close: " + e.getMessage(), e);
        }
    }
}
