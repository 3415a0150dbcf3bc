package org.blockyard.runtime.alloc;

import static org.blockyard.runtime.alloc.AllocatorChecks.await;
import static org.blockyard.runtime.alloc.AllocatorChecks.checkInvariants;
import static org.blockyard.runtime.alloc.AllocatorChecks.refused;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.AllocationSession;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.runtime.config.BlockyardConfig;

/**
 * Sessions over the actors: loans of free runs served on the caller's thread. Every block is accounted for
 * exactly once through random calls from many threads, sessions that close, that are abandoned and whose
 * threads die; releases across sessions; the loans go back before a NoSpace, on a policy switch, when idle.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class LoanSessionTest {
    /** 16 groups of 2,048 blocks: requests of up to 512 blocks, and a volume that runs full. */
    private static final Geometry SMALL = Geometry.of(4096, 16 * 2048, 2048);

    private static Config config(String idle) {
        return ConfigFactory.parseString("blockyard.alloc.sessions.idle = " + idle).withFallback(BlockyardConfig.load());
    }

    private static ActorBlockAllocator start(Geometry g, Config config) {
        return ActorBlockAllocator.start(AllocatorSettings.of(g, ReservationPolicy.extended()), config);
    }

    private static long blocks(List<Extent> extents) {
        return extents.stream().mapToLong(Extent::blocks).sum();
    }

    /** Waits for {@code done}, polling, up to 30 s. */
    private static void within30s(String what, BooleanSupplier done) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > until) throw new AssertionError("not within 30 s: " + what);
            Thread.sleep(10);
        }
    }

    @Test
    void aSessionServesRepeatedSizesFromItsLoanAndGivesEverythingBackOnClose() throws Exception {
        try (ActorBlockAllocator a = start(SMALL, config("1h"))) {
            long data = SMALL.dataBlocks();
            List<Extent> got = new ArrayList<>();
            LoanSession s = (LoanSession) a.openSession();
            for (int i = 0; i < 200; i++) got.addAll(await(s.allocate(8, 1, 0, -1)));
            assertEquals(1600, blocks(got));
            LoanSession.Figures f = s.figures();
            assertTrue(f.localCalls() > 150, "most calls served from the loan: " + f);
            assertEquals(data - 1600, (long) await(a.freeBlocks()), "blocks on loan count as free");
            // A refill may still be on its way: once it arrived, the stats count what the session holds.
            within30s("stats report the blocks on loan", () -> {
                LoanSession.Figures now = s.figures();
                return await(a.stats()).loanedBlocks() == now.free() + now.returning();
            });
            assertEquals(1, await(a.stats()).sessions());
            for (Extent e : got) assertTrue(got.stream().filter(x -> x.overlaps(e)).count() == 1, "handed out twice: " + e);

            await(s.release(got.subList(0, 100)));
            assertEquals(data - 800, (long) await(a.freeBlocks()), "released blocks are free at once");
            s.close();
            assertEquals(0, await(a.stats()).loanedBlocks(), "nothing on loan after the close");
            checkInvariants(a, got.subList(100, 200));
            refused(AllocationException.Closed.class, s.allocate(8, 1, 0, -1));
            refused(AllocationException.Closed.class, s.release(got.subList(100, 101)));
            // Handed out by the closed session: ordinary allocations, which any caller releases.
            await(a.release(got.subList(100, 200)));
            assertEquals(data, (long) await(a.freeBlocks()));
            checkInvariants(a, List.of());
        }
    }

    @Test
    void whatTheCallerReleasesGoesBackIntoTheLoanAndIsServedAgainWithoutAMessage() {
        try (ActorBlockAllocator a = start(SMALL, config("1h"))) {
            long data = SMALL.dataBlocks();
            LoanSession s = (LoanSession) a.openSession();
            List<Extent> got = new ArrayList<>();
            for (int i = 0; i < 100; i++) got.addAll(await(s.allocate(8, 1, 0, -1)));
            long messages = s.figures().messageCalls();
            // A churn of one size on what the session holds: every call is served here.
            Random rnd = new Random(7);
            for (int i = 0; i < 2000; i++) {
                int k = rnd.nextInt(got.size());
                await(s.release(List.of(got.get(k))));
                List<Extent> again = await(s.allocate(8, 1, 0, -1));
                assertEquals(1, again.size());
                got.set(k, again.get(0));
            }
            // Only the first calls' blocks, allocated before the loan came, take the allocator's path when released.
            assertTrue(s.figures().messageCalls() <= 2 * messages, "released blocks serve the next calls: " + s.figures());
            assertEquals(0, s.figures().returning(), "nothing went back to the groups");
            assertEquals(data - 800, (long) await(a.freeBlocks()));
            for (Extent e : got) assertTrue(got.stream().filter(x -> x.overlaps(e)).count() == 1, "handed out twice: " + e);
            s.close();
            checkInvariants(a, got);
        }
    }

    @Test
    void aReleaseMixingTheLoansBlocksWithOthersFreesBothOrNeither() {
        try (ActorBlockAllocator a = start(SMALL, config("1h"))) {
            long data = SMALL.dataBlocks();
            LoanSession s = (LoanSession) a.openSession();
            List<Extent> mine = new ArrayList<>();
            for (int i = 0; i < 20; i++) mine.addAll(await(s.allocate(4, 1, 0, -1)));
            Extent local = mine.get(mine.size() - 1);
            List<Extent> plain = await(a.allocate(6, 1, 0, -1)); // an ordinary allocation, not the session's
            long before = await(a.freeBlocks());

            // The ordinary part is a double free: nothing is freed, the session's blocks stay handed out.
            await(a.release(plain));
            List<Extent> bad = new ArrayList<>(plain);
            bad.add(local);
            refused(AllocationException.DoubleFree.class, s.release(bad));
            assertEquals(before + 6, (long) await(a.freeBlocks()), "only the first release freed anything");
            plain = await(a.allocate(6, 1, 0, -1));

            List<Extent> both = new ArrayList<>(plain);
            both.add(local);
            await(s.release(both));
            assertEquals(before + 10, (long) await(a.freeBlocks()), "both parts freed");
            refused(AllocationException.DoubleFree.class, s.release(List.of(local)));
            mine.remove(local);
            s.close();
            checkInvariants(a, mine);
            await(a.release(mine));
            assertEquals(data, (long) await(a.freeBlocks()));
        }
    }

    @Test
    void releasesAcrossSessionsAreServedOnceAndADoubleFreeIsRefusedWhereverItComesFrom() {
        try (ActorBlockAllocator a = start(SMALL, config("1h"))) {
            AllocationSession s1 = a.openSession(), s2 = a.openSession();
            List<Extent> got = new ArrayList<>();
            for (int i = 0; i < 50; i++) got.addAll(await(s1.allocate(4, 1, 0, -1)));
            LoanSession l1 = (LoanSession) s1;
            assertTrue(l1.figures().localCalls() > 0);

            // Handed out by s1, released through s2: the group takes them back from s1.
            Extent x = got.get(got.size() - 1);
            await(s2.release(List.of(x)));
            refused(AllocationException.DoubleFree.class, s1.release(List.of(x)));
            refused(AllocationException.DoubleFree.class, a.release(List.of(x)));

            // Released by s1 itself (on its way back), then again through the allocator and through s2.
            Extent y = got.get(got.size() - 2);
            await(s1.release(List.of(y)));
            refused(AllocationException.DoubleFree.class, a.release(List.of(y)));
            refused(AllocationException.DoubleFree.class, s2.release(List.of(y)));

            // Blocks on loan and never handed out are free: releasing them is a double free, and changes nothing.
            List<Extent> onLoan = l1.freeRanges();
            assertTrue(!onLoan.isEmpty(), "s1 holds a loan");
            long free = await(a.freeBlocks());
            refused(AllocationException.DoubleFree.class, a.release(List.of(new Extent(onLoan.get(0).start(), 1))));
            List<Extent> mixed = new ArrayList<>(got.subList(0, 2));
            mixed.add(new Extent(onLoan.get(0).start(), 1));
            refused(AllocationException.DoubleFree.class, s1.release(mixed));
            assertEquals(free, (long) await(a.freeBlocks()), "a refused release changed the free count");

            List<Extent> left = new ArrayList<>(got.subList(0, got.size() - 2));
            s1.close();
            s2.close();
            checkInvariants(a, left);
            await(a.release(left));
            assertEquals(SMALL.dataBlocks(), (long) await(a.freeBlocks()));
        }
    }

    /**
     * Threads with sessions (some closed and reopened, some abandoned, one whose thread ends holding a loan),
     * a thread on the plain calls, releases of each other's extents and deliberate double frees, on a volume
     * that runs full: every block ends up owned once, and everything goes back.
     */
    @Test
    void randomCallsFromManyThreadsConserveEveryBlock() throws Exception {
        try (ActorBlockAllocator a = start(SMALL, config("50ms"))) {
            int threads = 5;
            List<Extent> shared = Collections.synchronizedList(new ArrayList<>());
            AtomicLong doubleFrees = new AtomicLong(), noSpace = new AtomicLong(), local = new AtomicLong();
            CyclicBarrier start = new CyclicBarrier(threads);
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            List<Future<List<Extent>>> work = new ArrayList<>();
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
            try {
                for (int t = 0; t < threads; t++) {
                    int me = t;
                    work.add(pool.submit(() -> churn(a, me, new Random(7 + me), start, until, shared, doubleFrees,
                            noSpace, local)));
                }
                List<Extent> owned = new ArrayList<>();
                for (Future<List<Extent>> f : work) owned.addAll(f.get(60, TimeUnit.SECONDS));
                owned.addAll(shared); // once no thread moves extents there any more
                assertTrue(doubleFrees.get() > 0, "releases naming a block twice were tried and refused");
                assertTrue(noSpace.get() > 0, "the volume ran full");
                assertTrue(local.get() > 1000, "calls were served from loans: " + local.get());

                // A thread that ends holding a loan: its session closes by itself.
                Thread dies = new Thread(() -> {
                    AllocationSession s = a.openSession();
                    owned.addAll(await(s.allocate(1, 1, 0, -1)));
                });
                dies.start();
                dies.join(30_000);
                within30s("the sessions of ended threads close and idle loans go back",
                        () -> a.sessions().stream().allMatch(s -> s.owner().isAlive())
                                && await(a.stats()).loanedBlocks() == 0);
                checkInvariants(a, owned);
                await(a.release(owned));
                assertEquals(SMALL.dataBlocks(), (long) await(a.freeBlocks()), "everything went back");
            } finally {
                pool.shutdownNow();
            }
        }
    }

    private static List<Extent> churn(ActorBlockAllocator a, int me, Random rnd, CyclicBarrier start, long until,
                                      List<Extent> shared, AtomicLong doubleFrees, AtomicLong noSpace, AtomicLong local)
            throws Exception {
        start.await(30, TimeUnit.SECONDS);
        List<Extent> mine = new ArrayList<>();
        AllocationSession s = me == 0 ? AllocationSession.forwarding(a) : a.openSession();
        while (System.nanoTime() < until) {
            int op = rnd.nextInt(20);
            try {
                if (op < 9) {
                    long want = 1L << rnd.nextInt(7);
                    mine.addAll(await(s.allocate(want, 1, rnd.nextInt(4) == 0 ? 16 : 0, -1)));
                } else if (op < 15 && !mine.isEmpty()) {
                    Extent e = mine.remove(rnd.nextInt(mine.size()));
                    long cut = e.blocks() > 1 && rnd.nextBoolean() ? 1 + rnd.nextInt((int) e.blocks() - 1) : e.blocks();
                    await(s.release(List.of(new Extent(e.start(), cut))));
                    if (cut < e.blocks()) mine.add(new Extent(e.start() + cut, e.blocks() - cut));
                } else if (op < 16 && !mine.isEmpty()) {
                    shared.add(mine.remove(rnd.nextInt(mine.size()))); // another thread may release it
                } else if (op < 17) {
                    Extent e = null;
                    synchronized (shared) {
                        if (!shared.isEmpty()) e = shared.remove(rnd.nextInt(shared.size()));
                    }
                    if (e != null) await(s.release(List.of(e)));
                } else if (op < 18 && !mine.isEmpty()) {
                    // A release that names a block twice is refused whole, and frees nothing.
                    Extent e = mine.get(rnd.nextInt(mine.size()));
                    try {
                        await(s.release(List.of(e, new Extent(e.end() - 1, 1))));
                        throw new AssertionError("a release naming a block twice was served: " + e);
                    } catch (AllocationException.DoubleFree refusedOk) {
                        doubleFrees.incrementAndGet();
                    }
                } else if (op < 19 && me % 2 == 1) {
                    s.close(); // and a new one
                    s = a.openSession();
                } else if (me == 4 && rnd.nextInt(50) == 0) {
                    mine.addAll(await(a.openSession().allocate(1, 1, 0, -1))); // the session is abandoned, never closed
                }
            } catch (AllocationException.NoSpace e) {
                noSpace.incrementAndGet();
            }
        }
        if (s instanceof LoanSession l) local.addAndGet(l.figures().localCalls());
        s.close();
        return mine;
    }

    @Test
    void aVolumeOf100000GroupsLendsAndTakesBack() {
        Geometry g = Geometry.of(4096, 100_000L * 256, 256);
        try (ActorBlockAllocator a = start(g, config("1h"))) {
            List<AllocationSession> sessions = new ArrayList<>();
            List<Extent> got = new ArrayList<>();
            for (int i = 0; i < 8; i++) sessions.add(a.openSession());
            for (int round = 0; round < 500; round++)
                for (AllocationSession s : sessions) got.addAll(await(s.allocate(1 + round % 3, 1, 0, -1)));
            assertTrue(await(a.stats()).loanedBlocks() > 0);
            for (AllocationSession s : sessions) s.close();
            assertEquals(0, await(a.stats()).loanedBlocks());
            checkInvariants(a, got);
        }
    }

    @Test
    void noSpaceOnlyAfterEveryLoanWentBack() {
        try (ActorBlockAllocator a = start(SMALL, config("1h"))) {
            AllocationSession lender = a.openSession();
            List<Extent> got = new ArrayList<>();
            for (int i = 0; i < 20; i++) got.addAll(await(lender.allocate(4, 1, 0, -1)));
            long onLoan = await(a.stats()).loanedBlocks();
            assertTrue(onLoan > 0, "the session holds a loan");
            // Everything else, through the plain calls: it takes the loan too, before any NoSpace.
            long rest = await(a.freeBlocks());
            long taken = 0;
            while (taken < rest) {
                List<Extent> e = await(a.allocate(Math.min(512, rest - taken), 1, 0, -1));
                got.addAll(e);
                taken += blocks(e);
            }
            assertEquals(0, (long) await(a.freeBlocks()));
            assertEquals(0, await(a.stats()).loanedBlocks(), "the loan went back before the volume was full");
            refused(AllocationException.NoSpace.class, a.allocate(1, 1, 0, -1));
            refused(AllocationException.NoSpace.class, lender.allocate(4, 1, 0, -1));
            lender.close();
            checkInvariants(a, got);
        }
    }

    @Test
    void aPolicySwitchTakesTheLoansBackAndSessionsGoOn() {
        try (ActorBlockAllocator a = start(SMALL, config("1h"))) {
            AllocationSession s = a.openSession();
            List<Extent> got = new ArrayList<>();
            for (int i = 0; i < 20; i++) got.addAll(await(s.allocate(2, 1, 0, -1)));
            assertTrue(await(a.stats()).loanedBlocks() > 0);
            await(a.setPolicy("no-reservation").thenCompose(sw -> a.setPolicy("reservation")));
            assertEquals(0, await(a.stats()).loanedBlocks(), "the switch took the loans back");
            for (int i = 0; i < 20; i++) got.addAll(await(s.allocate(2, 1, 0, -1)));
            await(s.release(got));
            s.close();
            assertEquals(SMALL.dataBlocks(), (long) await(a.freeBlocks()));
            checkInvariants(a, List.of());
        }
    }

    @Test
    void anIdleSessionGivesItsLoanBackAndBorrowsAgain() throws Exception {
        try (ActorBlockAllocator a = start(SMALL, config("100ms"))) {
            AllocationSession s = a.openSession();
            List<Extent> got = new ArrayList<>(await(s.allocate(8, 1, 0, -1)));
            for (int i = 0; i < 5; i++) got.addAll(await(s.allocate(8, 1, 0, -1)));
            within30s("the idle loan goes back", () -> await(a.stats()).loanedBlocks() == 0);
            for (int i = 0; i < 5; i++) got.addAll(await(s.allocate(8, 1, 0, -1)));
            await(s.release(got));
            s.close();
            assertEquals(SMALL.dataBlocks(), (long) await(a.freeBlocks()));
        }
    }

    @Test
    void callsAfterTheAllocatorClosedAreRefused() {
        ActorBlockAllocator a = start(SMALL, config("1h"));
        AllocationSession s = a.openSession();
        await(s.allocate(8, 1, 0, -1));
        a.close();
        refused(AllocationException.Closed.class, s.allocate(8, 1, 0, -1));
        refused(AllocationException.Closed.class, a.openSession().allocate(8, 1, 0, -1));
        CompletableFuture.runAsync(s::close).orTimeout(30, TimeUnit.SECONDS).join();
    }
}
