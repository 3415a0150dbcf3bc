package org.blockyard.embedded.itest.consumer;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Hashtable;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

import org.osgi.framework.BundleActivator;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;
import org.osgi.util.tracker.ServiceTracker;

import org.blockyard.api.alloc.BlockAllocator;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.io.BlockQueue;
import org.blockyard.api.io.IoRequest;

/**
 * The activator of a consumer bundle the tests build: it imports the API packages from the API bundle, as any
 * user of the services would, and offers one {@code Callable<String>} (a JDK type, the same class on both
 * sides of the framework) that uses the allocator and the queue with typed calls and reports what it saw,
 * the running elevator's own figures among it.
 */
public final class ConsumerActivator implements BundleActivator, Callable<String> {
    private static final long WAIT_SECONDS = 60;

    private ServiceTracker<BlockAllocator, BlockAllocator> allocators;
    private ServiceTracker<BlockQueue, BlockQueue> queues;
    private ServiceRegistration<?> registration;

    @Override
    public void start(BundleContext context) {
        allocators = new ServiceTracker<>(context, BlockAllocator.class, null);
        queues = new ServiceTracker<>(context, BlockQueue.class, null);
        allocators.open();
        queues.open();
        Hashtable<String, Object> props = new Hashtable<>();
        props.put("blockyard.consumer", "true");
        registration = context.registerService(Callable.class.getName(), this, props);
    }

    @Override
    public void stop(BundleContext context) {
        registration.unregister();
        queues.close();
        allocators.close();
    }

    /** Allocates and releases extents, allocates a file's blocks and writes and reads them through the queue. */
    @Override
    public String call() throws Exception {
        BlockAllocator alloc = allocators.waitForService(TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
        BlockQueue queue = queues.waitForService(TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
        if (alloc == null || queue == null) throw new IllegalStateException("no BlockAllocator or BlockQueue service");

        long free = get(alloc.freeBlocks());
        List<Extent> extents = get(alloc.allocate(64, 1, 64, -1));
        long got = extents.stream().mapToLong(Extent::blocks).sum();
        if (got != 64 || get(alloc.freeBlocks()) != free - 64)
            throw new AssertionError("allocate(64) gave " + extents + " with " + get(alloc.freeBlocks()) + " free of " + free);
        get(alloc.release(extents));
        if (get(alloc.freeBlocks()) != free) throw new AssertionError("release did not give back 64 blocks");

        String file = "/consumer/data";
        get(alloc.open(file));
        BlockRun run = get(alloc.getBlocks(file, 0, 8, true));
        int blockBytes = alloc.geometry().blockSizeBytes();
        int sectorsPerBlock = blockBytes / IoRequest.SECTOR_BYTES;
        byte[] data = new byte[(int) run.blocks() * blockBytes];
        for (int i = 0; i < data.length; i++) data[i] = (byte) (i * 31 + 7);
        long sector = run.physicalStart() * sectorsPerBlock;
        int sectors = (int) run.blocks() * sectorsPerBlock;
        get(queue.submit(IoRequest.write(1, sector, sectors, 0).withPayload(ByteBuffer.wrap(data))));
        ByteBuffer back = ByteBuffer.allocate(data.length);
        get(queue.submit(IoRequest.read(2, sector, sectors, 0).withPayload(back)));
        if (!Arrays.equals(data, back.array())) throw new AssertionError("the queue read back other bytes than it wrote");
        get(alloc.truncate(file, 0));
        get(alloc.close(file));
        if (get(alloc.freeBlocks()) != free) throw new AssertionError("truncate did not give back the file's blocks");

        return "blocks=" + alloc.geometry().totalBlocks() + " blockBytes=" + blockBytes + " free=" + free
                + " wrote=" + data.length + "@" + sector + " elevator=" + get(queue.activeElevator())
                + " policy=" + alloc.policy() + " elevatorStats=" + get(queue.stats()).elevatorStats();
    }

    private static <T> T get(java.util.concurrent.CompletionStage<T> stage) throws Exception {
        return stage.toCompletableFuture().get(WAIT_SECONDS, TimeUnit.SECONDS);
    }
}
