package org.blockyard.benches;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import com.typesafe.config.Config;

import org.blockyard.api.alloc.BlockAllocator;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.runtime.alloc.ActorBlockAllocator;
import org.blockyard.runtime.alloc.AllocatorSettings;
import org.blockyard.runtime.alloc.BlockGroup;
import org.blockyard.runtime.alloc.ReservationPolicy;

/**
 * Where per-group actors should win: clients that each append in a group of their own, while a victim
 * keeps making long window searches in another group (seed 000's nearly full group). Under the global
 * lock a search holds every client up for as long as it runs; with actors it runs in slices inside its
 * own group's actor and the clients' groups go on.
 *
 * <p>The victim group is group 0, prepared as {@code ProvisionalWindowTest} prepares one: from its first
 * data block on, {@code searchSlides} other files each hold a 2-block window with one free block in it,
 * followed by used blocks up to the next (a stride of 12 to 20 blocks, drawn from the seed). A new 8-block
 * window searched from the group's first data block (ext3 reservation, which starts there) must slide
 * past every one of them. Each victim search is one new file: open, one {@code getBlocks} (the search),
 * truncate (its block goes back, so the group never fills), close.
 *
 * <p>Client {@code c} appends to its own file in group {@code c + 1} (against the lock a thread, {@link StallClient}; against the actors an actor sending its file messages, {@link StallActorClient}). A victim
 * search is due every {@code victimEvery} client calls (all clients together):
 * <ul>
 * <li>against the global lock, in the order a fair lock gives (ext3's spinlock is a FIFO ticket lock): a
 *     due search goes before the client calls made after it, which wait for it inside their own time, so
 *     there is exactly one search per {@code victimEvery} calls. With {@code victimEvery == 0} (all the
 *     time) the victim and the clients take turns, one search per round of one call from each client;</li>
 * <li>against the actors nothing waits for the victim: each due search gives it a permit, and it
 *     searches while it has permits, back to back when its searches take longer than the clients' calls
 *     (then it makes fewer searches than are due); with {@code victimEvery == 0} it searches all the time.</li>
 * </ul>
 * With {@code victimPerSecond} above 0 searches are due at that rate in time instead, for both alike,
 * whatever the clients do: the same victim work on both sides, as far as each can do it. The row says
 * how many searches the victim made.
 *
 * <p>Against {@link #GROUP_LOCKS} (a lock per group and per file) the clients are threads as against the global
 * lock, but nothing waits for the victim, as against the actors: each due search is counted, and the victim's
 * own thread searches while searches are due (with {@code victimEvery == 0}, all the time). Its search holds
 * only the victim group's lock, which no client needs.
 *
 * <p>Every allocator is driven through {@link BlockAllocator}: the lock's clients on plain threads (each
 * call runs on the caller's thread), the actors' clients as chains of asks started inside the actor
 * system (no thread hand-off per call). Client latencies are corrected for coordinated omission twice:
 * as closed loops (each client's expected interval is its own mean interval between calls), and at one
 * common interval for every client of both allocators ({@code client_latency_common_us}). The first
 * punishes the faster side: a 4 ms stall adds 4,000 calls to a client that calls every microsecond and
 * 400 to one that calls every 10. The second compares both at the same offered rate, as a load that
 * meant to call that often would have seen them.
 */
public final class Stall {
    private Stall() {}

    public static final String ACTORS = "actors";
    public static final String GLOBAL_LOCK = Tiobench.GLOBAL_LOCK;
    public static final String GROUP_LOCKS = Tiobench.GROUP_LOCKS;

    static final int VICTIM_GROUP = 0;
    /** ext3's first window (EXT3_DEFAULT_RESERVE_BLOCKS): the window the victim's searches slide. */
    private static final int VICTIM_WINDOW_BLOCKS = 8;
    /** File ids of the windows that fill the victim group, far above any id an allocator hands out. */
    private static final long HOLDER_FILE_BASE = 1L << 50;
    /** Stride from one holder to the next: at least the new window and the holder's, so each is a slide. */
    private static final int MIN_STRIDE = 12, MAX_STRIDE = 20;
    /** Room in the victim group besides the stretch: its system zone and journal, and the victim's window. */
    private static final int STRETCH_SLACK_BLOCKS = 2048;

