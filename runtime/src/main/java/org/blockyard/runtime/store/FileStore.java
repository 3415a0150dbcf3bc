package org.blockyard.runtime.store;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Props;
import com.typesafe.config.Config;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.io.BlockQueue;
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
 * a read-modify-write that belongs to a page cache, not here. A read of a hole answers zeros.
 */
public final class FileStore implements AutoCloseable {
    private final ActorBlockAllocator allocator;
    private final BlockQueue queue;
    private final BlockDevice device;
    private final int blockBytes;
    private final int maxRequestBlocks;
    private final AtomicLong nextId = new AtomicLong(1);

    private FileStore(ActorBlockAllocator allocator, BlockQueue queue, BlockDevice device) {
        this.allocator = allocator;
        this.queue = queue;
        this.device = device;
        this.blockBytes = allocator.geometry().blockSizeBytes();
        this.maxRequestBlocks = Math.max(1, queue.limits().maxSectors() * IoRequest.SECTOR_BYTES / blockBytes);
    }

    /** Starts an allocator for {@code settings} and a queue over {@code device}, which must hold the volume. */
    public static FileStore start(AllocatorSettings settings, IoSettings io, BlockDevice device, Config config) {
        long volumeBytes = settings.geometry().bytes();
        if (device.capacitySectors() * IoRequest.SECTOR_BYTES < volumeBytes)
            throw new IllegalArgumentException("the device holds " + device.capacitySectors() * IoRequest.SECTOR_BYTES
                    + " bytes; the volume needs " + volumeBytes);
        ActorBlockAllocator allocator = ActorBlockAllocator.start(settings, config);
        ActorRef<QueueActor.Command> q = allocator.system().systemActorOf(QueueActor.create(io.setup(), device),
                "io-queue", Props.empty());
        ActorBlockQueue queue = new ActorBlockQueue(q, allocator.system().scheduler(), io.setup().limits(),
                device.capacitySectors(), io.submitTimeout());
        return new FileStore(allocator, queue, device);
    }

    public ActorBlockAllocator allocator() {
        return allocator;
    }

    public BlockQueue queue() {
        return queue;
    }

    private long checkedBlocks(long bytes, String what) {
        if (bytes < 0 || bytes % blockBytes != 0)
            throw new AllocationException.InvalidRequest(what + " of " + bytes + " bytes is not a whole number of "
                    + blockBytes + "-byte blocks");
        return bytes / blockBytes;
    }

    /** Writes {@code data} (whole blocks) at {@code byteOffset}, allocating the blocks it needs. */
    public CompletionStage<Void> write(String file, long byteOffset, ByteBuffer data) {
        long logical, blocks;
        try {
            logical = checkedBlocks(byteOffset, "offset");
            blocks = checkedBlocks(data.remaining(), "write");
        } catch (AllocationException e) {
            return CompletableFuture.failedFuture(e);
        }
        ByteBuffer src = data.duplicate();
        return map(file, logical, blocks, true, new ArrayList<>()).thenCompose(runs -> {
            List<IoRequest> requests = new ArrayList<>();
            for (BlockRun run : runs) requests.addAll(requests(run, IoRequest::write, src));
            return all(queue.submitAll(requests));
        });
    }

    /** Reads {@code length} bytes (whole blocks) at {@code byteOffset}; holes read as zeros. */
    public CompletionStage<ByteBuffer> read(String file, long byteOffset, int length) {
        long logical, blocks;
        try {
            logical = checkedBlocks(byteOffset, "offset");
            blocks = checkedBlocks(length, "read");
        } catch (AllocationException e) {
            return CompletableFuture.failedFuture(e);
        }
        ByteBuffer out = ByteBuffer.allocate(length);
        return map(file, logical, blocks, false, new ArrayList<>()).thenCompose(runs -> {
            List<IoRequest> requests = new ArrayList<>();
            ByteBuffer dst = out.duplicate();
            for (BlockRun run : runs) {
                if (run.isHole()) {
                    dst.position(dst.position() + blockBytes); // a hole reads as zeros
                } else {
                    requests.addAll(requests(run, IoRequest::read, dst));
                }
            }
            return all(queue.submitAll(requests)).thenApply(v -> out);
        });
    }

    /**
     * The runs covering {@code [logical, logical + blocks)}: allocated with {@code create}, else mapped runs
     * and one-block holes (a hole is a run of 0 blocks at its logical block).
     */
    private CompletionStage<List<BlockRun>> map(String file, long logical, long blocks, boolean create,
                                                List<BlockRun> acc) {
        if (blocks == 0) return CompletableFuture.completedFuture(acc);
        int ask = (int) Math.min(blocks, Integer.MAX_VALUE);
        return allocator.getBlocks(file, logical, ask, create).thenCompose(run -> {
            acc.add(run);
            long n = run.isHole() ? 1 : run.blocks();
            return map(file, logical + n, blocks - n, create, acc);
        });
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
        allocator.close();
        try {
            device.close();
        } catch (java.io.IOException e) {
            throw new IllegalStateException("device did not close: " + e.getMessage(), e);
        }
    }
}
