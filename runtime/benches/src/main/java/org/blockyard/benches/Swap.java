package org.blockyard.benches;

import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import com.typesafe.config.Config;

import org.blockyard.api.alloc.Geometry;
import org.blockyard.api.io.ElevatorSwitch;
import org.blockyard.api.io.IoException;
import org.blockyard.api.io.IoRequest;
import org.blockyard.runtime.alloc.AllocatorSettings;
import org.blockyard.runtime.io.BlockDevice;
import org.blockyard.runtime.io.IoSettings;
import org.blockyard.runtime.io.MemoryDevice;
import org.blockyard.runtime.io.QueueEvents;
import org.blockyard.runtime.io.Request;
import org.blockyard.runtime.store.FileStore;

/**
 * Swapping plugins under load, nothing lost: writers put files through the whole stack ({@link FileStore}:
 * allocator, queue, memory device) while a stream of asynchronous submissions goes through the elevator, and
 * the elevator and the allocation policy are switched by name, again and again ({@code churn} adds plugin
 * bundle events between switches where a host provides them). Afterwards every file is read back and
 * compared, and every submission is accounted for: completed exactly once, issued exactly once.
 *
 * <p>A switch's pause is how long the actor that switches stood still for it, measured by that actor: for
 * an elevator, the queue actor building the new elevator and moving every queued request to it inside one
 * message (writers' requests wait behind it); for a policy, the allocator actor telling every group and
 * open file (each then switches at its next message boundary, in a handful of nanoseconds, so writers
 * never wait for all of them). {@code switch_call_us} is the caller's round trip, which adds the wait
 * behind the writers' own messages in those actors' mailboxes.
 */
public final class Swap {
    private Swap() {}

    /**
     * @param seconds how long the writers run (the swaps are spread over it)
     * @param swaps   elevator switches and as many policy switches
     * @param elevators elevator names to cycle through
     * @param policies  policy names to cycle through
     * @param churn     plugin bundle events to run between switches, round robin (none without a host)
     * @param direct    installed plugins (elevator and policy ids, {@link InstalledPlugins}) to register with
     *                  the engine as soon as it has started, beside what it brings itself (a host's bundles)
     */
    public record Spec(double seconds, int swaps, List<String> elevators, List<String> policies, int writers,
                       long fileBytes, List<Runnable> churn, List<String> direct) {
        public Spec {
            if (!(seconds > 0)) throw new IllegalArgumentException("--seconds must be above 0");
            if (swaps < 1) throw new IllegalArgumentException("--swaps must be at least 1");
            if (writers < 1) throw new IllegalArgumentException("--writers must be at least 1");
            if (fileBytes < 65536 || fileBytes % 65536 != 0)
                throw new IllegalArgumentException("--file-size must be a positive multiple of 64 KiB");
            if (elevators.isEmpty() || policies.isEmpty())
                throw new IllegalArgumentException("name at least one elevator and one policy");
            churn = List.copyOf(churn);
            direct = List.copyOf(direct);
        }

        /** No plugin registered directly: the engine has what it needs ({@link #BARE}: every installed one). */
        public Spec(double seconds, int swaps, List<String> elevators, List<String> policies, int writers,
                    long fileBytes, List<Runnable> churn) {
            this(seconds, swaps, elevators, policies, writers, fileBytes, churn, List.of());
        }
    }

    /**
     * Starts the engine a swap run drives, and stops it afterwards. The settings carry the run's volume and
     * its issue counter (in the queue setup's events), which the engine must keep.
     */
    public interface Engine {
        FileStore start(AllocatorSettings settings, IoSettings io, BlockDevice device, Config config);

        default void stop(FileStore store) {
            store.close();
        }
    }

    /**
     * A bare {@link FileStore} with every installed plugin ({@link InstalledPlugins}, {@code config}'s
     * {@code --deploy} folders too) registered directly, as the other benchmarks do.
     */
    public static final Engine BARE = (settings, io, device, config) -> {
        org.blockyard.benches.io.BenchElevators.registerWith(io.setup().registry(), config);
        FileStore store = FileStore.start(settings, io, device, config);
        BenchPolicies.registerWith(store.allocator(), config);
        return store;
    };

    private static final int CHUNK = 65536;
    private static final long SCRATCH_BYTES = 64L << 20;

    /** The byte every file holds at every offset: a function of both, so rewrites need no bookkeeping. */
    private static byte pattern(int file, long offset) {
        long x = (offset / 4096) * 0x9E3779B97F4A7C15L + file * 0xBF58476D1CE4E5B9L + (offset % 4096);
        return (byte) (x ^ (x >>> 29));
    }

