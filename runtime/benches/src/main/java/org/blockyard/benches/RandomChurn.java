package org.blockyard.benches;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import com.typesafe.config.Config;

import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.runtime.alloc.ExtentAllocator;

/**
 * The overwrite churn of Ceph's allocator benchmark ({@code Allocator_bench}'s {@code doOverwriteTest}), with
 * several clients: the volume is filled to {@code fill} with allocations of random power-of-two sizes from
 * one unit to {@code maxSizeBytes}, then each step releases that many random bytes of what the client holds
 * (the front of a random extent, or whole extents) and allocates a new random size, until
 * {@code overwrite} times the volume has been allocated again. {@value #RANDOM_2M} draws sizes of 4 KiB to
 * 2 MiB at a 4 KiB unit, {@value #RANDOM_64K} 4 KiB to 64 KiB; so the volume stays about as full as the fill.
 *
 * <p>The clients are threads, each with its own random sequence (from the seed and its number) and its own
 * extents; they run the fill, then {@code rounds} equal parts of the overwrite, and wait for each other
 * after each, when the score and the round's allocation rate are taken. What each client asks depends only
 * on the seed; which extents it gets depends on the interleaving of the clients.
 */
public final class RandomChurn {
    public static final String RANDOM_2M = "random-2m";
    public static final String RANDOM_64K = "random-64k";

    /** Largest size each shape draws, in bytes. */
    public static long maxSizeBytes(String shape) {
        return switch (shape) {
            case RANDOM_2M -> 2L << 20;
            case RANDOM_64K -> 64L << 10;
            default -> throw new IllegalArgumentException("not a random churn shape: " + shape);
        };
    }

    /**
     * @param fill      fraction of the volume filled first, and kept
     * @param overwrite bytes allocated after the fill, as a multiple of the volume (Ceph's test: 3)
     */
    public record Spec(String shape, long volumeBytes, long unitBytes, double fill, double overwrite, int rounds,
                       int clients, long maxExtentBytes, long seed) {
        public Spec {
            maxSizeBytes(shape);
            if (!(fill > 0 && fill < 1)) throw new IllegalArgumentException("--fill must be above 0 and below 1");
            if (!(overwrite >= 0)) throw new IllegalArgumentException("--overwrite must be 0 or more");
            if (rounds < 0 || clients < 1) throw new IllegalArgumentException("rounds 0 or more, and a client at least");
        }
    }

    private RandomChurn() {}

    /** One run against a fresh allocator {@code id}; {@code progress} may be null. */
    public static Map<String, Object> run(String id, Spec spec, Config config, PrintStream progress) {
        return run(id, spec, config, progress, g -> Aging.open(id, g, config));
    }

    /** As {@link #run(String, Spec, Config, PrintStream)}, the allocator made by {@code opener} over the geometry. */
    static Map<String, Object> run(String id, Spec spec, Config config, PrintStream progress,
                                   java.util.function.Function<Geometry, ExtentAllocator> opener) {
        Geometry geometry = Aging.geometry(spec.volumeBytes(), spec.unitBytes(), config);
        // A thread of its own for each client, every round: as an engine's thread frees what it allocated.
        List<ExecutorService> pools = new ArrayList<>();
        for (int c = 0; c < spec.clients(); c++) {
            String name = "extents-client-" + c;
            pools.add(Executors.newSingleThreadExecutor(r -> {
                Thread t = new Thread(r, name);
                t.setDaemon(true);
                return t;
            }));
        }
        try (ExtentAllocator a = opener.apply(geometry)) {
            return go(a, spec, geometry.blockSizeBytes(), id, pools, progress);
        } finally {
            for (ExecutorService p : pools) p.shutdownNow();
        }
    }