    /**
     * @param victimEvery   one victim search per this many client calls; 0 = searches all the time
     * @param victimPerSecond  when above 0, searches are due at this rate in time instead, whatever the
     *                         clients do (victimEvery is then unused)
     * @param searchSlides  windows in the victim group's fragmented stretch: how often each search slides
     * @param fileBlocks    a client's file is truncated and rewritten when it reaches this
     * @param seed          draws the strides of the fragmented stretch
     * @param commonIntervalNanos  every client of both allocators is also corrected as one that meant to
     *                      call this often ({@code client_latency_common_us}); 0 = not reported
     */
    public record Spec(int clients, long callsPerClient, int victimEvery, double victimPerSecond, int searchSlides,
                       int blocksPerGroup, int chunkBlocks, int fileBlocks, long seed, long commonIntervalNanos) {
        public Spec {
            if (commonIntervalNanos < 0) throw new IllegalArgumentException("--expected-interval must be 0 (unused) or more");
            if (clients < 1) throw new IllegalArgumentException("--clients must be at least 1");
            if (callsPerClient < 1) throw new IllegalArgumentException("--calls must be at least 1");
            if (victimEvery < 0) throw new IllegalArgumentException("--victim-every must be 0 (all the time) or more");
            if (!(victimPerSecond >= 0)) throw new IllegalArgumentException("--victim-per-second must be 0 (unused) or more");
            if (searchSlides < 1) throw new IllegalArgumentException("--search-slides must be at least 1");
            if (chunkBlocks < 1) throw new IllegalArgumentException("--chunk-blocks must be at least 1");
            if (fileBlocks < chunkBlocks) throw new IllegalArgumentException("--file-blocks must be at least --chunk-blocks");
            long stretch = (long) MAX_STRIDE * searchSlides + STRETCH_SLACK_BLOCKS;
            if (stretch > blocksPerGroup || fileBlocks > blocksPerGroup / 2)
                throw new IllegalArgumentException("--blocks-per-group " + blocksPerGroup + " is too small: the victim's"
                        + " stretch needs up to " + stretch + " blocks, and a client's file of " + fileBlocks
                        + " at most half a group");
        }
    }

    /** One measured run of {@code allocator} ({@link #ACTORS}, {@link #GLOBAL_LOCK} or {@link #GROUP_LOCKS}); answers its row. */
    public static Map<String, Object> run(Spec spec, String allocator, Config config) {
        if (!allocator.equals(ACTORS) && !LockPeer.is(allocator))
            throw new IllegalArgumentException("allocator " + allocator + ": actors | global-lock | group-locks");
        AllocatorSettings base = AllocatorSettings.fromConfig(config, config.getInt("blockyard.volume.blocks-per-group"));
        Geometry g0 = base.geometry();
        Geometry geometry = Geometry.of(g0.blockSizeBytes(), (long) (spec.clients() + 1) * spec.blocksPerGroup(),
                spec.blocksPerGroup()).withJournal(g0.journalBlocks());
        // ext3 reservation: a new file's window search starts at its home group's first data block.
        PinnedHomePolicy policy = new PinnedHomePolicy(ReservationPolicy.ext3());
        AllocatorSettings settings = base.withGeometry(geometry).withPolicy(policy);
        Consumer<BlockGroup> prepare = group -> {
            if (group.group() == VICTIM_GROUP) fragment(group, spec);
        };

        long cpu0 = Tiobench.processCpuNanos();
        Result r;
        if (LockPeer.is(allocator)) {
            LockPeer<?> a = LockPeer.open(allocator, geometry, policy, settings.preallocMinWindowBlocks(), prepare);
            r = drive(spec, a.api(), null, allocator.equals(GLOBAL_LOCK));
        } else {
            try (ActorBlockAllocator a = ActorBlockAllocator.start(settings, config, prepare)) {
                r = drive(spec, a, a, false);
            }
        }
        long cpu = Tiobench.processCpuNanos() - cpu0;

        double seconds = r.elapsedNanos / 1e9;
        Map<String, Object> row = Report.row();
        row.put("workload", "stall");
        row.put("allocator", allocator);
        row.put("policy_detail", policy.toString());
        row.put("clients", spec.clients());
        row.put("calls_per_client", spec.callsPerClient());
        row.put("chunk_blocks", spec.chunkBlocks());
        row.put("victim_every", spec.victimPerSecond() > 0 ? null : spec.victimEvery());
        row.put("victim_per_s", spec.victimPerSecond());
        row.put("search_slides", spec.searchSlides());
        row.put("blocks_per_group", spec.blocksPerGroup());
        row.put("seed", spec.seed());
        row.put("client_calls", r.clients.count());
        row.put("client_calls_per_s", r.clients.count() / seconds);
        row.put("client_latency_us", r.clients.summaryMicros());
        if (spec.commonIntervalNanos() > 0)
            row.put("client_latency_common_us", r.clients.correctedAtMicros(spec.commonIntervalNanos()));
        row.put("victim_searches", r.victim.count());
        row.put("victim_searches_per_s", r.victim.count() / seconds);
        row.put("client_calls_per_search", r.victim.count() == 0 ? 0.0 : (double) r.clients.count() / r.victim.count());
        row.put("victim_search_us", r.victim.summaryMicros());
        row.put("search_slices", r.slices);
        row.put("stashed", r.stashed);
        row.put("elapsed_s", Latency.round(seconds));
        row.put("cpu_s", Latency.round(cpu / 1e9));
        return row;
    }

