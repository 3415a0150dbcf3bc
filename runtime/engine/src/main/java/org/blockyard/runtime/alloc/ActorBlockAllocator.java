package org.blockyard.runtime.alloc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

import akka.Done;
import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.Behavior;
import akka.actor.typed.Props;
import akka.actor.typed.RecipientRef;
import akka.actor.typed.javadsl.AskPattern;
import com.typesafe.config.Config;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.AllocationPolicyFactory;
import org.blockyard.api.alloc.AllocationSession;
import org.blockyard.api.alloc.AllocatorStats;
import org.blockyard.api.alloc.BlockAllocator;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.FreeExtentPage;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.api.alloc.MapRequest;
import org.blockyard.runtime.config.BlockyardConfig;

/**
 * The {@link BlockAllocator} service over the actors: a file call is one ask to the file's shard (or its
 * own actor), an extent call a short chain of asks to group actors. It owns its {@link ActorSystem} and stops it on
 * {@link #close()}.
 */
public final class ActorBlockAllocator implements BlockAllocator, AutoCloseable {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    /** How long sessions borrow nothing after an allocation found the volume full. */
    private static final Duration LEAN = Duration.ofSeconds(1);

    private final AllocatorSettings settings;
    private final Geometry geometry;
    private final VolumeState volume;
    private final ActorSystem<AllocatorActor.Command> system;
    private final List<ActorRef<GroupActor.Command>> groups;
    private final List<ActorRef<FileShard.Command>> shards;
    private final Map<String, FileHandle> files = new ConcurrentHashMap<>();
    private final AtomicLong nextTx = new AtomicLong();
    private final AtomicLong extentCursor = new AtomicLong(-1);
    private volatile boolean closed;
    private final PolicyRegistry policies;
    private final long policyStallLimitNanos;
    private final Object policyLock = new Object();
    private volatile String activePolicy;
    private volatile String wantedPolicy; // the name last selected: it comes back when its plugin does
    /** Calls that take several asks (extent allocations, releases, enumerations) not answered yet. */
    private final java.util.Set<CompletableFuture<?>> running = ConcurrentHashMap.newKeySet();
    /** Asks being sent right now; see {@link #close()}. */
    private final AtomicLong sending = new AtomicLong();
    private final Loans loans;
    private final akka.actor.Cancellable sweeper;

