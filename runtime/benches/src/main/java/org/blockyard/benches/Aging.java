package org.blockyard.benches;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import com.typesafe.config.Config;

import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.runtime.alloc.ActorBlockAllocator;
import org.blockyard.runtime.alloc.AllocatorSettings;
import org.blockyard.runtime.alloc.DynamicFitAllocator;
import org.blockyard.runtime.alloc.ExtentAllocator;
import org.blockyard.runtime.alloc.GlobalLockAllocator;
import org.blockyard.runtime.alloc.GroupLockAllocator;

/**
 * The aging workload BlueStore's developers age allocators with: fill the volume to the high watermark
 * with objects written in chunks, free random objects down to the low watermark, refill, and repeat.
 * The operations depend only on the seed (sizes, and which objects go, are drawn without looking at what
 * an allocator answered), so every allocator sees the same ones.
 *
 * <p>Object sizes are log-uniform between one unit and {@code maxObjectBytes} (many small objects, a
 * few large ones); an object is written in chunks of at most {@code chunkBytes}, one {@code allocate}
 * each, with extents of at most {@code maxExtentBytes}, hinted at the end of the object's previous chunk.
 * A call is <em>split</em> when it comes back in more extents than {@code ceil(want / maxExtent)}.
 */
public final class Aging {
    public static final String BLOCKYARD = "blockyard";
    /** The actors, each client thread calling through a session of its own ({@code BlockAllocator.openSession}). */
    public static final String BLOCKYARD_SESSION = "blockyard-session";
    public static final String DYNAMIC_FIT = "dynamic-fit";
    /** The churn shapes of {@code bench extents}: this class's, and {@link RandomChurn}'s two. */
    public static final String AGING = "aging";

    public record Spec(long volumeBytes, long unitBytes, double high, double low, int rounds, long maxObjectBytes,
                       long chunkBytes, long maxExtentBytes, long seed) {
        public Spec {
            if (!(0 < low && low < high && high < 1)) throw new IllegalArgumentException("need 0 < --low < --high < 1");
            if (rounds < 0) throw new IllegalArgumentException("--rounds must be at least 0");
            if (unitBytes < 1 || maxObjectBytes < unitBytes || chunkBytes < unitBytes || maxExtentBytes < 0)
                throw new IllegalArgumentException("sizes: unit <= chunk, unit <= max object, max extent >= 0");
        }
    }

    private Aging() {}

    /**
     * The allocator of that id over {@code geometry}: {@value #BLOCKYARD}, {@code global-lock} (the same
     * groups and walk under one lock), {@code group-locks} (the same under a lock per group) or {@value #DYNAMIC_FIT}.
     */
    static ExtentAllocator open(String id, Geometry geometry, Config config) {
        return switch (id) {
            case BLOCKYARD, BLOCKYARD_SESSION -> {
                AllocatorSettings base = AllocatorSettings.fromConfig(config, geometry.blocksPerGroup());
                ActorBlockAllocator a = ActorBlockAllocator.start(base.withGeometry(geometry), config);
                yield id.equals(BLOCKYARD_SESSION) ? new BlockAllocatorAdapter(a, a, true, a::reclaimLoans)
                        : new BlockAllocatorAdapter(a, a);
            }
            case Tiobench.GLOBAL_LOCK -> {
                AllocatorSettings base = AllocatorSettings.fromConfig(config, geometry.blocksPerGroup());
                yield new BlockAllocatorAdapter(new GlobalLockAllocator(geometry, base.policy(),
                        base.preallocMinWindowBlocks()), () -> {});
            }
            case Tiobench.GROUP_LOCKS -> {
                AllocatorSettings base = AllocatorSettings.fromConfig(config, geometry.blocksPerGroup());
                yield new BlockAllocatorAdapter(new GroupLockAllocator(geometry, base.policy(),
                        base.preallocMinWindowBlocks()), () -> {});
            }
            case DYNAMIC_FIT -> new DynamicFitAllocator(geometry);
            default -> throw new IllegalArgumentException("unknown allocator '" + id + "' (" + BLOCKYARD + ", "
                    + BLOCKYARD_SESSION + ", "
                    + Tiobench.GLOBAL_LOCK + ", " + Tiobench.GROUP_LOCKS + ", " + DYNAMIC_FIT + ")");
        };
    }

    /** One run of the workload against a fresh allocator {@code id}; {@code progress} may be null. */
    public static Map<String, Object> run(String id, Spec spec, Config config, PrintStream progress) {
        return run(id, spec, config, progress, g -> open(id, g, config));
    }