    /** The victim group's fragmented stretch: holder windows with one free block each, used blocks between. */
    static void fragment(BlockGroup group, Spec spec) {
        Random rnd = new Random(spec.seed());
        long at = group.firstDataBlock();
        for (int i = 0; i < spec.searchSlides(); i++) {
            int stride = MIN_STRIDE + rnd.nextInt(MAX_STRIDE - MIN_STRIDE + 1);
            BlockGroup.Outcome o = group.allocate(BlockGroup.Request.of(HOLDER_FILE_BASE + i, at, 1, 0, 2, true,
                    false));
            if (o.start() != at || o.blocks() != 1)
                throw new IllegalStateException("holder " + i + " did not get block " + at + ": " + o);
            group.markUsed(at + 2, stride - 2);
            at += stride;
        }
        if (group.end() - at < 2 * VICTIM_WINDOW_BLOCKS)
            throw new IllegalArgumentException("the victim group has no room after its stretch: use bigger groups");
    }

    private record Result(Latency clients, Latency victim, long elapsedNanos, long slices, long stashed) {}

    /**
     * Runs the clients and the victim against {@code a}; {@code actors} is {@code a} when it is the actors'; with
     * {@code fairLock} (the global lock) the clients queue behind a due search.
     */
    private static Result drive(Spec spec, BlockAllocator a, ActorBlockAllocator actors, boolean fairLock) {
        AtomicLong clientCalls = new AtomicLong();
        boolean paced = spec.victimPerSecond() > 0;
        Runnable beforeCall = () -> { };
        Runnable due; // makes one search due
        int every;
        Victim victim;
        if (actors == null && fairLock) {
            // Behind a fair lock, every client queues behind a due search; all the time means in turn with
            // one call of each client.
            every = spec.victimEvery() == 0 ? spec.clients() : spec.victimEvery();
            FifoGate fifo = new FifoGate();
            victim = new ThreadVictim(a, fifo, false);
            beforeCall = fifo::awaitClear;
            due = fifo::searchDue;
        } else if (actors == null) {
            // A lock per group: the clients never wait for the victim, which searches while searches are due.
            every = spec.victimEvery();
            FifoGate count = new FifoGate();
            victim = new ThreadVictim(a, count, every == 0 && !paced);
            due = count::searchDue;
        } else {
            every = spec.victimEvery();
            victim = new ChainVictim(a, paced ? 1 : every);
            due = victim::permit;
        }
        int perCalls = every;
        Pacer pacer = new Pacer(spec.victimPerSecond(), due);
        Runnable afterCall = paced ? pacer::tick : perCalls == 0 ? () -> { } : () -> {
            if (clientCalls.incrementAndGet() % perCalls == 0) due.run();
        };
        List<StallLoad> clients = new ArrayList<>();
        for (int c = 0; c < spec.clients(); c++) {
            String file = PinnedHomePolicy.fileIn(c + 1, "client-" + c);
            a.open(file).toCompletableFuture().join();
            // The lock's clients call on their own threads; the actors' are actors sending the file's messages.
            clients.add(actors == null
                    ? new StallClient(a, file, spec.callsPerClient(), spec.chunkBlocks(), spec.fileBlocks(), beforeCall,
                            afterCall)
                    : new StallActorClient(actors, actors.fileHandle(file), spec.callsPerClient(), spec.chunkBlocks(),
                            spec.fileBlocks(), afterCall, "stall-client-" + c));
        }
        ThreadClients.quiesce();
        long slices0 = actors == null ? 0 : actors.volume().searchSlices();
        long stashed0 = actors == null ? 0 : actors.volume().stashed();
        long t0 = System.nanoTime();
        pacer.start();
        try {
            if (actors == null) {
                CountDownLatch go = new CountDownLatch(1);
                for (int c = 0; c < clients.size(); c++) {
                    StallLoad client = clients.get(c);
                    new Thread(() -> {
                        try {
                            go.await();
                        } catch (InterruptedException e) {
                            return;
                        }
                        client.start();
                    }, "stall-client-" + c).start();
                }
                victim.start();
                go.countDown();
            } else {
                Starter.runInside(actors, () -> {
                    victim.start();
                    clients.forEach(StallLoad::start);
                }, "stall-start");
            }
            CompletableFuture.allOf(clients.stream().map(StallLoad::done).toArray(CompletableFuture[]::new))
                    .get(30, TimeUnit.MINUTES);
            long elapsed = System.nanoTime() - t0;
            Latency searches = victim.stop().get(5, TimeUnit.MINUTES);
            Latency all = new Latency();
            for (StallLoad c : clients) all.merge(c.latency());
            long slices = actors == null ? 0 : actors.volume().searchSlices() - slices0;
            long stashed = actors == null ? 0 : actors.volume().stashed() - stashed0;
            return new Result(all, searches, elapsed, slices, stashed);
        } catch (Exception e) {
            victim.stop();
            throw new IllegalStateException("stall run failed: " + e.getMessage(), e);
        }
    }

