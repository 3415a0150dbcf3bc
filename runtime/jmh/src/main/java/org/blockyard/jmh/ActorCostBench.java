package org.blockyard.jmh;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.AskPattern;
import akka.actor.typed.javadsl.Behaviors;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import org.blockyard.api.alloc.Geometry;
import org.blockyard.runtime.alloc.ActorBlockAllocator;
import org.blockyard.runtime.alloc.AllocatorSettings;
import org.blockyard.runtime.alloc.GroupActor;
import org.blockyard.runtime.alloc.Reply;
import org.blockyard.runtime.config.BlockyardConfig;

/**
 * What the actor design costs per operation, in the allocator's own actor system (its configured
 * dispatcher):
 * <ul>
 * <li>{@code groupRoundTrip}: one {@code Count} to a group actor and its answer, sent by an actor, so
 *     no thread outside the system is involved; 1,000 in a row per invocation.</li>
 * <li>{@code bareRoundTrip}: the same between two plain actors (a message and its answer): the floor.</li>
 * <li>{@code spawnAndStop}: an actor spawns a child that stops at once and waits for its death watch
 *     notice before the next; 1,000 in a row per invocation.</li>
 * <li>{@code plainThreadAskJoin}: a plain thread (the benchmark's) asks a group actor for {@code Count}
 *     and waits: the thread-to-dispatcher hand-off and back that every blocking {@code BlockAllocator}
 *     call from an embedder's thread pays.</li>
 * </ul>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class ActorCostBench {
    static final int BATCH = 1_000;
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private ActorBlockAllocator allocator;
    private ActorRef<GroupActor.Command> group;
    private ActorRef<Object> groupPinger;
    private ActorRef<Object> barePinger;
    private ActorRef<Object> spawner;

    /** Run {@code times} operations in a row, then complete {@code done}. */
    record Loop(int times, CompletableFuture<Void> done) {}

    @Setup(Level.Trial)
    public void setUp() {
        var config = BlockyardConfig.load();
        AllocatorSettings settings = AllocatorSettings.fromConfig(config, 4L * Geometry.DEFAULT_BLOCKS_PER_GROUP);
        allocator = ActorBlockAllocator.start(settings, config);
        group = allocator.groupActors().get(1);
        groupPinger = allocator.spawn(groupPinger(group), "group-pinger");
        ActorRef<Object> echo = allocator.spawn(Behaviors.<Object>receive((ctx, msg) -> {
            if (msg instanceof Ping p) p.replyTo().tell(p);
            return Behaviors.same();
        }), "echo");
        barePinger = allocator.spawn(barePinger(echo), "bare-pinger");
        spawner = allocator.spawn(spawner(), "spawner");
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        allocator.close();
    }

    private record Ping(ActorRef<Object> replyTo) {}

    /** Sends Count to the group, and the next when the answer comes, until the loop is done. */
    private static Behavior<Object> groupPinger(ActorRef<GroupActor.Command> group) {
        return Behaviors.setup(ctx -> {
            ActorRef<Reply<GroupActor.Counts>> self = ctx.getSelf().narrow();
            int[] left = new int[1];
            Loop[] loop = new Loop[1];
            return Behaviors.receive((c, msg) -> {
                if (msg instanceof Loop l) {
                    loop[0] = l;
                    left[0] = l.times();
                    group.tell(new GroupActor.Count(self));
                } else if (--left[0] > 0) {
                    group.tell(new GroupActor.Count(self));
                } else {
                    loop[0].done().complete(null);
                }
                return Behaviors.same();
            });
        });
    }

    private static Behavior<Object> barePinger(ActorRef<Object> echo) {
        return Behaviors.setup(ctx -> {
            Ping ping = new Ping(ctx.getSelf());
            int[] left = new int[1];
            Loop[] loop = new Loop[1];
            return Behaviors.receive((c, msg) -> {
                if (msg instanceof Loop l) {
                    loop[0] = l;
                    left[0] = l.times();
                    echo.tell(ping);
                } else if (--left[0] > 0) {
                    echo.tell(ping);
                } else {
                    loop[0].done().complete(null);
                }
                return Behaviors.same();
            });
        });
    }

    /** Spawns a child that stops at once, watches it, and spawns the next on its Terminated signal. */
    private static Behavior<Object> spawner() {
        return Behaviors.setup(ctx -> {
            int[] left = new int[1];
            Loop[] loop = new Loop[1];
            Behavior<Object> child = Behaviors.setup(c -> Behaviors.stopped());
            long[] n = new long[1];
            Runnable spawn = () -> ctx.watch(ctx.spawn(child, "c" + n[0]++));
            return Behaviors.receive(Object.class)
                    .onMessage(Loop.class, l -> {
                        loop[0] = l;
                        left[0] = l.times();
                        spawn.run();
                        return Behaviors.same();
                    })
                    .onSignal(akka.actor.typed.Terminated.class, t -> {
                        if (--left[0] > 0) spawn.run();
                        else loop[0].done().complete(null);
                        return Behaviors.same();
                    })
                    .build();
        });
    }

    private static void loop(ActorRef<Object> actor) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        actor.tell(new Loop(BATCH, done));
        done.join();
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void groupRoundTrip() {
        loop(groupPinger);
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void bareRoundTrip() {
        loop(barePinger);
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void spawnAndStop() {
        loop(spawner);
    }

    @Benchmark
    public Object plainThreadAskJoin() {
        return AskPattern.<GroupActor.Command, Reply<GroupActor.Counts>>ask(group, GroupActor.Count::new, TIMEOUT,
                allocator.system().scheduler()).toCompletableFuture().join();
    }
}
