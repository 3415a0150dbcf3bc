package org.blockyard.runtime.alloc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;

import akka.Done;
import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.RecipientRef;
import akka.actor.typed.javadsl.AskPattern;
import com.typesafe.config.Config;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.AllocatorStats;
import org.blockyard.api.alloc.BlockAllocator;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.FreeExtentPage;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.runtime.config.BlockyardConfig;

/**
 * The {@link BlockAllocator} service over the actors: each call is one ask to a file actor, or a short
 * chain of asks to group actors for the extent calls. It owns its {@link ActorSystem} and stops it on
 * {@link #close()}.
 */
public final class ActorBlockAllocator implements BlockAllocator, AutoCloseable {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private final AllocatorSettings settings;
    private final Geometry geometry;
    private final VolumeState volume;
    private final ActorSystem<AllocatorActor.Command> system;
    private final List<ActorRef<GroupActor.Command>> groups;
    private final Map<String, ActorRef<FileActor.Command>> files = new ConcurrentHashMap<>();
    private final AtomicLong nextTx = new AtomicLong();
    private final AtomicLong extentCursor = new AtomicLong(-1);

    private ActorBlockAllocator(AllocatorSettings settings, Config config, Consumer<BlockGroup> prepare) {
        this.settings = settings;
        this.geometry = settings.geometry();
        this.volume = new VolumeState(geometry);
        this.system = ActorSystem.create(AllocatorActor.create(settings, volume, prepare), "blockyard", config);
        this.groups = join(AskPattern.ask(system, AllocatorActor.Groups::new, TIMEOUT, system.scheduler()));
    }

    public static ActorBlockAllocator start(AllocatorSettings settings) {
        return new ActorBlockAllocator(settings, BlockyardConfig.load(), null);
    }

    public static ActorBlockAllocator start(AllocatorSettings settings, Config config) {
        return new ActorBlockAllocator(settings, config, null);
    }

    /** Starts over groups that {@code prepare} fills first (benchmarks of aged volumes, loaded images). */
    public static ActorBlockAllocator start(AllocatorSettings settings, Config config, Consumer<BlockGroup> prepare) {
        return new ActorBlockAllocator(settings, config, prepare);
    }

    private static <T> T join(CompletionStage<T> stage) {
        try {
            return stage.toCompletableFuture().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("allocator did not start", e);
        }
    }

    public ActorSystem<AllocatorActor.Command> system() {
        return system;
    }

    public VolumeState volume() {
        return volume;
    }

    public List<ActorRef<GroupActor.Command>> groupActors() {
        return groups;
    }

    /** The file actor of an open file, for load generators that message it directly. */
    public ActorRef<FileActor.Command> fileActor(String file) {
        ActorRef<FileActor.Command> ref = files.get(file);
        if (ref == null) throw new AllocationException.UnknownFile("file " + file + " was never opened");
        return ref;
    }

    @Override
    public Geometry geometry() {
        return geometry;
    }

    @Override
    public String policy() {
        return settings.policy().id();
    }

    /**
     * Runs a continuation on the thread that completed the ask. Scala's future-to-Java adapter makes even
     * the non-async {@code thenApply} asynchronous on the common pool, which on a 2-core machine is a new
     * thread per task; the continuations here only unwrap a {@link Reply}.
     */
    private static final java.util.concurrent.Executor SAME_THREAD = Runnable::run;

    /** An ask answered with a {@link Reply}: completes with its value, or fails with its error. */
    private <R, T> CompletionStage<T> ask(RecipientRef<R> to, Function<ActorRef<Reply<T>>, R> message) {
        return this.<R, Reply<T>>askPlain(to, message).thenCompose(r -> r.isOk()
                ? CompletableFuture.completedFuture(r.value()) : CompletableFuture.failedFuture(r.error()));
    }

    private <R, T> CompletionStage<T> askPlain(RecipientRef<R> to, Function<ActorRef<T>, R> message) {
        CompletableFuture<T> out = new CompletableFuture<>();
        AskPattern.<R, T>ask(to, message::apply, TIMEOUT, system.scheduler())
                .whenCompleteAsync((r, e) -> {
                    if (e != null) out.completeExceptionally(e);
                    else out.complete(r);
                }, SAME_THREAD);
        return out;
    }