    private static Map<String, Object> go(ExtentAllocator a, Spec spec, int blockBytes, String id,
                                          List<ExecutorService> pools, PrintStream progress) {
        long capacity = a.freeBlocks();
        int unit = (int) (spec.unitBytes() / blockBytes);
        long maxExtent = spec.maxExtentBytes() == 0 ? 0 : Math.max(1, spec.maxExtentBytes() / spec.unitBytes()) * unit;
        int maxShift = Math.max(0, 63 - Long.numberOfLeadingZeros(maxSizeBytes(spec.shape()) / spec.unitBytes()));
        List<Client> clients = new ArrayList<>();
        for (int c = 0; c < spec.clients(); c++)
            clients.add(new Client(a, new Random(spec.seed() * 1_000_003L + c), unit, maxShift, maxExtent));
        long fillShare = (long) (spec.fill() * capacity) / spec.clients();
        long roundShare = spec.rounds() == 0 ? 0 : (long) (spec.overwrite() * capacity / spec.rounds() / spec.clients());
        List<Double> scores = new ArrayList<>(), rates = new ArrayList<>();
        long t0 = System.nanoTime();
        for (int round = 0; round <= spec.rounds(); round++) {
            boolean fill = round == 0;
            long r0 = System.nanoTime(), calls0 = calls(clients);
            List<Future<Void>> work = new ArrayList<>();
            for (int i = 0; i < clients.size(); i++) {
                Client c = clients.get(i);
                work.add(pools.get(i).submit(() -> {
                    if (fill) c.fill(fillShare);
                    else c.overwrite(roundShare);
                    return null;
                }));
            }
            waitFor(work);
            rates.add(Math.round((calls(clients) - calls0) / ((System.nanoTime() - r0) / 1e9) * 10) / 10.0);
            scores.add(Aging.round4(a.fragmentationScore()));
            if (progress != null && (round % 5 == 0 || round == spec.rounds()))
                progress.printf("  %s %s unit %d blocks: round %d/%d, %d calls, score %.4f%n", id, spec.shape(), unit,
                        round, spec.rounds(), calls(clients), a.fragmentationScore());
        }
        long elapsedNanos = System.nanoTime() - t0;
        Aging.Tally all = new Aging.Tally();
        for (Client c : clients) {
            // Each client is a closed loop; its mean interval between allocations includes its releases.
            c.tally.latency.correctClosedLoop(elapsedNanos, 1);
            all.add(c.tally);
        }
        Map<String, Object> row = Aging.header(id, spec.shape(), spec.unitBytes(), capacity * blockBytes, spec.rounds(),
                spec.clients(), spec.seed());
        Aging.putFigures(row, a, blockBytes, all, scores, rates, elapsedNanos);
        return row;
    }

    private static long calls(List<Client> clients) {
        long n = 0;
        for (Client c : clients) n += c.tally.calls;
        return n;
    }

    private static void waitFor(List<Future<Void>> work) {
        try {
            for (Future<Void> f : work) f.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) throw r;
            throw new IllegalStateException("a client failed", e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** One client: its random sizes and the extents it holds (a bag: a release takes a random one). */
    private static final class Client {
        final ExtentAllocator a;
        final Random rnd;
        final int unit, maxShift;
        final long maxExtent;
        final List<Extent> held = new ArrayList<>();
        final Aging.Tally tally = new Aging.Tally();
        boolean full;

        Client(ExtentAllocator a, Random rnd, int unit, int maxShift, long maxExtent) {
            this.a = a;
            this.rnd = rnd;
            this.unit = unit;
            this.maxShift = maxShift;
            this.maxExtent = maxExtent;
        }

        long size() {
            return (long) unit << rnd.nextInt(maxShift + 1);
        }

        /** Allocates random sizes until {@code blocks} are held, or the volume answers short. */
        void fill(long blocks) {
            for (long got = 0; got < blocks && !full; ) got += allocate(size());
        }

        /** Releases and allocates random sizes until {@code blocks} were allocated, or the volume answers short. */
        void overwrite(long blocks) {
            for (long got = 0; got < blocks && !full; ) {
                release(size());
                got += allocate(size());
            }
        }

        private long allocate(long want) {
            long s = System.nanoTime();
            List<Extent> got = a.allocate(want, unit, maxExtent, -1);
            long n = tally.record(want, maxExtent, got, System.nanoTime() - s);
            held.addAll(got);
            if (n < want) full = true; // as Ceph's test: a short answer ends the client's churn
            return n;
        }

        /** Releases {@code blocks} from the front of random held extents (Ceph's pop_random). */
        private void release(long blocks) {
            List<Extent> out = new ArrayList<>();
            for (long left = blocks; left > 0 && !held.isEmpty(); ) {
                int i = rnd.nextInt(held.size());
                Extent e = held.get(i);
                if (e.blocks() > left) {
                    out.add(new Extent(e.start(), left));
                    held.set(i, new Extent(e.start() + left, e.blocks() - left));
                    left = 0;
                } else {
                    out.add(e);
                    held.set(i, held.get(held.size() - 1));
                    held.remove(held.size() - 1);
                    left -= e.blocks();
                }
            }
            if (!out.isEmpty()) a.release(out);
        }
    }
}