    /**
     * Searches due at a rate in time, counted by the clients as they call: after each call, as many become
     * due as the time since the start calls for. No timer: a timer's message comes from outside the actor
     * system, and the dispatcher serves such messages only when its workers run out of their own work,
     * which the clients never let happen (measured: 18 of 610 due searches ran).
     */
    private static final class Pacer {
        private final double perSecond;
        private final Runnable due;
        private final AtomicLong given = new AtomicLong();
        private volatile long t0;

        Pacer(double perSecond, Runnable due) {
            this.perSecond = perSecond;
            this.due = due;
        }

        void start() {
            t0 = System.nanoTime();
        }

        void tick() {
            long g = given.get();
            long n = (long) ((System.nanoTime() - t0) * perSecond / 1e9) - g;
            if (n <= 0 || !given.compareAndSet(g, g + n)) return;
            for (long i = 0; i < n; i++) due.run();
        }
    }

    /**
     * The victim: new files in the victim group, one long window search each, one at a time, each
     * search when one is due (or all the time).
     */
    private abstract static class Victim {
        final BlockAllocator a;
        final Latency latency = new Latency().notCorrected("the victim's own searches, one after another");
        final CompletableFuture<Latency> stopped = new CompletableFuture<>();
        volatile boolean stopping;
        long next;

        Victim(BlockAllocator a) {
            this.a = a;
        }

        abstract void start();

        void permit() {
        }

        /** Completes with the searches' latencies once the search in progress, if any, is done. */
        abstract CompletableFuture<Latency> stop();

        String nextFile() {
            return PinnedHomePolicy.fileIn(VICTIM_GROUP, "victim-" + next++);
        }
    }

    /**
     * The order a fair lock gives (ext3's spinlock is a FIFO ticket lock): a search that is due goes
     * before every client call made after it, so clients wait while one is due or running. Java's
     * {@code ReentrantLock} is not fair: closed-loop clients re-take it before a woken victim can, and
     * measured, the victim then made one search per 6,250 client calls instead of one per 100.
     */
    private static final class FifoGate {
        private volatile boolean pending;
        private long due, done; // guarded by this