    private static <T> CompletionStage<T> failed(AllocationException e) {
        return CompletableFuture.failedFuture(e);
    }

    /** The file's actor: cached when opened here, else looked up (files opened by actors directly). */
    private CompletionStage<ActorRef<FileActor.Command>> resolve(String file) {
        ActorRef<FileActor.Command> ref = files.get(file);
        if (ref != null) return CompletableFuture.completedFuture(ref);
        return this.<AllocatorActor.Command, ActorRef<FileActor.Command>>ask(system,
                r -> new AllocatorActor.Lookup(file, r)).thenApply(found -> {
                    files.put(file, found);
                    return found;
                });
    }

    // ---- files --------------------------------------------------------------------------------------

    @Override
    public CompletionStage<Void> open(String file) {
        return this.<AllocatorActor.Command, ActorRef<FileActor.Command>>ask(system,
                        r -> new AllocatorActor.Open(file, r))
                .thenAccept(ref -> files.put(file, ref));
    }

    @Override
    public CompletionStage<BlockRun> getBlocks(String file, long logicalBlock, int maxBlocks, boolean create) {
        return resolve(file).thenCompose(ref -> ask(ref, r -> new FileActor.GetBlocks(logicalBlock, maxBlocks, create, r)));
    }

    @Override
    public CompletionStage<Long> truncate(String file, long fromLogicalBlock) {
        return resolve(file).thenCompose(ref -> ask(ref, r -> new FileActor.Truncate(fromLogicalBlock, r)));
    }

    @Override
    public CompletionStage<Void> close(String file) {
        return resolve(file).thenCompose(ref -> this.<FileActor.Command, Boolean>ask(ref, FileActor.Close::new))
                .thenApply(last -> {
                    if (last) files.remove(file); // its actor stops; a later call looks the file up afresh
                    return null;
                });
    }

    /** Every block a file holds: mapped extents and its unused preallocation. */
    public CompletionStage<List<Extent>> heldExtents(String file) {
        return this.<AllocatorActor.Command, List<Extent>>ask(system, r -> new AllocatorActor.FileExtents(file, true, r));
    }

    @Override
    public CompletionStage<List<Extent>> fileExtents(String file) {
        return this.<AllocatorActor.Command, List<Extent>>ask(system, r -> new AllocatorActor.FileExtents(file, false, r));
    }

    // ---- extents ------------------------------------------------------------------------------------

    @Override
    public CompletionStage<List<Extent>> allocate(long wantBlocks, int unitBlocks, long maxExtentBlocks, long hint) {
        if (unitBlocks < 1)
            return failed(new AllocationException.InvalidRequest("allocation unit of " + unitBlocks + " blocks"));
        if (wantBlocks < 1 || wantBlocks % unitBlocks != 0)
            return failed(new AllocationException.InvalidRequest("want " + wantBlocks
                    + " blocks: it must be at least 1 and a multiple of the unit (" + unitBlocks + ")"));
        if (maxExtentBlocks < 0 || maxExtentBlocks > 0 && (maxExtentBlocks < unitBlocks || maxExtentBlocks % unitBlocks != 0))
            return failed(new AllocationException.InvalidRequest("maximum extent of " + maxExtentBlocks
                    + " blocks: 0 (no limit) or a multiple of the unit (" + unitBlocks + ")"));
        if (hint < -1 || hint >= geometry.totalBlocks())
            return failed(new AllocationException.OutOfRange("hint " + hint + " is outside the volume [0, "
                    + geometry.totalBlocks() + ")"));
        ExtentWalk walk = new ExtentWalk(volume, wantBlocks, unitBlocks, maxExtentBlocks, hint, extentCursor.get());
        CompletableFuture<List<Extent>> out = new CompletableFuture<>();
        new ExtentAllocation(walk, out).resume();
        return out;
    }

    /**
     * A loop that waits for one ask per turn without growing the stack: {@link #resume()} runs turns
     * while answers are at hand (an ask answered before its continuation was attached runs that
     * continuation inline, which would otherwise add frames per group) and returns as soon as a turn has
     * to wait; the answer's continuation resumes it on the answering thread.
     */
    private abstract static class AskLoop {
        private final java.util.concurrent.atomic.AtomicInteger wip = new java.util.concurrent.atomic.AtomicInteger();