    /** As {@link #run(String, Spec, Config, PrintStream)}, the allocator made by {@code opener} over the geometry. */
    static Map<String, Object> run(String id, Spec spec, Config config, PrintStream progress,
                                   java.util.function.Function<Geometry, ExtentAllocator> opener) {
        Geometry geometry = geometry(spec.volumeBytes(), spec.unitBytes(), config);
        try (ExtentAllocator a = opener.apply(geometry)) {
            return new Run(a, spec, geometry.blockSizeBytes(), progress, id).go();
        }
    }

    /** {@link #volumeGeometry}, refused unless {@code unitBytes} is a whole number of blocks. */
    static Geometry geometry(long volumeBytes, long unitBytes, Config config) {
        Geometry g = volumeGeometry(config, volumeBytes);
        if (unitBytes % g.blockSizeBytes() != 0)
            throw new IllegalArgumentException("unit of " + unitBytes + " bytes is not a multiple of the block ("
                    + g.blockSizeBytes() + ")");
        return g;
    }

    /**
     * A volume of the configured block size and group size holding {@code volumeBytes} in whole groups (at least
     * one), without stride or stripe: the volume of a bench that only allocates.
     */
    public static Geometry volumeGeometry(Config config, long volumeBytes) {
        Geometry proto = AllocatorSettings.fromConfig(config, 0L + config.getInt("blockyard.volume.blocks-per-group")).geometry();
        int blockBytes = proto.blockSizeBytes();
        int bpg = proto.blocksPerGroup();
        long groups = Math.max(1, volumeBytes / ((long) blockBytes * bpg));
        return new Geometry(blockBytes, groups * bpg, bpg, proto.systemBlocksPerGroup(), proto.journalBlocks(), 0, 0);
    }

    /** One of {@code objects}, drawn at random and removed (the last takes its place: the order does not matter). */
    public static List<Extent> removeRandom(List<List<Extent>> objects, Random rnd) {
        int i = rnd.nextInt(objects.size());
        List<Extent> o = objects.get(i);
        objects.set(i, objects.get(objects.size() - 1));
        objects.remove(objects.size() - 1);
        return o;
    }

    /**
     * Whether an allocation of {@code want} blocks answered in {@code extents} pieces was split: more than
     * {@code ceil(want / maxExtentBlocks)} of them (one when {@code maxExtentBlocks} is 0, no limit).
     */
    public static boolean split(long want, long maxExtentBlocks, int extents) {
        return extents > (maxExtentBlocks == 0 ? 1 : (want + maxExtentBlocks - 1) / maxExtentBlocks);
    }

    /** The blocks of {@code extents} together. */
    public static long blocks(List<Extent> extents) {
        long n = 0;
        for (Extent e : extents) n += e.blocks();
        return n;
    }

    /**
     * What a client counts of its allocate calls: calls, those split (more extents than
     * {@code ceil(want / maxExtent)}), their extents, those answered short, and latency. One per client,
     * {@link #add}ed up at the end.
     */
    static final class Tally {
        final Latency latency = new Latency();
        long calls, splitCalls, extents, splitExtents, shortCalls;

        /** One call for {@code want} blocks that answered {@code got} in {@code nanos}; answers the blocks got. */
        long record(long want, long maxExtentBlocks, List<Extent> got, long nanos) {
            latency.record(nanos);
            calls++;
            extents += got.size();
            if (split(want, maxExtentBlocks, got.size())) {
                splitCalls++;
                splitExtents += got.size();
            }
            long n = 0;
            for (Extent e : got) n += e.blocks();
            if (n < want) shortCalls++;
            return n;
        }

        void add(Tally o) {
            latency.merge(o.latency);
            calls += o.calls;
            splitCalls += o.splitCalls;
            extents += o.extents;
            splitExtents += o.splitExtents;
            shortCalls += o.shortCalls;
        }
    }

    /** What a row of either workload starts with: what ran, on what, how long and with which seed. */
    static Map<String, Object> header(String id, String shape, long unitBytes, long volumeBytes, int rounds, int clients,
                                      long seed) {
        Map<String, Object> row = Report.row();
        row.put("allocator", id);
        row.put("shape", shape);
        row.put("unit_bytes", unitBytes);
        row.put("volume_bytes", volumeBytes);
        row.put("rounds", rounds);
        row.put("clients", clients);
        row.put("seed", seed);
        return row;
    }

    /**
     * The figures both workloads report: the calls of {@code t}, the score and the allocation rate after
     * each round (round 0 is the first fill), latency and the free-extent histogram at the end.
     */
    static void putFigures(Map<String, Object> row, ExtentAllocator a, int blockBytes, Tally t, List<Double> scores,
                           List<Double> ratesPerSecond, long elapsedNanos) {
        double elapsed = elapsedNanos / 1e9;
        row.put("allocations", t.calls);
        row.put("split_pct", 100.0 * t.splitCalls / Math.max(1, t.calls));
        row.put("extents_per_allocation", (double) t.extents / Math.max(1, t.calls));
        row.put("extents_per_split_allocation", t.splitCalls == 0 ? 0.0 : (double) t.splitExtents / t.splitCalls);
        row.put("short_allocations", t.shortCalls);
        row.put("score_v3", a.fragmentationScore());
        row.put("score_v3_by_round", scores);
        row.put("allocs_per_s", t.calls / elapsed);
        row.put("allocs_per_s_by_round", ratesPerSecond);
        row.put("alloc_latency_us", t.latency.summaryMicros());
        row.put("alloc_latency_cdf_us", t.latency.cdfMicros());
        row.put("free_extent_histogram", FreeExtentHistogram.of(a, blockBytes));
        row.put("elapsed_s", elapsed);
    }