    private ActorBlockAllocator(AllocatorSettings settings, Config config, Consumer<BlockGroup> prepare) {
        this.settings = settings;
        this.geometry = settings.geometry();
        this.volume = new VolumeState(geometry);
        this.system = ActorSystem.create(AllocatorActor.create(settings, volume, prepare, hosting(config)),
                "blockyard", config);
        this.groups = join(AskPattern.ask(system, AllocatorActor.Groups::new, TIMEOUT, system.scheduler()));
        this.shards = join(AskPattern.ask(system, AllocatorActor.Shards::new, TIMEOUT, system.scheduler()));
        this.policies = PolicyRegistry.fromConfig(config);
        this.policyStallLimitNanos = config.getDuration("blockyard.alloc.policy-stall-limit").toNanos();
        this.activePolicy = settings.policy().id();
        this.wantedPolicy = activePolicy;
        this.loans = new Loans(config);
        this.sweeper = system.scheduler().scheduleWithFixedDelay(loans.sweepEvery(), loans.sweepEvery(), loans::sweep,
                system.executionContext());
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

    /** {@code blockyard.alloc.file-shards} (0: two per core) and {@code own-actor-after-blocks}. */
    static AllocatorActor.FileHosting hosting(Config config) {
        int shards = config.getInt("blockyard.alloc.file-shards");
        long after = config.getLong("blockyard.alloc.own-actor-after-blocks");
        return new AllocatorActor.FileHosting(shards > 0 ? shards : AllocatorActor.FileHosting.defaults().shards(), after);
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

    /**
     * Spawns {@code behavior} under the allocator's root actor, the one owner of the actor system (nothing
     * else creates actors at the top): a {@code FileStore}'s queue, a benchmark's load clients.
     */
    public <T> ActorRef<T> spawn(Behavior<T> behavior, String name) {
        return spawn(behavior, name, Props.empty());
    }

    /** As {@link #spawn(Behavior, String)}, with {@code props}: a dispatcher of its own, say. */
    public <T> ActorRef<T> spawn(Behavior<T> behavior, String name, Props props) {
        return join(AskPattern.<AllocatorActor.Command, ActorRef<T>>ask(system,
                r -> new AllocatorActor.Spawn<>(behavior, name, props, r), TIMEOUT, system.scheduler()));
    }

    public VolumeState volume() {
        return volume;
    }

    public List<ActorRef<GroupActor.Command>> groupActors() {
        return groups;
    }

    /** The file shards, in order; {@link #shardOf} says which one keeps a file. */
    public List<ActorRef<FileShard.Command>> fileShards() {
        return shards;
    }

    /** The shard that keeps {@code file}: where its {@code FileShard.Open} goes. */
    public ActorRef<FileShard.Command> shardOf(String file) {
        return shards.get(FileShard.shardOf(file, shards.size()));
    }

    /** The handle of a file opened through this allocator, for load generators that message it directly. */
    public FileHandle fileHandle(String file) {
        FileHandle h = files.get(file);
        if (h == null) throw new AllocationException.UnknownFile("file " + file + " is not open here");
        return h;
    }

    @Override
    public Geometry geometry() {
        return geometry;
    }

    @Override
    public String policy() {
        return activePolicy;
    }

    // ---- policies: selection, plugins, faults ---------------------------------------------------------

    /**
     * The outcome of a policy selection: {@code active} runs now; {@code fellBack} when {@code requested} was
     * not available; {@code pauseNanos}, how long the allocator actor spent telling every group and open
     * file (each switches at its next message boundary, in a handful of nanoseconds).
     */
    public record PolicySwitch(String requested, String active, boolean fellBack, long pauseNanos) {}

    /** The policies this allocator can run (built-in and registered plugins), with their tunables. */
    public PolicyRegistry policies() {
        return policies;
    }

    /** {@code no-reservation [reservation]}: the registered policies, the active one in brackets. */
    public String policyListing() {
        return policies.listing(activePolicy);
    }

    /**
     * Selects policy {@code name} (an id or alias). Every group and file actor switches at its next
     * message boundary: a request in progress finishes under the policy it started with, and windows and
     * preallocations made under the old policy are given back; extents already allocated stay where they
     * are. A name that is not available (not installed, or retired after a fault) selects the built-in
     * default and says so; the name is remembered, and when a plugin of that id registers it becomes
     * active. The stage completes once every actor has been told.
     */
    public CompletionStage<PolicySwitch> setPolicy(String name) {
        if (closed) return failed(closedError());
        synchronized (policyLock) {
            PolicyRegistry.Selection s = policies.select(name);
            wantedPolicy = s.fellBack() ? (name == null ? "" : name.trim().toLowerCase(java.util.Locale.ROOT)) : s.id();
            return switchTo(s.id()).thenApply(r -> new PolicySwitch(name, s.id(), s.fellBack(), r));
        }
    }

    /** Sets a tunable of policy {@code id}; when it is active, it is rebuilt with the new value and switched to. */
    public CompletionStage<Void> setPolicyTunable(String id, String tunable, long value) {
        try {
            policies.setTunable(id, tunable, value);
        } catch (AllocationException e) {
            return failed(e);
        }
        synchronized (policyLock) {
            if (!id.equals(activePolicy)) return CompletableFuture.completedFuture(null);
            return switchTo(id).thenApply(x -> null);
        }
    }

    /**
     * A plugin's policy arrived (its bundle started): it can be selected from now on, and becomes active
     * if it is the one last selected. A duplicate id is refused with IllegalArgumentException.
     */
    public void registerPolicy(AllocationPolicyFactory factory) {
        policies.register(factory);
        String id = factory.descriptor().id();
        synchronized (policyLock) {
            if (id.equals(wantedPolicy) && !id.equals(activePolicy) && !closed) switchTo(id);
        }
    }

    /**
     * A plugin's policy is going away (its bundle stops): if it is active, every actor falls back to the
     * built-in default first, logged with both names; the selection is remembered for its return.
     */
    public void unregisterPolicy(String id) {
        synchronized (policyLock) {
            if (id.equals(activePolicy) && !closed) {
                system.log().warn("allocation policy {} is going away; switching to the default, {}", id,
                        policies.defaultId());
                switchTo(policies.defaultId());
            }
        }
        policies.unregister(id);
    }

    /**
     * Builds {@code id} and tells the actors; a plugin's policy is guarded by the built-in default. Holds
     * policyLock. Answers how long the allocator actor took to tell everyone.
     */
    private CompletionStage<Long> switchTo(String id) {
        AllocationPolicy p;
        try {
            p = policies.build(id, geometry);
            if (!policies.isBuiltIn(id))
                p = new GuardedPolicy(p, policies.build(policies.defaultId(), geometry), policyStallLimitNanos,
                        this::policyFailed);
        } catch (AllocationException e) {
            return failed(e);
        }
        activePolicy = id;
        AllocationPolicy use = p;
        // Loans were cut under the policy before: they go back once every group uses the new one.
        return this.<AllocatorActor.Command, Long>askPlain(system, r -> new AllocatorActor.UsePolicy(use, r))
                .thenCompose(nanos -> loans.reclaimAll().thenApply(back -> nanos));
    }

    /** A plugin's policy threw or answered the impossible: retire it for the built-in default. */
    private void policyFailed(String id, String reason) {
        system.log().error("allocation policy {} failed ({}); it is retired and the default, {}, takes over", id,
                reason, policies.defaultId());
        policies.markFailed(id, reason);
        synchronized (policyLock) {
            if (id.equals(activePolicy) && !closed) switchTo(policies.defaultId());
        }
    }

    /**
     * Runs a continuation on the thread that completed the ask. Scala's future-to-Java adapter makes even
     * the non-async {@code thenApply} asynchronous on the common pool, which on a 2-core machine is a new
     * thread per task; the continuations here only unwrap a {@link Reply}.
     */
    private static final java.util.concurrent.Executor SAME_THREAD = Runnable::run;

    /** An ask answered with a {@link Reply}: completes with its value, or fails with its error. */
    private <R, T> CompletionStage<T> ask(RecipientRef<R> to, Function<ActorRef<Reply<T>>, R> message) {
        return unwrapped(this.<R, Reply<T>>askPlain(to, message));
    }

    private static <T> CompletionStage<T> unwrapped(CompletionStage<Reply<T>> reply) {
        return reply.thenCompose(r -> r.isOk()
                ? CompletableFuture.completedFuture(r.value()) : CompletableFuture.failedFuture(r.error()));
    }

    private <R, T> CompletionStage<T> askPlain(RecipientRef<R> to, Function<ActorRef<T>, R> message) {
        return sent(() -> AskPattern.<R, T>ask(to, message::apply, TIMEOUT, system.scheduler()));
    }

    /**
     * The ask {@code send} sends, with its failure always typed: {@code Closed} once the allocator is closing,
     * {@code Failed} when no answer came within the timeout (an actor that stopped).
     */
    private <T> CompletionStage<T> sent(Supplier<CompletionStage<T>> send) {
        sending.incrementAndGet(); // before the check: close() waits for every send that passed it
        try {
            if (closed) return failed(closedError());
            CompletableFuture<T> out = new CompletableFuture<>();
            send.get()
                    .whenCompleteAsync((r, e) -> {
                        if (e != null) out.completeExceptionally(typed(e));
                        else out.complete(r);
                    }, SAME_THREAD);
            return out;
        } catch (RuntimeException e) { // the actor system is already down
            return failed(typed(e));
        } finally {
            sending.decrementAndGet();
        }
    }

    private AllocationException typed(Throwable e) {
        if (e instanceof java.util.concurrent.CompletionException && e.getCause() != null) e = e.getCause();
        if (e instanceof AllocationException a) return a;
        if (closed) return closedError();
        return new AllocationException.Failed("no answer from the allocator's actors within " + TIMEOUT.toSeconds()
                + " s (" + e + "); see the log for an actor that failed");
    }

    /** Keeps {@code f} in {@link #running} until it completes; {@link #close()} answers what is left. */
    private <T> CompletableFuture<T> tracked(CompletableFuture<T> f) {
        running.add(f);
        f.whenComplete((v, e) -> running.remove(f));
        return f;
    }

    private static AllocationException closedError() {
        return new AllocationException.Closed("the allocator is closed");
    }

    private static <T> CompletionStage<T> failed(AllocationException e) {
        return CompletableFuture.failedFuture(e);
    }

    /** The file's handle: cached when opened here, else looked up (files opened by actors directly). */
    private CompletionStage<FileHandle> resolve(String file) {
        FileHandle h = file == null ? null : files.get(file);
        if (h != null) return CompletableFuture.completedFuture(h);
        if (file == null) return failed(new AllocationException.InvalidRequest("a file needs a non-empty name"));
        return this.<FileShard.Command, FileHandle>ask(shardOf(file), r -> new FileShard.Lookup(file, r))
                .thenApply(found -> {
                    files.put(file, found);
                    return found;
                });
    }

    /** One request to a file through its handle, answered with a {@link Reply}. */
    private <T> CompletionStage<T> askFile(String file, Function<ActorRef<Reply<T>>, FileActor.Command> request) {
        return resolve(file).thenCompose(h -> unwrapped(this.<Reply<T>>sent(
                () -> h.ask(request, TIMEOUT, system.scheduler()))));
    }

    // ---- files --------------------------------------------------------------------------------------

    @Override
    public CompletionStage<Void> open(String file) {
        if (file == null) return failed(new AllocationException.InvalidRequest("a file needs a non-empty name"));
        return this.<FileShard.Command, FileHandle>ask(shardOf(file), r -> new FileShard.Open(file, r))
                .thenAccept(h -> files.put(file, h));
    }

    @Override
    public CompletionStage<BlockRun> getBlocks(String file, long logicalBlock, int maxBlocks, boolean create) {
        return askFile(file, r -> new FileActor.GetBlocks(logicalBlock, maxBlocks, create, r));
    }

    /** One message to the file's host for the whole batch, and one answer. */
    @Override
    public CompletionStage<List<BlockRun>> getBlocks(String file, List<MapRequest> requests) {
        if (requests == null || requests.size() > MAX_BATCH) return failed(badBatch(requests));
        if (requests.isEmpty()) return CompletableFuture.completedFuture(List.of());
        List<MapRequest> copy = new ArrayList<>(requests); // the caller may reuse its list; nulls are refused in order
        return askFile(file, r -> new FileActor.GetBlocksBatch(copy, r));
    }

    private static AllocationException badBatch(List<MapRequest> requests) {
        return new AllocationException.InvalidRequest("a batch holds 0 to " + MAX_BATCH + " requests, not "
                + (requests == null ? "null" : requests.size()));
    }

    /** One message to the file's shard for the open, the batch and the close, and one answer. */
    @Override
    public CompletionStage<List<BlockRun>> writeFile(String file, List<MapRequest> requests) {
        if (file == null) return failed(new AllocationException.InvalidRequest("a file needs a non-empty name"));
        if (requests == null || requests.size() > MAX_BATCH) return failed(badBatch(requests));
        List<MapRequest> copy = new ArrayList<>(requests);
        return this.<FileShard.Command, List<BlockRun>>ask(shardOf(file), r -> new FileShard.WriteFile(file, copy, r));
    }

    @Override
    public CompletionStage<Void> delete(String file) {
        if (file == null) return failed(new AllocationException.InvalidRequest("a file needs a non-empty name"));
        return this.<FileShard.Command, Void>ask(shardOf(file), r -> new FileShard.Delete(file, r));
    }

    @Override
    public CompletionStage<Long> truncate(String file, long fromLogicalBlock) {
        return askFile(file, r -> new FileActor.Truncate(fromLogicalBlock, r));
    }

    @Override
    public CompletionStage<Long> markWritten(String file, long logicalBlock, long blocks) {
        return askFile(file, r -> new FileActor.MarkWritten(logicalBlock, blocks, r));
    }

    @Override
    public CompletionStage<Long> discardUnwritten(String file, long logicalBlock, long blocks) {
        return askFile(file, r -> new FileActor.Discard(logicalBlock, blocks, false, r));
    }

    @Override
    public CompletionStage<Long> punchHole(String file, long logicalBlock, long blocks) {
        return askFile(file, r -> new FileActor.Discard(logicalBlock, blocks, true, r));
    }

    /** Has every open file give back its unused preallocation; answers the blocks freed. */
    public CompletionStage<Long> dropPreallocations() {
        return this.<AllocatorActor.Command, Long>askPlain(system, AllocatorActor.DropPreallocations::new);
    }

    @Override
    public CompletionStage<Void> close(String file) {
        return this.<Boolean>askFile(file, FileActor.Close::new).thenApply(last -> {
            if (last) files.remove(file); // a later call looks the file up afresh
            return null;
        });
    }

    /** Every block a file holds: mapped extents and its unused preallocation. */
    public CompletionStage<List<Extent>> heldExtents(String file) {
        if (file == null) return failed(new AllocationException.InvalidRequest("a file needs a non-empty name"));
        return this.<FileShard.Command, List<Extent>>ask(shardOf(file), r -> new FileShard.FileExtents(file, true, r));
    }

    @Override
    public CompletionStage<List<Extent>> fileExtents(String file) {
        if (file == null) return failed(new AllocationException.InvalidRequest("a file needs a non-empty name"));
        return this.<FileShard.Command, List<Extent>>ask(shardOf(file), r -> new FileShard.FileExtents(file, false, r));
    }

    // ---- extents ------------------------------------------------------------------------------------

    /**
     * A session with loans ({@link LoanSession}) for the calling thread; after {@link #close()}, one that refuses
     * every call with {@code Closed}.
     */
    @Override
    public AllocationSession openSession() {
        if (closed) return AllocationSession.forwarding(this);
        long cursor = extentCursor.get();
        return loans.open(this, geometry.groupOf(Math.max(0, Math.min(cursor, geometry.totalBlocks() - 1))));
    }

    /** The sessions' loans given back (a test's or a check's quiet point); completes with the blocks freed. */
    public CompletionStage<Long> reclaimLoans() {
        return loans.reclaimAll();
    }

    /** The open sessions, for checks. */
    List<LoanSession> sessions() {
        return loans.sessions();
    }

    @Override
    public CompletionStage<List<Extent>> allocate(long wantBlocks, int unitBlocks, long maxExtentBlocks, long hint) {
        if (closed) return failed(closedError());
        try {
            ExtentChecks.allocate(geometry, wantBlocks, unitBlocks, maxExtentBlocks, hint);
        } catch (AllocationException e) {
            return failed(e);
        }
        CompletableFuture<List<Extent>> out = tracked(new CompletableFuture<>());
        new ExtentAllocation(wantBlocks, unitBlocks, maxExtentBlocks, hint, out).resume();
        return out;
    }

    /**
     * A loop that waits for one ask per turn without growing the stack: {@link #resume()} runs turns
     * while answers are at hand (an ask answered before its continuation was attached runs that
     * continuation inline, which would otherwise add frames per group) and returns as soon as a turn has
     * to wait; the answer's continuation resumes it on the answering thread.
     */
    private abstract class AskLoop<V> {
        private final AtomicInteger wip = new AtomicInteger();
        private boolean waiting;
        private Reply<V> reply;
        private Throwable fault;

        /** One turn: take the last answer, and either finish or send the next ask with {@link #await}. */
        abstract void turn();

        final void resume() {
            if (wip.getAndIncrement() != 0) return;
            do {
                turn();
            } while (wip.decrementAndGet() != 0);
        }

        /** Sends the turn's ask; the next turn takes its answer. The turn returns right after. */
        final void await(CompletionStage<Reply<V>> stage) {
            waiting = true;
            stage.whenComplete((v, e) -> {
                reply = v;
                fault = e;
                resume();
            });
        }

        /** Whether an answer is there to take (once per ask). */
        final boolean answered() {
            boolean w = waiting;
            waiting = false;
            return w;
        }

        /** The last answer's value; throws the typed error it failed with. */
        final V answer() {
            if (fault != null) throw typed(fault);
            return reply.get();
        }
    }

    /**
     * One extent allocation: the walk's groups asked one at a time. When the walk ends short, the other
     * open files' unused preallocations are given back and the walk runs once more before a NoSpace (as
     * ext4 discards its preallocations before ENOSPC). On a fault, what was claimed goes back.
     */
    private final class ExtentAllocation extends AskLoop<List<Extent>> {
        private final long wantBlocks;
        private final int unitBlocks;
        private final long maxExtentBlocks;
        private final long hint;
        private final CompletableFuture<List<Extent>> out;
        private final List<Extent> got = new ArrayList<>();
        private ExtentWalk walk;
        private boolean retried;

        ExtentAllocation(long wantBlocks, int unitBlocks, long maxExtentBlocks, long hint,
                         CompletableFuture<List<Extent>> out) {
            this.wantBlocks = wantBlocks;
            this.unitBlocks = unitBlocks;
            this.maxExtentBlocks = maxExtentBlocks;
            this.hint = hint;
            this.out = out;
            this.walk = new ExtentWalk(volume, wantBlocks, unitBlocks, maxExtentBlocks, hint, extentCursor.get());
        }

        @Override
        void turn() {
            if (answered()) {
                try {
                    List<Extent> claimed = answer();
                    got.addAll(claimed);
                    walk.took(claimed);
                } catch (AllocationException e) {
                    fail(e);
                    return;
                }
            }
            if (closed) {
                fail(closedError());
                return;
            }
            int g = walk.next();
            if (g >= 0) {
                BlockGroup.ExtentClaim claim = walk.claimFor(g);
                await(ActorBlockAllocator.this.<GroupActor.Command, Reply<List<Extent>>>askPlain(groups.get(g),
                        r -> new GroupActor.ClaimExtents(claim, r)));
                return;
            }
            if (walk.remaining() > 0 && !retried) {
                retried = true;
                await(dropPreallocations().thenCompose(dropped -> loans.reclaimForSpace(LEAN).thenApply(lent -> dropped + lent))
                        .thenApply(freed -> {
                    // Walked again even when this call freed nothing: a concurrent one may just have given
                    // the same loans back, after this walk had passed their groups.
                    walk = new ExtentWalk(volume, walk.remaining(), unitBlocks, maxExtentBlocks, hint,
                            extentCursor.get());
                    return Reply.ok(List.of());
                }));
                return;
            }
            if (got.isEmpty()) {
                out.completeExceptionally(new AllocationException.NoSpace("no free extent of " + unitBlocks
                        + " aligned block(s) for a request of " + wantBlocks + " blocks"));
            } else {
                extentCursor.set(got.get(got.size() - 1).end());
                out.complete(List.copyOf(got));
            }
        }

        private void fail(AllocationException error) {
            giveBack(got);
            out.completeExceptionally(error);
        }
    }

    /** Returns claimed extents to their groups (a multi-group operation that failed half way). */
    private void giveBack(List<Extent> extents) {
        ExtentChecks.splitByGroup(geometry, extents).forEach((g, list) -> {
            for (Extent e : list) groups.get(g).tell(new GroupFileProtocol.Unclaim(e));
        });
    }

    @Override
    public CompletionStage<Void> release(List<Extent> extents) {
        if (closed) return failed(closedError());
        if (extents == null || extents.isEmpty()) return CompletableFuture.completedFuture(null);
        List<Extent> sorted;
        try {
            sorted = ExtentChecks.release(geometry, extents);
        } catch (AllocationException e) {
            return failed(e);
        }
        Map<Integer, List<Extent>> byGroup = ExtentChecks.splitByGroup(geometry, sorted);
        if (byGroup.size() == 1) {
            var only = byGroup.entrySet().iterator().next();
            return this.<GroupActor.Command, Done>ask(groups.get(only.getKey()),
                    r -> new GroupActor.Free(only.getValue(), r)).thenApply(d -> null);
        }
        long tx = nextTx.incrementAndGet();
        List<CompletableFuture<GroupFileProtocol.Freed>> prepares = new ArrayList<>();
        byGroup.forEach((g, list) -> prepares.add(this.<GroupActor.Command, GroupFileProtocol.Freed>askPlain(groups.get(g),
                r -> new GroupFileProtocol.PrepareFree(tx, list, r)).toCompletableFuture()));
        CompletableFuture<Void> out = tracked(new CompletableFuture<>());
        CompletableFuture.allOf(prepares.toArray(CompletableFuture[]::new)).whenComplete((x, askError) -> {
            AllocationException bad = askError != null ? typed(askError) : null;
            for (CompletableFuture<GroupFileProtocol.Freed> p : prepares)
                if (bad == null && !p.join().reply().isOk()) bad = p.join().reply().error();
            if (bad != null) {
                // Whatever was prepared is let go; a group that never answered lets go on its own, by expiry.
                for (int g : byGroup.keySet()) groups.get(g).tell(new GroupFileProtocol.AbortFree(tx));
                out.completeExceptionally(bad);
                return;
            }
            List<CompletableFuture<Done>> commits = new ArrayList<>();
            for (int g : byGroup.keySet())
                commits.add(this.<GroupActor.Command, GroupFileProtocol.Freed>askPlain(groups.get(g),
                        r -> new GroupFileProtocol.CommitFree(tx, r)).thenCompose(f -> f.reply().isOk()
                        ? CompletableFuture.completedFuture(Done.getInstance())
                        : CompletableFuture.<Done>failedFuture(f.reply().error())).toCompletableFuture());
            CompletableFuture.allOf(commits.toArray(CompletableFuture[]::new)).whenComplete((y, e) -> {
                if (e == null) out.complete(null);
                else out.completeExceptionally(typed(e));
            });
        });
        return out;
    }

    @Override
    public CompletionStage<FreeExtentPage> freeExtents(long fromBlock, long toBlock, int maxCount) {
        if (closed) return failed(closedError());
        try {
            ExtentChecks.freeExtents(geometry, fromBlock, toBlock, maxCount);
        } catch (AllocationException e) {
            return failed(e);
        }
        if (fromBlock == toBlock) return CompletableFuture.completedFuture(new FreeExtentPage(List.of(), -1));
        CompletableFuture<FreeExtentPage> out = tracked(new CompletableFuture<>());
        new FreeRunCollection(fromBlock, toBlock, maxCount, out).resume();
        return out;
    }

    /** A {@link FreeRunPage} filled by asking the groups one at a time. */
    private final class FreeRunCollection extends AskLoop<List<Extent>> {
        private final long from;
        private final long to;
        private final FreeRunPage page;
        private final CompletableFuture<FreeExtentPage> out;
        private int group;

        FreeRunCollection(long from, long to, int max, CompletableFuture<FreeExtentPage> out) {
            this.from = from;
            this.to = to;
            this.page = new FreeRunPage(to, max);
            this.out = out;
            this.group = geometry.groupOf(from);
        }

        @Override
        void turn() {
            if (answered()) {
                try {
                    page.add(answer());
                } catch (AllocationException e) {
                    out.completeExceptionally(e);
                    return;
                }
                group++;
            }
            if (!page.full() && group < geometry.groups() && geometry.groupStart(group) < to) {
                int g = group, ask = page.wanted();
                await(ActorBlockAllocator.this.<GroupActor.Command, Reply<List<Extent>>>askPlain(groups.get(g),
                        r -> new GroupActor.FreeRuns(from, to, ask, r)));
                return;
            }
            out.complete(page.page());
        }
    }

    /** Free blocks from the counts every group publishes: no message, O(cores) at any volume size. */
    @Override
    public CompletionStage<Long> freeBlocks() {
        if (closed) return failed(closedError());
        return CompletableFuture.completedFuture(volume.totalFreeBlocks());
    }

    /**
     * From the sums the group actors keep ({@link VolumeState#fragmentationScore()}): no message, no
     * walk. It reflects every call whose answer the caller has received.
     */
    @Override
    public CompletionStage<Double> fragmentationScore() {
        if (closed) return failed(closedError());
        return CompletableFuture.completedFuture(volume.fragmentationScore());
    }

    @Override
    public CompletionStage<AllocatorStats> stats() {
        return askEveryGroup(GroupActor.Count::new).thenApply(counts -> {
            int windows = 0, searches = 0;
            for (GroupActor.Counts c : counts) {
                windows += c.windows();
                searches += c.runningSearches();
            }
            return new AllocatorStats(volume.totalFreeBlocks(), geometry.dataBlocks(), windows, searches,
                    volume.messages(), volume.searchSlices(), volume.stashed(), volume.blocksOnLoan(), loans.count());
        });
    }

    /** A snapshot of every group, in group order (each consistent in itself), bitmaps included: for checks. */
    public CompletionStage<List<GroupActor.Snapshot>> inspectAll() {
        return askEveryGroup(GroupActor.Inspect::new);
    }

    /** One ask to every group at once; the answers in group order. */
    private <T> CompletionStage<List<T>> askEveryGroup(Function<ActorRef<Reply<T>>, GroupActor.Command> message) {
        List<CompletableFuture<T>> all = new ArrayList<>(groups.size());
        for (ActorRef<GroupActor.Command> g : groups)
            all.add(this.<GroupActor.Command, T>ask(g, message).toCompletableFuture());
        return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).thenApply(x -> {
            List<T> out = new ArrayList<>(all.size());
            for (CompletableFuture<T> f : all) out.add(f.join());
            return out;
        });
    }

    /**
     * Closes the allocator. Calls made from now on fail with {@link AllocationException.Closed}. Every call
     * already sent is answered: once no ask is half sent, every file and group actor is told to shut down,
     * in mailbox order behind what was sent before, and answers what it holds (the request in progress,
     * waiting ones, searches in slices) and everything after with {@code Closed}; then the actor system stops,
     * and a call of several asks that is still waiting for one (its answer was lost with the actors) is
     * answered with {@code Closed} too.
     */
    @Override
    public void close() {
        if (closed) return;
        closed = true;
        sweeper.cancel();
        loans.shutdown();
        while (sending.get() != 0) Thread.onSpinWait();
        try {
            AskPattern.<AllocatorActor.Command, Done>ask(system, AllocatorActor.Shutdown::new, TIMEOUT, system.scheduler())
                    .toCompletableFuture().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            List<ActorRef<FileActor.Command>> live = new ArrayList<>();
            List<CompletableFuture<List<ActorRef<FileActor.Command>>>> shardAcks = new ArrayList<>();
            for (ActorRef<FileShard.Command> f : shards)
                shardAcks.add(AskPattern.<FileShard.Command, List<ActorRef<FileActor.Command>>>ask(f,
                        FileShard.Shutdown::new, TIMEOUT, system.scheduler()).toCompletableFuture());
            for (CompletableFuture<List<ActorRef<FileActor.Command>>> a : shardAcks)
                live.addAll(a.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS));
            List<CompletableFuture<Done>> acks = new ArrayList<>(groups.size() + live.size());
            for (ActorRef<FileActor.Command> f : live)
                acks.add(AskPattern.<FileActor.Command, Done>ask(f, FileActor.Shutdown::new, TIMEOUT, system.scheduler())
                        .toCompletableFuture());
            for (ActorRef<GroupActor.Command> g : groups)
                acks.add(AskPattern.<GroupActor.Command, Done>ask(g, GroupActor.Shutdown::new, TIMEOUT, system.scheduler())
                        .toCompletableFuture());
            CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new)).get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            system.log().warn("not every actor acknowledged the shutdown: {}", e.toString());
        }
        system.terminate();
        try {
            system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("actor system did not stop", e);
        } finally {
            // A call of several asks whose next answer was lost with the actors still gets one.
            for (CompletableFuture<?> f : running) f.completeExceptionally(closedError());
        }
    }
}