        synchronized void searchDue() {
            due++;
            pending = true;
            notifyAll();
        }

        /** A client, before its call: waits while a search is due or running. */
        void awaitClear() {
            if (!pending) return;
            synchronized (this) {
                while (done < due) {
                    try {
                        wait();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                }
            }
        }

        /** The victim: waits for a due search; false when stopped first. */
        synchronized boolean awaitDue(Victim v) throws InterruptedException {
            while (done == due && !v.stopping) wait();
            return done < due;
        }

        synchronized void searchDone() {
            done++;
            pending = done < due;
            notifyAll();
        }

        synchronized void wake() {
            notifyAll();
        }
    }

    /**
     * Against a lock peer: a plain thread that calls, as the lock's callers do, when a search is due, or with
     * {@code always} one search after another.
     */
    private static final class ThreadVictim extends Victim {
        private final FifoGate fifo;
        private final boolean always;
        private final Thread thread = new Thread(this::loop, "stall-victim");

        ThreadVictim(BlockAllocator a, FifoGate fifo, boolean always) {
            super(a);
            this.fifo = fifo;
            this.always = always;
        }

        @Override
        void start() {
            thread.start();
        }

        @Override
        CompletableFuture<Latency> stop() {
            stopping = true;
            fifo.wake();
            return stopped;
        }

        private void loop() {
            try {
                while ((always || fifo.awaitDue(this)) && !stopping) {
                    String file = nextFile();
                    long s = System.nanoTime();
                    a.getBlocks(open(file), 0, 1, true).toCompletableFuture().join();
                    latency.record(System.nanoTime() - s);
                    if (!always) fifo.searchDone();
                    a.truncate(file, 0).toCompletableFuture().join();
                    a.close(file).toCompletableFuture().join();
                }
                stopped.complete(latency);
            } catch (Throwable e) {
                stopped.completeExceptionally(e);
            }
        }

        private String open(String file) {
            a.open(file).toCompletableFuture().join();
            return file;
        }
    }

    /**
     * Against the actors: a chain of asks, each step sent from the thread that completed the one before
     * (a dispatcher thread), as the clients' calls are. A plain thread's asks would wait behind the
     * clients' work in the dispatcher's queues and the victim would hardly run.
     */
    private static final class ChainVictim extends Victim {
        private final AtomicLong permits = new AtomicLong();
        private final java.util.concurrent.atomic.AtomicBoolean running = new java.util.concurrent.atomic.AtomicBoolean();

        private final int every;

        ChainVictim(BlockAllocator a, int every) {
            super(a);
            this.every = every;
        }

        @Override
        void start() {
            if (every == 0 && running.compareAndSet(false, true)) search();
        }

        @Override
        void permit() {
            permits.incrementAndGet();
            if (running.compareAndSet(false, true)) search();
        }

        @Override
        CompletableFuture<Latency> stop() {
            stopping = true;
            if (running.compareAndSet(false, true)) stopped.complete(latency);
            return stopped;
        }

        /** Runs while {@link #running} is held by this chain; gives it up when no permit is left. */
        private void search() {
            if (stopping) {
                stopped.complete(latency);
                return;
            }
            if (every > 0) {
                if (permits.get() == 0) {
                    running.set(false);
                    // A permit that came in between, or a stop, finds running false and takes over.
                    if ((permits.get() > 0 || stopping) && running.compareAndSet(false, true)) search();
                    return;
                }
                permits.decrementAndGet();
            }
            String file = nextFile();
            long[] sent = new long[1];
            a.open(file)
                    .thenCompose(v -> {
                        sent[0] = System.nanoTime();
                        return a.getBlocks(file, 0, 1, true);
                    })
                    .thenCompose(run -> {
                        latency.record(System.nanoTime() - sent[0]);
                        return a.truncate(file, 0);
                    })
                    .thenCompose(freed -> a.close(file))
                    .whenComplete((v, e) -> {
                        if (e != null) stopped.completeExceptionally(e);
                        else search();
                    });
        }
    }
}
