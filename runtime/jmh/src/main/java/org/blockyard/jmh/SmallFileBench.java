package org.blockyard.jmh;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

import com.typesafe.config.Config;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import org.blockyard.api.alloc.BlockAllocator;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.api.alloc.MapRequest;
import org.blockyard.runtime.alloc.ActorBlockAllocator;
import org.blockyard.runtime.alloc.AllocatorSettings;
import org.blockyard.runtime.alloc.GlobalLockAllocator;
import org.blockyard.runtime.config.BlockyardConfig;

/**
 * One small file through the {@link BlockAllocator} interface, from the benchmark's (plain) thread: open,
 * {@code blocks} one-block {@code getBlocks}, close, as {@code tar xf} makes them.
 * <ul>
 * <li>{@code joinEachCall}: each call waited for before the next, as a blocking caller does (against the
 *     actors, one thread hand-off per call);</li>
 * <li>{@code chained}: the calls chained on their stages and waited for once per file (against the actors,
 *     one hand-off per file; the steps between run on the dispatcher thread that completed the last);</li>
 * <li>{@code writeFile}: the file written whole, {@link BlockAllocator#writeFile} with the same calls (against
 *     the actors, one message to the file's shard and one hand-off per file);</li>
 * <li>{@code writeFilesInFlight}: {@value #IN_FLIGHT} files written whole, all handed over before the first
 *     answer is waited for, as an embedder's thread extracting an archive can: the hand-off and the wake-up
 *     are shared by the files in flight (time per file).</li>
 * </ul>
 * {@code allocator} is {@code actors} or {@code global-lock} (the same groups, files and policy behind one
 * lock, on the caller's thread). Each iteration starts on a fresh, empty volume of 256 groups, large
 * enough for a second of the fastest case.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class SmallFileBench {
    private static final int GROUPS = 256;

    @Param({"actors", "global-lock"})
    String allocator;

    @Param({"4"})
    int blocks;

    private BlockAllocator a;
    private AutoCloseable owner;
    private long file;

    @Setup(Level.Iteration)
    public void setUp() {
        Config config = BlockyardConfig.load();
        AllocatorSettings settings = AllocatorSettings.fromConfig(config, (long) GROUPS * Geometry.DEFAULT_BLOCKS_PER_GROUP);
        if (allocator.equals("global-lock")) {
            a = new GlobalLockAllocator(settings.geometry(), settings.policy(), settings.preallocMinWindowBlocks());
            owner = null;
        } else {
            ActorBlockAllocator actors = ActorBlockAllocator.start(settings, config);
            a = actors;
            owner = actors;
        }
    }

    @TearDown(Level.Iteration)
    public void tearDown() throws Exception {
        if (owner != null) owner.close();
    }

    private String nextName() {
        long n = file++;
        return "/src/d" + (n >>> 6) + "/f" + n;
    }

    @Benchmark
    public void joinEachCall() {
        String name = nextName();
        a.open(name).toCompletableFuture().join();
        for (int b = 0; b < blocks; b++) a.getBlocks(name, b, 1, true).toCompletableFuture().join();
        a.close(name).toCompletableFuture().join();
    }

    @Benchmark
    public Object writeFile() {
        List<MapRequest> calls = new ArrayList<>(blocks);
        for (int b = 0; b < blocks; b++) calls.add(MapRequest.allocate(b, 1));
        return a.writeFile(nextName(), calls).toCompletableFuture().join();
    }

    static final int IN_FLIGHT = 64;

    @Benchmark
    @OperationsPerInvocation(IN_FLIGHT)
    public void writeFilesInFlight() {
        List<MapRequest> calls = new ArrayList<>(blocks);
        for (int b = 0; b < blocks; b++) calls.add(MapRequest.allocate(b, 1));
        List<CompletableFuture<List<BlockRun>>> sent = new ArrayList<>(IN_FLIGHT);
        for (int i = 0; i < IN_FLIGHT; i++) sent.add(a.writeFile(nextName(), calls).toCompletableFuture());
        for (CompletableFuture<List<BlockRun>> f : sent) f.join();
    }

    @Benchmark
    public void chained() {
        String name = nextName();
        CompletionStage<?> s = a.open(name);
        for (int b = 0; b < blocks; b++) {
            int logical = b;
            s = s.thenCompose(v -> a.getBlocks(name, logical, 1, true));
        }
        s.thenCompose(v -> a.close(name)).toCompletableFuture().join();
    }
}
