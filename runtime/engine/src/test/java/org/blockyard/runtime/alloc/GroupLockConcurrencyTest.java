package org.blockyard.runtime.alloc;

import static org.blockyard.runtime.alloc.AllocatorChecks.await;
import static org.blockyard.runtime.alloc.AllocatorChecks.refused;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.api.alloc.MapRequest;

/**
 * The group-locks peer under threads: extent and file calls from many threads at once, across groups, on a
 * volume small enough to run full; then every block is accounted for exactly once, the published figures
 * match the groups, and no call hung (every wait has a deadline; a hang reports the deadlocked threads).
 */
// Calls are answered on the caller's thread: the deadline of a test that makes them there is this.
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class GroupLockConcurrencyTest {
    /** 16 groups of 1,024 blocks: allocations of up to 3,000 blocks span groups, and the volume fills. */
    private static final Geometry GEOMETRY = Geometry.of(4096, 16 * 1024, 1024);
    private static final long RUN_NANOS = TimeUnit.SECONDS.toNanos(3);
    private static final int EXTENT_THREADS = 3, FILE_THREADS = 3;
    /** Names the file threads share, so that files have several writers and deletes meet open files. */
    private static final int NAMES = 12;

    @Test
    void threadsAllocatingAndReleasingExtentsAndFilesAcrossGroupsLoseNoBlockAndHoldNoneTwice() throws Exception {
        GroupLockAllocator a = new GroupLockAllocator(GEOMETRY, ReservationPolicy.extended());
        int threads = EXTENT_THREADS + FILE_THREADS + 1;
        CyclicBarrier start = new CyclicBarrier(threads);
        long until = System.nanoTime() + RUN_NANOS;
        AtomicLong refusedReleases = new AtomicLong(), noSpace = new AtomicLong(), fileCalls = new AtomicLong();
        ExecutorService pool = Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, "group-locks-churn");
            t.setDaemon(true);
            return t;
        });
        List<Future<List<Extent>>> extentThreads = new ArrayList<>();
        List<Future<?>> others = new ArrayList<>();
        try {
            for (int t = 0; t < EXTENT_THREADS; t++) {
                long seed = 11 + t;
                extentThreads.add(pool.submit(() -> extentChurn(a, new Random(seed), start, until, refusedReleases, noSpace)));
            }
            for (int t = 0; t < FILE_THREADS; t++) {
                long seed = 101 + t;
                others.add(pool.submit(() -> {
                    fileChurn(a, new Random(seed), start, until, noSpace, fileCalls);
                    return null;
                }));
            }
            others.add(pool.submit(() -> {
                readers(a, start, until);
                return null;
            }));
            List<Extent> byExtentThreads = new ArrayList<>();
            for (Future<List<Extent>> f : extentThreads) byExtentThreads.addAll(within(f));
            for (Future<?> f : others) within(f);

            assertTrue(refusedReleases.get() > 0, "some releases across groups were refused");
            assertTrue(noSpace.get() > 0, "the volume ran full at times");
            assertTrue(fileCalls.get() > 1000, "the file threads made calls: " + fileCalls.get());

            List<Extent> held = new ArrayList<>(byExtentThreads);
            for (List<Extent> f : a.fileExtents().values()) held.addAll(f);
            assertEquals(List.of(), a.preallocated(), "every file is closed: none holds a preallocation");
            checkAccounts(a, held);

            // Everything given back, the volume is whole again.
            await(a.release(byExtentThreads));
            for (String name : a.fileExtents().keySet()) await(a.delete(name));
            assertEquals(GEOMETRY.dataBlocks(), (long) await(a.freeBlocks()), "free after everything went back");
        } finally {
            // A thread stuck in a lock does not stop on an interrupt: it is a daemon, and the failure above says why.
            pool.shutdownNow();
            pool.awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    /**
     * A release that must be all or nothing across groups is refused by the last group it touches: the earlier
     * groups free nothing, the free count stays, and each extent can be released after.
     */
    @Test
    void aReleaseAcrossGroupsThatOneGroupRefusesFreesNothingInAnyGroup() {
        GroupLockAllocator a = new GroupLockAllocator(GEOMETRY, ReservationPolicy.extended());
        List<Extent> g0 = await(a.allocate(100, 1, 0, GEOMETRY.groupStart(0)));
        List<Extent> g5 = await(a.allocate(100, 1, 0, GEOMETRY.groupStart(5)));
        List<Extent> g9 = await(a.allocate(2, 1, 0, GEOMETRY.groupStart(9)));
        assertEquals(9, GEOMETRY.groupOf(g9.get(0).start()));
        await(a.release(List.of(new Extent(g9.get(0).start() + 1, 1))));
        long free = await(a.freeBlocks());
        List<Extent> bad = new ArrayList<>(g0);
        bad.addAll(g5);
        bad.addAll(g9); // its second block is free already
        refused(AllocationException.DoubleFree.class, a.release(bad));
        assertEquals(free, (long) await(a.freeBlocks()), "the refused release changed the free count");
        for (Extent e : g0) assertTrue(a.group(0).isUsed(e.start()) && a.group(0).isUsed(e.end() - 1), "group 0 freed " + e);
        for (Extent e : g5) assertTrue(a.group(5).isUsed(e.start()) && a.group(5).isUsed(e.end() - 1), "group 5 freed " + e);
        List<Extent> good = new ArrayList<>(g0);
        good.addAll(g5);
        good.add(new Extent(g9.get(0).start(), 1));
        await(a.release(good));
        assertEquals(GEOMETRY.dataBlocks(), (long) await(a.freeBlocks()));
    }

    /** The handle calls and the name calls are one allocator: a file opened by handle is seen by name. */
    @Test
    void handleCallsAndNameCallsServeTheSameFiles() {
        GroupLockAllocator a = new GroupLockAllocator(GEOMETRY, ReservationPolicy.ext3());
        GroupLockAllocator.File f = a.openFile("/d/f");
        BlockRun run = a.getBlocks(f, 0, 300);
        assertEquals(300, run.blocks());
        assertEquals(List.of(new Extent(run.physicalStart(), 300)), await(a.fileExtents("/d/f")));
        assertEquals(300, (long) await(a.truncate("/d/f", 0)));
        a.close(f);
        refused(AllocationException.UnknownFile.class, a.getBlocks("/d/f", 0, 1, true));
        await(a.delete("/d/f"));
        refused(AllocationException.UnknownFile.class, a.fileExtents("/d/f"));
        assertEquals(GEOMETRY.dataBlocks(), (long) await(a.freeBlocks()));
    }

    /**
     * Allocates extents of 1 to 3,000 blocks (so across groups), releases random handfuls (their groups locked
     * together), and now and then a handful with a system-zone block in it, which must free none of them;
     * answers what it holds at the end.
     */
    private static List<Extent> extentChurn(GroupLockAllocator a, Random rnd, CyclicBarrier start, long until,
                                            AtomicLong refusedReleases, AtomicLong noSpace) throws Exception {
        start.await(30, TimeUnit.SECONDS);
        List<Extent> owned = new ArrayList<>();
        long ownedBlocks = 0;
        while (System.nanoTime() < until) {
            int op = rnd.nextInt(10);
            if (op < 5 && ownedBlocks < GEOMETRY.dataBlocks() / 4) {
                int unit = 1 << rnd.nextInt(3);
                long want = unit * (1L + rnd.nextInt(3000 / unit));
                long hint = rnd.nextBoolean() ? -1 : rnd.nextLong(GEOMETRY.totalBlocks());
                try {
                    for (Extent e : await(a.allocate(want, unit, rnd.nextBoolean() ? 0 : unit * 64L, hint))) {
                        owned.add(e);
                        ownedBlocks += e.blocks();
                    }
                } catch (AllocationException.NoSpace e) {
                    noSpace.incrementAndGet();
                }
            } else if (!owned.isEmpty()) {
                List<Extent> some = new ArrayList<>();
                for (int i = rnd.nextInt(Math.min(6, owned.size())); i >= 0; i--)
                    some.add(owned.remove(rnd.nextInt(owned.size())));
                if (op == 9) {
                    // The system zone of a group after the others: the groups before it must free nothing.
                    List<Extent> bad = new ArrayList<>(some);
                    bad.add(new Extent(GEOMETRY.groupStart(GEOMETRY.groups() - 1), 1));
                    try {
                        await(a.release(bad));
                        fail("a release with a system-zone block was accepted");
                    } catch (AllocationException.SystemZone expected) {
                        refusedReleases.incrementAndGet();
                    }
                }
                await(a.release(some)); // refused with DoubleFree if the refused release had freed any
                for (Extent e : some) ownedBlocks -= e.blocks();
            }
        }
        return owned;
    }

    /**
     * Opens, appends to, truncates, discards, closes and deletes files of a shared set of names; a file's
     * calls come from several threads, each holding its own writer. Closes everything it opened at the end.
     */
    private static void fileChurn(GroupLockAllocator a, Random rnd, CyclicBarrier start, long until, AtomicLong noSpace,
                                  AtomicLong calls) throws Exception {
        start.await(30, TimeUnit.SECONDS);
        List<String> open = new ArrayList<>();
        while (System.nanoTime() < until) {
            String name = "/d" + rnd.nextInt(3) + "/f" + rnd.nextInt(NAMES);
            int op = rnd.nextInt(12);
            calls.incrementAndGet();
            try {
                if (op < 2 || open.isEmpty()) {
                    await(a.open(name));
                    open.add(name);
                } else if (op < 7) {
                    String f = open.get(rnd.nextInt(open.size()));
                    long at = await(a.fileExtents(f)).stream().mapToLong(Extent::blocks).sum();
                    if (rnd.nextInt(4) == 0) at = rnd.nextInt(2000); // a hole, or a mapped run
                    List<MapRequest> batch = new ArrayList<>();
                    for (int i = 0; i < 1 + rnd.nextInt(8); i++) {
                        int n = 1 + rnd.nextInt(rnd.nextBoolean() ? 8 : 1500);
                        batch.add(MapRequest.allocate(at, n));
                        at += n;
                    }
                    await(a.getBlocks(f, batch));
                } else if (op == 7) {
                    await(a.truncate(open.get(rnd.nextInt(open.size())), rnd.nextInt(3000)));
                } else if (op == 8) {
                    String f = open.get(rnd.nextInt(open.size()));
                    long from = rnd.nextInt(3000);
                    if (rnd.nextBoolean()) await(a.markWritten(f, from, 1 + rnd.nextInt(500)));
                    else await(a.discardUnwritten(f, from, 1 + rnd.nextInt(500)));
                } else if (op < 11) {
                    String f = open.remove(rnd.nextInt(open.size()));
                    await(a.close(f));
                } else {
                    await(a.delete(name)); // refused while another thread has it open
                }
            } catch (AllocationException.NoSpace e) {
                noSpace.incrementAndGet();
            } catch (AllocationException.InvalidRequest | AllocationException.UnknownFile e) {
                // a delete of an open file, or of a name no thread opened yet or one deleted already
                assertTrue(op == 11, "only a delete may be refused so: " + e);
            }
        }
        for (String f : open) await(a.close(f));
    }

    /** Reads the figures and pages the free extents while the others work. */
    private static void readers(GroupLockAllocator a, CyclicBarrier start, long until) throws Exception {
        start.await(30, TimeUnit.SECONDS);
        while (System.nanoTime() < until) {
            long free = await(a.freeBlocks());
            assertTrue(free >= 0 && free <= GEOMETRY.dataBlocks(), "free count out of range: " + free);
            await(a.stats());
            await(a.fragmentationScore());
            long from = 0;
            while (from >= 0 && from < GEOMETRY.totalBlocks())
                from = await(a.freeExtents(from, GEOMETRY.totalBlocks(), 64)).nextCursor();
        }
    }

    /** Every block held once, every held block used, free + held = data blocks, figures equal to the groups. */
    private static void checkAccounts(GroupLockAllocator a, List<Extent> held) {
        List<Extent> sorted = new ArrayList<>(held);
        sorted.sort(null);
        long heldBlocks = 0;
        for (int i = 0; i < sorted.size(); i++) {
            Extent e = sorted.get(i);
            if (i > 0) assertTrue(sorted.get(i - 1).end() <= e.start(), "held twice: " + sorted.get(i - 1) + " and " + e);
            heldBlocks += e.blocks();
            for (long b = e.start(); b < e.end(); b++) {
                assertFalse(GEOMETRY.isSystemZone(b), "system-zone block " + b + " held in " + e);
                assertTrue(a.group(GEOMETRY.groupOf(b)).isUsed(b), "held block " + b + " is free in its bitmap");
            }
        }
        long free = await(a.freeBlocks());
        assertEquals(GEOMETRY.dataBlocks(), free + heldBlocks, "free + held != data blocks");
        long groupsFree = 0;
        for (int g = 0; g < GEOMETRY.groups(); g++) {
            BlockGroup group = a.group(g);
            assertEquals(group.freeBlocks(), a.volume().freeBlocks(g), "group " + g + "'s published free count");
            assertEquals(group.largestFreeRun(), a.volume().largestFreeRun(g), "group " + g + "'s published longest run");
            long counted = 0;
            for (long b = group.firstDataBlock(); b < group.end(); b++) if (!group.isUsed(b)) counted++;
            assertEquals(counted, group.freeBlocks(), "group " + g + "'s free count against its bitmap");
            groupsFree += counted;
        }
        assertEquals(groupsFree, free, "the volume's free count is the groups' sum");
        long listed = await(a.freeExtents(0, GEOMETRY.totalBlocks(), Integer.MAX_VALUE)).extents().stream()
                .mapToLong(Extent::blocks).sum();
        assertEquals(free, listed, "the free extents add up to the free count");
    }

    /** The thread's result within 30 s; a hang fails with the threads deadlocked, if any. */
    private static <T> T within(Future<T> f) throws Exception {
        try {
            return f.get(30, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            long[] ids = ManagementFactory.getThreadMXBean().findDeadlockedThreads();
            StringBuilder s = new StringBuilder("a thread did not finish within 30 s");
            if (ids != null)
                for (ThreadInfo t : ManagementFactory.getThreadMXBean().getThreadInfo(ids, true, true))
                    s.append("\n").append(t);
            return fail(s.toString());
        } catch (java.util.concurrent.ExecutionException e) {
            Throwable c = e.getCause() instanceof CompletionException ce && ce.getCause() != null ? ce.getCause() : e.getCause();
            if (c instanceof Error err) throw err;
            throw new AssertionError("a thread failed: " + c, c);
        }
    }
}