    private static ByteBuffer chunk(int file, long offset) {
        byte[] b = new byte[CHUNK];
        for (int i = 0; i < CHUNK; i++) b[i] = pattern(file, offset + i);
        return ByteBuffer.wrap(b);
    }

    /** Counts how often each submission was issued to the device (a request carries several when merged). */
    private static final class IssueCounter implements QueueEvents {
        final Map<Long, Integer> issued = new ConcurrentHashMap<>();

        @Override
        public void issued(Request rq, long nowNanos) {
            for (IoRequest io : rq.submissionRequests()) issued.merge(io.id(), 1, Integer::sum);
        }
    }

    public static Map<String, Object> run(Spec spec, Config config, PrintStream progress) throws Exception {
        return run(spec, config, progress, BARE);
    }

    /**
     * One run on the engine {@code engine} starts. An elevator named in the spec that is not installed at
     * its turn (a plugin between bundle events) is counted as a switch to the queue's default.
     */
    public static Map<String, Object> run(Spec spec, Config config, PrintStream progress, Engine engine) throws Exception {
        AllocatorSettings base = AllocatorSettings.fromConfig(config, 0L + config.getInt("blockyard.volume.blocks-per-group"));
        int bpg = base.geometry().blocksPerGroup();
        long volumeBlocks = Math.max(4L * bpg, 2 * spec.writers() * spec.fileBytes() / 4096);
        volumeBlocks = (volumeBlocks + bpg - 1) / bpg * bpg;
        Geometry g = Geometry.of(4096, volumeBlocks, bpg);
        IssueCounter counter = new IssueCounter();
        IoSettings io = IoSettings.fromConfig(config);
        io = io.withSetup(io.setup().withEvents(counter));
        MemoryDevice device = new MemoryDevice(g.bytes() + SCRATCH_BYTES);
        long scratchSector = g.bytes() / IoRequest.SECTOR_BYTES;
        String defaultElevator = io.setup().registry().defaultId();
        FileStore store = engine.start(base.withGeometry(g), io, device, config);
        try {
            registerDirect(store, spec.direct(), config);
        } catch (Exception | Error e) {
            engine.stop(store);
            throw e;
        }
        java.util.concurrent.ExecutorService threads = java.util.concurrent.Executors.newFixedThreadPool(spec.writers() + 1);
        try {
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong writes = new AtomicLong();
            List<CompletableFuture<Void>> writers = new ArrayList<>();
            for (int w = 0; w < spec.writers(); w++) {
                int file = w;
                String name = "/swap/w" + w;
                store.allocator().open(name).toCompletableFuture().get(60, TimeUnit.SECONDS);
                writers.add(CompletableFuture.runAsync(() -> {
                    long off = 0;
                    while (!stop.get()) {
                        store.write(name, off, chunk(file, off)).toCompletableFuture().join();
                        writes.incrementAndGet();
                        off = (off + CHUNK) % spec.fileBytes();
                    }
                    // Finish the file, so the read-back has every byte.
                    for (long o = 0; o < spec.fileBytes(); o += CHUNK)
                        store.write(name, o, chunk(file, o)).toCompletableFuture().join();
                }, threads));
            }
            // Asynchronous submissions through the elevator, on the scratch area past the volume.
            AtomicLong submitted = new AtomicLong(), completed = new AtomicLong();
            Map<Long, Integer> completions = new ConcurrentHashMap<>();
            Semaphore inFlight = new Semaphore(64);
            CompletableFuture<Void> submitter = CompletableFuture.runAsync(() -> {
                Random rnd = new Random(1);
                long id = 1L << 40;
                while (!stop.get()) {
                    inFlight.acquireUninterruptibly();
                    long sector = scratchSector + (long) rnd.nextInt((int) (SCRATCH_BYTES / 4096)) * 8;
                    long myId = id++;
                    submitted.incrementAndGet();
                    store.queue().submit(IoRequest.write(myId, sector, 8, 7).withPayload(ByteBuffer.allocate(4096)))
                            .whenComplete((c, e) -> {
                                completions.merge(myId, 1, Integer::sum);
                                if (e == null) completed.incrementAndGet();
                                inFlight.release();
                            });
                }
            }, threads);
            String pause = "the length of a pause inside the switching actor, not a client's call";
            Latency elevatorPause = new Latency().notCorrected(pause), policyPause = new Latency().notCorrected(pause);
            Latency calls = new Latency(); // the switcher is paced: one elevator and one policy switch per interval
            int churned = 0;
            long intervalNanos = (long) (spec.seconds() * 1e9 / spec.swaps());
            long t0 = System.nanoTime();
            for (int i = 0; i < spec.swaps(); i++) {
                long due = t0 + i * intervalNanos;
                while (System.nanoTime() < due) Thread.sleep(1);
                long s = System.nanoTime();
                var es = switchElevator(store, spec.elevators().get(i % spec.elevators().size()), defaultElevator);
                calls.recordPaced(System.nanoTime() - s, intervalNanos);
                elevatorPause.record(es.pauseNanos());
                s = System.nanoTime();
                var ps = store.allocator().setPolicy(spec.policies().get(i % spec.policies().size()))
                        .toCompletableFuture().get(60, TimeUnit.SECONDS);
                calls.recordPaced(System.nanoTime() - s, intervalNanos);
                policyPause.record(ps.pauseNanos());
                if (!spec.churn().isEmpty()) {
                    spec.churn().get(i % spec.churn().size()).run();
                    churned++;
                }
                if (progress != null && (i + 1) % Math.max(1, spec.swaps() / 10) == 0)
                    progress.printf("swap: %d of %d switches%n", i + 1, spec.swaps());
            }
            stop.set(true);
            CompletableFuture.allOf(writers.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
            submitter.get(60, TimeUnit.SECONDS);
            inFlight.acquire(64); // every submission answered, or the wait below says which were lost
            inFlight.release(64);

            long verified = 0, errors = 0;
            for (int w = 0; w < spec.writers(); w++) {
                ByteBuffer back = store.read("/swap/w" + w, 0, (int) spec.fileBytes()).toCompletableFuture()
                        .get(60, TimeUnit.SECONDS);
                for (long o = 0; o < spec.fileBytes(); o++) if (back.get((int) o) != pattern(w, o)) errors++;
                verified += spec.fileBytes();
            }
            long twice = counter.issued.values().stream().filter(n -> n > 1).count()
                    + completions.values().stream().filter(n -> n > 1).count();
            Latency all = new Latency();
            all.merge(elevatorPause);
            all.merge(policyPause);
            Map<String, Object> row = Report.row();
            row.put("swaps", (long) spec.swaps() * 2);
            row.put("bundle_events", (long) churned);
            row.put("writes", writes.get());
            row.put("requests_submitted", submitted.get());
            row.put("requests_completed", completed.get());
            row.put("requests_lost", submitted.get() - completions.size());
            row.put("requests_issued_twice", twice);
            row.put("bytes_verified", verified);
            row.put("verify_errors", errors);
            row.put("switch_pause_us", all.summaryMicros());
            row.put("elevator_pause_us", elevatorPause.summaryMicros());
            row.put("policy_pause_us", policyPause.summaryMicros());
            row.put("switch_call_us", calls.summaryMicros());
            row.put("elevator", store.queue().activeElevator().toCompletableFuture().get(60, TimeUnit.SECONDS));
            row.put("policy", store.allocator().policy());
            return row;
        } finally {
            threads.shutdownNow();
            engine.stop(store);
        }
    }

    /**
     * Registers the installed plugins {@code ids} names with the started {@code store}, those it does not know
     * yet, and waits until its queue lists the elevators among them.
     */
    private static void registerDirect(FileStore store, List<String> ids, Config config) throws Exception {
        if (ids.isEmpty()) return;
        InstalledPlugins installed = InstalledPlugins.of(config);
        List<String> elevators = new ArrayList<>();
        for (org.blockyard.api.io.ElevatorFactory f : installed.elevators()) {
            String id = f.descriptor().id();
            if (!ids.contains(id)) continue;
            if (store.queue().elevators().toCompletableFuture().get(60, TimeUnit.SECONDS).contains(id)) continue;
            if (!(store.queue() instanceof org.blockyard.runtime.io.ActorBlockQueue q))
                throw new IllegalStateException("the engine's queue takes no elevator registrations");
            q.actor().tell(new org.blockyard.runtime.io.QueueActor.RegisterElevator(f));
            elevators.add(id);
        }
        for (org.blockyard.api.alloc.AllocationPolicyFactory f : installed.policies())
            if (ids.contains(f.descriptor().id()) && store.allocator().policies().resolve(f.descriptor().id()).isEmpty())
                store.allocator().registerPolicy(f);
        List<String> listed = store.queue().elevators().toCompletableFuture().get(60, TimeUnit.SECONDS);
        if (!listed.containsAll(elevators))
            throw new IllegalStateException("the queue refused the elevators " + elevators + " (it lists " + listed + ")");
    }

    private static ElevatorSwitch switchElevator(FileStore store, String name, String fallback) throws Exception {
        try {
            return store.queue().setElevator(name).toCompletableFuture().get(60, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof IoException.UnknownElevator) || name.equals(fallback)) throw e;
            return store.queue().setElevator(fallback).toCompletableFuture().get(60, TimeUnit.SECONDS);
        }
    }
}
