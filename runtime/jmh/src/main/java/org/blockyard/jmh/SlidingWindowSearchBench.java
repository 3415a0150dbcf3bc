package org.blockyard.jmh;

import java.util.List;
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
import org.blockyard.runtime.alloc.BlockGroup;
import org.blockyard.runtime.alloc.ReservationPolicy;

/**
 * The long window search of {@code ProvisionalWindowTest} and {@code bench stall}, whole, on one thread:
 * {@code slides} other files each hold a 2-block window with one free block in it, 16 blocks apart, from
 * the group's first data block on, so a new 8-block window slides past every one of them. What the global
 * lock holds everyone up for, and what a group actor runs in slices.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class SlidingWindowSearchBench {
    private static final int BLOCKS = 65_536;
    private static final int STRIDE = 16;
    private static final long FILE = 1L << 50;

    @Param({"200", "2000"})
    int slides;

    private BlockGroup group;

    @Setup(Level.Trial)
    public void setUp() {
        Geometry g = Geometry.of(4096, 2L * BLOCKS, BLOCKS);
        group = new BlockGroup(g, 1, ReservationPolicy.ext3());
        long at = group.firstDataBlock();
        for (int i = 0; i < slides; i++) {
            BlockGroup.Outcome o = group.allocate(BlockGroup.Request.of(FILE + 1 + i, at, 1, 0, 2, true, false));
            if (o.start() != at) throw new IllegalStateException("holder " + i + " missed block " + at);
            group.markUsed(at + 2, STRIDE - 2);
            at += STRIDE;
        }
    }

    @Benchmark
    public long slidingSearch() {
        BlockGroup.Outcome o = group.allocate(BlockGroup.Request.of(FILE, group.firstDataBlock(), 1, 0, 8,
                true, false));
        group.discardWindow(FILE);
        if (o.allocated()) group.free(List.of(new Extent(o.start(), o.blocks())));
        return o.start();
    }
}