        /** One turn: consume the last answer, and either finish or send the next ask with {@link #await}. */
        abstract void turn();

        final void resume() {
            if (wip.getAndIncrement() != 0) return;
            do {
                turn();
            } while (wip.decrementAndGet() != 0);
        }

        final <T> void await(CompletionStage<T> stage, java.util.function.BiConsumer<T, Throwable> onAnswer) {
            stage.whenComplete((v, e) -> {
                onAnswer.accept(v, e);
                resume();
            });
        }
    }

    /** One extent allocation: the walk's groups asked one at a time; on a fault, what was claimed goes back. */
    private final class ExtentAllocation extends AskLoop {
        private final ExtentWalk walk;
        private final CompletableFuture<List<Extent>> out;
        private final List<Extent> got = new ArrayList<>();
        private List<Extent> answer;
        private Throwable fault;
        private boolean waiting;

        ExtentAllocation(ExtentWalk walk, CompletableFuture<List<Extent>> out) {
            this.walk = walk;
            this.out = out;
        }

        @Override
        void turn() {
            if (waiting) {
                waiting = false;
                if (fault != null) {
                    giveBack(got);
                    out.completeExceptionally(fault);
                    return;
                }
                got.addAll(answer);
                walk.took(answer);
            }
            int g = walk.next();
            if (g < 0) {
                if (got.isEmpty()) {
                    out.completeExceptionally(new AllocationException.NoSpace("no free extent of "
                            + walk.unitBlocks() + " aligned block(s) for a request of " + walk.wantBlocks() + " blocks"));
                } else {
                    extentCursor.set(got.get(got.size() - 1).end());
                    out.complete(List.copyOf(got));
                }
                return;
            }
            BlockGroup.ExtentClaim claim = walk.claimFor(g);
            waiting = true;
            await(ActorBlockAllocator.this.<GroupActor.Command, List<Extent>>askPlain(groups.get(g),
                    r -> new GroupActor.ClaimExtents(claim, r)), (v, e) -> {
                answer = v;
                fault = e;
            });
        }
    }

    /** Returns claimed extents to their groups (a multi-group operation that failed half way). */
    private void giveBack(List<Extent> extents) {
        FileActor.splitByGroup(geometry, extents).forEach((g, list) -> {
            for (Extent e : list) groups.get(g).tell(new GroupActor.Unclaim(e));
        });
    }

    @Override
    public CompletionStage<Void> release(List<Extent> extents) {
        if (extents == null || extents.isEmpty()) return CompletableFuture.completedFuture(null);
        List<Extent> sorted = new ArrayList<>(extents);
        Collections.sort(sorted);
        for (int i = 0; i < sorted.size(); i++) {
            Extent e = sorted.get(i);
            if (e.end() > geometry.totalBlocks())
                return failed(new AllocationException.OutOfRange("extent " + e + " ends past the volume ("
                        + geometry.totalBlocks() + " blocks)"));
            if (i > 0 && sorted.get(i - 1).end() > e.start())
                return failed(new AllocationException.DoubleFree("extents " + sorted.get(i - 1) + " and " + e
                        + " overlap: the release would free blocks twice"));
        }
        Map<Integer, List<Extent>> byGroup = FileActor.splitByGroup(geometry, sorted);
        if (byGroup.size() == 1) {
            var only = byGroup.entrySet().iterator().next();
            return this.<GroupActor.Command, Done>ask(groups.get(only.getKey()),
                    r -> new GroupActor.Free(only.getValue(), r)).thenApply(d -> null);
        }
        long tx = nextTx.incrementAndGet();
        List<CompletableFuture<Reply<Done>>> prepares = new ArrayList<>();
        byGroup.forEach((g, list) -> prepares.add(this.<GroupActor.Command, Reply<Done>>askPlain(groups.get(g),
                r -> new GroupActor.PrepareFree(tx, list, r)).toCompletableFuture()));
        return CompletableFuture.allOf(prepares.toArray(CompletableFuture[]::new)).thenCompose(x -> {
            AllocationException bad = null;
            for (CompletableFuture<Reply<Done>> p : prepares) if (!p.join().isOk() && bad == null) bad = p.join().error();
            if (bad != null) {
                for (int g : byGroup.keySet()) groups.get(g).tell(new GroupActor.AbortFree(tx));
                return failed(bad);
            }
            List<CompletableFuture<Done>> commits = new ArrayList<>();
            for (int g : byGroup.keySet())
                commits.add(this.<GroupActor.Command, Done>ask(groups.get(g), r -> new GroupActor.CommitFree(tx, r))
                        .toCompletableFuture());
            return CompletableFuture.allOf(commits.toArray(CompletableFuture[]::new)).thenApply(y -> (Void) null);
        });
    }