    static double round4(double v) {
        return Math.round(v * 10000) / 10000.0;
    }

    private static final class Run {
        final ExtentAllocator a;
        final Spec spec;
        final int blockBytes;
        final PrintStream progress;
        final String id;
        final Random rnd;
        final int unit;
        final long maxObjectUnits;
        final long chunkBlocks;
        final long maxExtentBlocks;
        final long capacity;
        final List<List<Extent>> objects = new ArrayList<>();
        final Tally tally = new Tally();
        long usedBlocks;

        Run(ExtentAllocator a, Spec spec, int blockBytes, PrintStream progress, String id) {
            this.a = a;
            this.spec = spec;
            this.blockBytes = blockBytes;
            this.progress = progress;
            this.id = id;
            this.rnd = new Random(spec.seed());
            this.unit = (int) (spec.unitBytes() / blockBytes);
            this.maxObjectUnits = spec.maxObjectBytes() / spec.unitBytes();
            long chunkUnits = Math.max(1, spec.chunkBytes() / spec.unitBytes());
            this.chunkBlocks = chunkUnits * unit;
            this.maxExtentBlocks = spec.maxExtentBytes() == 0 ? 0 : Math.max(1, spec.maxExtentBytes() / spec.unitBytes()) * unit;
            this.capacity = a.freeBlocks();
        }

        Map<String, Object> go() {
            long t0 = System.nanoTime();
            List<Double> scores = new ArrayList<>(), rates = new ArrayList<>();
            for (int round = 0; round <= spec.rounds(); round++) {
                long r0 = System.nanoTime(), calls0 = tally.calls;
                if (round > 0) freeDownTo((long) (spec.low() * capacity));
                fillTo((long) (spec.high() * capacity));
                rates.add(Math.round((tally.calls - calls0) / ((System.nanoTime() - r0) / 1e9) * 10) / 10.0);
                scores.add(round4(a.fragmentationScore()));
                if (progress != null && (round % 5 == 0 || round == spec.rounds()))
                    progress.printf("  %s unit %d blocks: round %d/%d, %d calls, %.2f%% split, score %.4f%n", id, unit,
                            round, spec.rounds(), tally.calls, 100.0 * tally.splitCalls / Math.max(1, tally.calls),
                            a.fragmentationScore());
            }
            long elapsedNanos = System.nanoTime() - t0;
            // One closed-loop client; its mean interval between allocations includes its frees.
            tally.latency.correctClosedLoop(elapsedNanos, 1);
            Map<String, Object> row = header(id, AGING, spec.unitBytes(), capacity * blockBytes, spec.rounds(), 1, spec.seed());
            putFigures(row, a, blockBytes, tally, scores, rates, elapsedNanos);
            return row;
        }

        /** Writes new objects until {@code target} blocks are in use (or the allocator has no more). */
        void fillTo(long target) {
            while (usedBlocks < target) {
                long units = Math.max(1, Math.round(Math.exp(rnd.nextDouble() * Math.log(maxObjectUnits))));
                long blocks = Math.min(units * unit, target - usedBlocks + unit - 1) / unit * unit;
                if (blocks < unit) blocks = unit;
                List<Extent> object = new ArrayList<>();
                long hint = -1, written = 0;
                for (long left = blocks; left > 0; ) {
                    long want = Math.min(left, chunkBlocks);
                    long s = System.nanoTime();
                    List<Extent> got = a.allocate(want, unit, maxExtentBlocks, hint);
                    written += tally.record(want, maxExtentBlocks, got, System.nanoTime() - s);
                    object.addAll(got);
                    if (got.isEmpty()) break;
                    hint = got.get(got.size() - 1).end();
                    left -= want;
                }
                objects.add(object);
                usedBlocks += written;
                if (object.isEmpty()) return; // full: the next fill starts after some objects are freed
            }
        }

        /** Deletes random objects until at most {@code target} blocks are in use. */
        void freeDownTo(long target) {
            while (usedBlocks > target && !objects.isEmpty()) {
                List<Extent> o = removeRandom(objects, rnd);
                if (!o.isEmpty()) a.release(o);
                usedBlocks -= blocks(o);
            }
        }
    }
}
