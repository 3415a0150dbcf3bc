package org.blockyard.jmh;

import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.runtime.alloc.Bitmap;
import org.blockyard.runtime.alloc.BlockGroup;
import org.blockyard.runtime.alloc.ReservationPolicy;

/**
 * The search inside one 32,768-block group, on one thread, without actors: the bitmap's find-free from a
 * random block, and a whole ext3 window search (book an 8-block window, claim a block in it) undone after
 * each operation so the group stays as it was. {@code fill} is the fraction of blocks used; {@code layout}
 * {@code random} scatters them (seeded), {@code prefix} fills the group from its start, as an aged volume
 * in the smallfiles bench is.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class BitmapSearchBench {
    private static final int BLOCKS = 32_768;
    /** A file id no allocator would hand out: the benchmark's own window. */
    private static final long FILE = 1L << 50;

    @Param({"0.5", "0.9", "0.99"})
    double fill;

    @Param({"random", "prefix"})
    String layout;

    private Bitmap bitmap;
    private BlockGroup group;
    private int[] starts;
    private int next;

    @Setup(Level.Trial)
    public void setUp() {
        Random rnd = new Random(42);
        // Group 1 of two: no journal, only the bitmap blocks in its system zone.
        Geometry g = Geometry.of(4096, 2L * BLOCKS, BLOCKS);
        group = new BlockGroup(g, 1, ReservationPolicy.ext3());
        bitmap = new Bitmap(BLOCKS);
        int data = (int) group.dataBlocks();
        int used = (int) (data * fill);
        if (layout.equals("prefix")) {
            group.fillFromStart(used);
            bitmap.setUsed(0, used);
        } else {
            boolean[] take = new boolean[data];
            for (int left = used; left > 0; ) {
                int b = rnd.nextInt(data);
                if (!take[b]) {
                    take[b] = true;
                    left--;
                }
            }
            for (int b = 0; b < data; b++) {
                if (!take[b]) continue;
                group.markUsed(group.firstDataBlock() + b, 1);
                bitmap.setUsed(b, 1);
            }
        }
        starts = new int[1024];
        for (int i = 0; i < starts.length; i++) starts[i] = rnd.nextInt(BLOCKS);
    }

    /** The first free block at or after a random block, wrapping to the start once. */
    @Benchmark
    public int nextFree() {
        int from = starts[next++ & (starts.length - 1)];
        int f = bitmap.nextFree(from, BLOCKS);
        return f >= 0 ? f : bitmap.nextFree(0, from);
    }

    /**
     * A new file's first allocation with a window (ext3: searched from the group's first data block), then
     * undone: its block freed and its window dropped.
     */
    @Benchmark
    public long windowSearch() {
        BlockGroup.Outcome o = group.allocate(BlockGroup.Request.of(FILE, group.firstDataBlock(), 1, 0, 8,
                true, false));
        group.discardWindow(FILE);
        if (o.allocated()) group.free(List.of(new Extent(o.start(), o.blocks())));
        return o.start();
    }
}
