package org.blockyard.runtime.bench;

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
import org.blockyard.runtime.alloc.GlobalLockAllocator;

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
    public static final String DYNAMIC_FIT = "dynamic-fit";

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
     * groups and walk under one lock) or {@value #DYNAMIC_FIT}.
     */
    static ExtentAllocator open(String id, Geometry geometry, Config config) {
        return switch (id) {
            case BLOCKYARD -> {
                AllocatorSettings base = AllocatorSettings.fromConfig(config, geometry.blocksPerGroup());
                ActorBlockAllocator a = ActorBlockAllocator.start(base.withGeometry(geometry), config);
                yield new BlockAllocatorAdapter(a, a);
            }
            case Tiobench.GLOBAL_LOCK -> {
                AllocatorSettings base = AllocatorSettings.fromConfig(config, geometry.blocksPerGroup());
                yield new BlockAllocatorAdapter(new GlobalLockAllocator(geometry, base.policy(),
                        base.preallocMinWindowBlocks()), () -> {});
            }
            case DYNAMIC_FIT -> new DynamicFitAllocator(geometry);
            default -> throw new IllegalArgumentException("unknown allocator '" + id + "' (" + BLOCKYARD + ", "
                    + Tiobench.GLOBAL_LOCK + ", " + DYNAMIC_FIT + ")");
        };
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

    /** The blocks of {@code extents} together. */
    public static long blocks(List<Extent> extents) {
        long n = 0;
        for (Extent e : extents) n += e.blocks();
        return n;
    }

    /** One run of the workload against a fresh allocator {@code id}; {@code progress} may be null. */
    public static Map<String, Object> run(String id, Spec spec, Config config, PrintStream progress) {
        Geometry geometry = volumeGeometry(config, spec.volumeBytes());
        int blockBytes = geometry.blockSizeBytes();
        if (spec.unitBytes() % blockBytes != 0)
            throw new IllegalArgumentException("unit of " + spec.unitBytes() + " bytes is not a multiple of the block ("
                    + blockBytes + ")");
        try (ExtentAllocator a = open(id, geometry, config)) {
            return new Run(a, spec, blockBytes, progress, id).go();
        }
    }

    private static final class Run {
        final ExtentAllocator a;
        final Spec spec;
        final PrintStream progress;
        final String id;
        final Random rnd;
        final int unit;
        final long maxObjectUnits;
        final long chunkBlocks;
        final long maxExtentBlocks;
        final long capacity;
        final List<List<Extent>> objects = new ArrayList<>();
        final Latency latency = new Latency();
        long usedBlocks;
        long calls, splitCalls, extents, shortCalls;

        Run(ExtentAllocator a, Spec spec, int blockBytes, PrintStream progress, String id) {
            this.a = a;
            this.spec = spec;
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
            double score = 0;
            List<Double> scores = new java.util.ArrayList<>(); // the score over time: after each round's refill
            for (int round = 0; round <= spec.rounds(); round++) {
                if (round > 0) freeDownTo((long) (spec.low() * capacity));
                fillTo((long) (spec.high() * capacity));
                scores.add(Math.round(a.fragmentationScore() * 10000) / 10000.0);
                if (round == spec.rounds()) score = a.fragmentationScore();
                if (progress != null && (round % 5 == 0 || round == spec.rounds()))
                    progress.printf("  %s unit %d blocks: round %d/%d, %d calls, %.2f%% split, score %.4f%n", id, unit,
                            round, spec.rounds(), calls, 100.0 * splitCalls / Math.max(1, calls), a.fragmentationScore());
            }
            long elapsedNanos = System.nanoTime() - t0;
            double elapsed = elapsedNanos / 1e9;
            // One closed-loop client; its mean interval between allocations includes its frees.
            latency.correctClosedLoop(elapsedNanos, 1);
            Map<String, Object> row = Report.row();
            row.put("allocator", id);
            row.put("unit_bytes", spec.unitBytes());
            row.put("volume_bytes", capacity * (spec.unitBytes() / unit));
            row.put("rounds", spec.rounds());
            row.put("seed", spec.seed());
            row.put("allocations", calls);
            row.put("split_pct", 100.0 * splitCalls / Math.max(1, calls));
            row.put("extents_per_allocation", (double) extents / Math.max(1, calls));
            row.put("short_allocations", shortCalls);
            row.put("score_v3", score);
            row.put("score_v3_by_round", scores);
            row.put("alloc_latency_us", latency.summaryMicros());
            row.put("elapsed_s", elapsed);
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
                    latency.record(System.nanoTime() - s);
                    calls++;
                    extents += got.size();
                    long pieces = maxExtentBlocks == 0 ? 1 : (want + maxExtentBlocks - 1) / maxExtentBlocks;
                    if (got.size() > pieces) splitCalls++;
                    long n = 0;
                    for (Extent e : got) n += e.blocks();
                    if (n < want) shortCalls++;
                    written += n;
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