    @Override
    public CompletionStage<FreeExtentPage> freeExtents(long fromBlock, long toBlock, int maxCount) {
        if (fromBlock < 0 || toBlock > geometry.totalBlocks() || fromBlock > toBlock)
            return failed(new AllocationException.OutOfRange("range [" + fromBlock + ", " + toBlock
                    + ") is not inside the volume [0, " + geometry.totalBlocks() + ")"));
        if (maxCount < 1)
            return failed(new AllocationException.InvalidRequest("at most " + maxCount + " extents: ask for at least 1"));
        List<Extent> out = new ArrayList<>();
        if (fromBlock == toBlock) return CompletableFuture.completedFuture(new FreeExtentPage(out, -1));
        return collectRuns(geometry.groupOf(fromBlock), fromBlock, toBlock, maxCount, out)
                .thenApply(full -> {
                    long next = full && out.get(out.size() - 1).end() < toBlock ? out.get(out.size() - 1).end() : -1;
                    return new FreeExtentPage(out, next);
                });
    }

    /** Collects free runs group by group, merging runs that touch across a group boundary. */
    private CompletionStage<Boolean> collectRuns(int g, long from, long to, int max, List<Extent> out) {
        if (g >= geometry.groups() || geometry.groupStart(g) >= to || out.size() >= max)
            return CompletableFuture.completedFuture(out.size() >= max);
        return this.<GroupActor.Command, List<Extent>>askPlain(groups.get(g),
                        r -> new GroupActor.FreeRuns(from, to, (int) Math.min(Integer.MAX_VALUE, max - out.size() + 1L), r))
                .thenCompose(runs -> {
                    for (Extent e : runs) {
                        int last = out.size() - 1;
                        if (last >= 0 && out.get(last).end() == e.start())
                            out.set(last, new Extent(out.get(last).start(), out.get(last).blocks() + e.blocks()));
                        else if (out.size() < max) out.add(e);
                        else return CompletableFuture.completedFuture(true);
                    }
                    return collectRuns(g + 1, from, to, max, out);
                });
    }

    @Override
    public CompletionStage<Long> freeBlocks() {
        return inspectAll().thenApply(snaps -> {
            long n = 0;
            for (GroupActor.Snapshot s : snaps) n += s.freeBlocks();
            return n;
        });
    }

    /**
     * From the sums the group actors keep ({@link VolumeState#fragmentationScore()}): no message, no
     * walk. It reflects every call whose answer the caller has received.
     */
    @Override
    public CompletionStage<Double> fragmentationScore() {
        return CompletableFuture.completedFuture(volume.fragmentationScore());
    }

    @Override
    public CompletionStage<AllocatorStats> stats() {
        return inspectAll().thenApply(snaps -> {
            long free = 0;
            int windows = 0, searches = 0;
            for (GroupActor.Snapshot s : snaps) {
                free += s.freeBlocks();
                windows += s.windows().size();
                searches += s.runningSearches();
            }
            return new AllocatorStats(free, geometry.dataBlocks(), windows, searches, volume.messages(),
                    volume.searchSlices(), volume.stashed());
        });
    }

    /** A snapshot of every group, in group order (each consistent in itself). */
    public CompletionStage<List<GroupActor.Snapshot>> inspectAll() {
        List<CompletableFuture<GroupActor.Snapshot>> all = new ArrayList<>();
        for (ActorRef<GroupActor.Command> g : groups)
            all.add(this.<GroupActor.Command, GroupActor.Snapshot>askPlain(g, GroupActor.Inspect::new).toCompletableFuture());
        return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).thenApply(x -> {
            List<GroupActor.Snapshot> out = new ArrayList<>();
            for (CompletableFuture<GroupActor.Snapshot> f : all) out.add(f.join());
            return out;
        });
    }

    @Override
    public void close() {
        system.terminate();
        try {
            system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("actor system did not stop", e);
        }
    }
}
