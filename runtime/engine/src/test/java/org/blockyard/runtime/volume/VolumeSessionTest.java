package org.blockyard.runtime.volume;

import static org.blockyard.runtime.volume.Volumes.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.AllocationSession;
import org.blockyard.api.alloc.Extent;

/**
 * Sessions of a durable volume's owners over real loans: calls from several threads conserve blocks and survive a
 * reopen; a volume abandoned with loans out (as {@code kill -9} leaves it) recovers every acknowledged extent as
 * its owner's and every block lent and not handed out as free; a double free through a session is refused and
 * changes nothing; at the owner-entry limit a session's calls are refused with NoSpace and change nothing.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class VolumeSessionTest {
    @TempDir
    Path dir;

    /** No loan goes back for idleness while a test looks at it. */
    private static final Config NOT_IDLE = ConfigFactory.parseString("blockyard.alloc.sessions.idle = 1h")
            .withFallback(Volumes.CONFIG);

    private static final long[] SIZES = {1, 4, 8};

    private static Volume open(Path image) {
        return Volume.open(image, NOT_IDLE, Volumes.FAST);
    }

    private static long blocks(List<Extent> extents) {
        return extents.stream().mapToLong(Extent::blocks).sum();
    }

    private static ExtentMap mapOf(List<Extent> extents) {
        ExtentMap m = new ExtentMap();
        for (Extent e : extents) m.put(e.start(), e.start(), e.blocks(), false);
        return m;
    }

    private static List<ExtentMap.Run> stored(Metadata m, String owner) {
        Metadata.Entry e = m.owner(owner);
        return e == null ? List.of() : e.map.runs();
    }

    /**
     * Random allocations and releases through {@code s}, answered ones only in the list it answers: what the
     * session's owner holds.
     */
    private static List<Extent> churn(AllocationSession s, long seed, int calls) {
        Random r = new Random(seed);
        List<Extent> mine = new ArrayList<>();
        for (int i = 0; i < calls; i++) {
            if (mine.isEmpty() || r.nextInt(3) > 0) {
                mine.addAll(join(s.allocate(SIZES[r.nextInt(SIZES.length)], 1, 0, -1)));
            } else {
                Extent e = mine.remove(r.nextInt(mine.size()));
                join(s.release(List.of(e)));
            }
        }
        return mine;
    }

    /** Runs {@code threads} churns at once, each in a session of owner {@code owner-i} opened on its thread. */
    private static Map<String, List<Extent>> churnAll(ExecutorService pool, VolumeAllocator a, int threads, int calls,
                                                      boolean close) throws Exception {
        List<Future<List<Extent>>> done = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int seed = t;
            done.add(pool.submit(() -> {
                AllocationSession s = a.openSession("owner-" + seed);
                List<Extent> mine = churn(s, seed, calls);
                if (close) s.close();
                return mine;
            }));
        }
        Map<String, List<Extent>> held = new TreeMap<>();
        for (int t = 0; t < threads; t++) held.put("owner-" + t, done.get(t).get(60, TimeUnit.SECONDS));
        return held;
    }

    @Test
    void sessionsOfSeveralThreadsServeFromTheirLoansConserveBlocksAndSurviveAReopen() throws Exception {
        Path image = Volumes.make(dir, 4);
        int threads = 4, calls = 400;
        Map<String, List<Extent>> held;
        long free0;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try (Volume v = open(image)) {
            VolumeAllocator a = v.allocator();
            free0 = join(a.freeBlocks());
            long messages0 = join(a.stats()).messages();
            held = churnAll(pool, a, threads, calls, true);
            long messages = join(a.stats()).messages() - messages0;
            // Every call through the plain path sends at least one message to a group actor: most calls here sent none.
            assertTrue(messages < threads * calls / 2, messages + " group messages for " + threads * calls + " calls");
            long kept = held.values().stream().mapToLong(VolumeSessionTest::blocks).sum();
            assertTrue(kept > 0);
            assertEquals(free0 - kept, (long) join(a.freeBlocks()), "every block is free or held, once");
            assertEquals(0, join(a.stats()).sessions(), "the sessions closed");
        } finally {
            pool.shutdownNow();
        }
        Fsck.Result r = Fsck.check(image, false);
        assertTrue(r.clean(), r::report);
        Metadata m = Volume.inspect(image);
        for (Map.Entry<String, List<Extent>> e : held.entrySet())
            assertEquals(mapOf(e.getValue()).runs(), stored(m, e.getKey()), e.getKey() + " after a close");
        try (Volume v = open(image)) {
            assertTrue(v.recovery().wasClean());
            long kept = held.values().stream().mapToLong(VolumeSessionTest::blocks).sum();
            assertEquals(free0 - kept, (long) join(v.allocator().freeBlocks()));
            // The owners' extents are theirs after the reopen: released through a new session, all of them.
            try (AllocationSession s = v.allocator().openSession("owner-0")) {
                join(s.release(held.get("owner-0")));
            }
            assertEquals(free0 - kept + blocks(held.get("owner-0")), (long) join(v.allocator().freeBlocks()));
        }
        assertTrue(Fsck.check(image, false).clean());
    }

    @Test
    void aVolumeAbandonedWithLoansOutKeepsEveryAcknowledgedExtentAndFreesWhatWasLentAndNotHandedOut()
            throws Exception {
        Path image = Volumes.make(dir, 4);
        int threads = 3;
        Map<String, List<Extent>> held;
        long free0, loaned;
        ExecutorService pool = Executors.newFixedThreadPool(threads); // the sessions' threads live on: loans stay out
        try {
            Volume v = open(image);
            VolumeAllocator a = v.allocator();
            free0 = join(a.freeBlocks());
            held = churnAll(pool, a, threads, 300, false);
            loaned = join(a.stats()).loanedBlocks();
            assertTrue(loaned > 0, "blocks on loan and not handed out when the volume dies");
            assertEquals(threads, join(a.stats()).sessions());
            v.abandon();
        } finally {
            pool.shutdownNow();
        }
        long kept = held.values().stream().mapToLong(VolumeSessionTest::blocks).sum();
        try (Volume v = open(image)) {
            assertFalse(v.recovery().wasClean());
            assertTrue(v.recovery().leaksFreed() > 0, "the loans were freed: " + v.recovery() + ", " + loaned
                    + " blocks on loan");
            assertEquals(free0 - kept, (long) join(v.allocator().freeBlocks()),
                    "only the acknowledged extents are used; every block lent and not handed out is free");
        }
        Fsck.Result r = Fsck.check(image, false);
        assertTrue(r.clean(), r::report);
        Metadata m = Volume.inspect(image);
        for (Map.Entry<String, List<Extent>> e : held.entrySet())
            assertEquals(mapOf(e.getValue()).runs(), stored(m, e.getKey()), e.getKey()
                    + ": every acknowledged allocation there and every acknowledged release undone nowhere");
    }

    @Test
    void aDoubleFreeThroughASessionIsRefusedAndChangesNothing() {
        Path image = Volumes.make(dir, 2);
        try (Volume v = open(image)) {
            VolumeAllocator a = v.allocator();
            try (AllocationSession s = a.openSession("o"); AllocationSession p = a.openSession("p")) {
                List<Extent> x = new ArrayList<>(), y = new ArrayList<>();
                for (int i = 0; i < 20; i++) x.addAll(join(s.allocate(4, 1, 0, -1)));
                for (int i = 0; i < 20; i++) y.addAll(join(s.allocate(4, 1, 0, -1)));
                join(s.release(x)); // back into the loan: free, still lent to the session
                long free = join(a.freeBlocks());
                for (Extent e : List.of(x.get(0), x.get(19))) {
                    AllocationException twice = Volumes.refusal(s.release(List.of(e)));
                    assertInstanceOf(AllocationException.InvalidRequest.class, twice, twice.getMessage());
                    assertTrue(twice.getMessage().contains("not held by owner 'o'"), twice.getMessage());
                }
                AllocationException mixed = Volumes.refusal(s.release(List.of(y.get(0), x.get(3))));
                assertInstanceOf(AllocationException.InvalidRequest.class, mixed, mixed.getMessage());
                AllocationException overlap = Volumes.refusal(s.release(List.of(y.get(1), y.get(1))));
                assertInstanceOf(AllocationException.DoubleFree.class, overlap, overlap.getMessage());
                AllocationException other = Volumes.refusal(p.release(List.of(y.get(2))));
                assertTrue(other.getMessage().contains("not held by owner 'p'"), other.getMessage());
                AllocationException plain = Volumes.refusal(a.release("o", List.of(x.get(5))));
                assertInstanceOf(AllocationException.InvalidRequest.class, plain, plain.getMessage());
                assertEquals(free, (long) join(a.freeBlocks()), "the refused releases freed nothing");
                assertEquals(mapOf(y).runs(), ownedNow(v, "o"), "o holds y alone");
                // The blocks refused are still the owner's: released once, through the session.
                join(s.release(y.subList(0, 3)));
                assertEquals(free + 12, (long) join(a.freeBlocks()));
                y = new ArrayList<>(y.subList(3, y.size()));
                // Handed out again from the loan, then freed through the plain call: the session cannot free them again.
                List<Extent> z = join(s.allocate(4, 1, 0, -1));
                join(a.release("o", z));
                long after = join(a.freeBlocks());
                AllocationException gone = Volumes.refusal(s.release(z));
                assertInstanceOf(AllocationException.InvalidRequest.class, gone, gone.getMessage());
                assertEquals(after, (long) join(a.freeBlocks()));
                assertEquals(mapOf(y).runs(), ownedNow(v, "o"));
            }
        }
        Fsck.Result r = Fsck.check(image, false);
        assertTrue(r.clean(), r::report);
    }

    /** {@code owner}'s runs as the allocator holds them now. */
    private static List<ExtentMap.Run> ownedNow(Volume v, String owner) {
        return v.allocator().ownerRuns(owner);
    }

    @Test
    void atTheOwnerEntryLimitASessionsCallsAreRefusedWithNoSpaceAndChangeNothing() {
        // A 9-block journal: one entry holds one table block of extents.
        Layout layout = Layout.make(4096, 4096L * 4, 4096, 8, 9, 0, 0);
        Path image = dir.resolve("limit.img");
        Volume.mkfs(image, layout);
        int limit = layout.maxEntryExtents();
        ExtentMap model;
        try (Volume v = open(image)) {
            VolumeAllocator a = v.allocator();
            try (AllocationSession s = a.openSession("big")) {
                List<Extent> got = new ArrayList<>();
                while (blocks(got) < 2 * limit + 16) got.addAll(join(s.allocate(16, 1, 1, -1))); // 16 pieces of one block
                model = mapOf(got);
                assertTrue(model.size() < limit, model.size() + " runs of " + limit);
                // Holes cut inside runs, freed through the plain call, until the owner holds exactly the limit.
                List<Extent> holes = new ArrayList<>();
                for (ExtentMap.Run run : model.runs()) {
                    for (long b = run.physical() + 1; b + 1 < run.physical() + run.blocks(); b += 2) {
                        if (model.size() + holes.size() >= limit) break;
                        holes.add(new Extent(b, 1));
                    }
                }
                join(a.release("big", holes));
                for (Extent h : holes) model.remove(h.start(), 1, false);
                assertEquals(limit, model.size(), "at the limit");
                long free = join(a.freeBlocks());
                ExtentMap.Run wide = model.runs().stream().filter(x -> x.blocks() >= 3).findFirst().orElseThrow();
                AllocationException cut = Volumes.refusal(s.release(List.of(new Extent(wide.physical() + 1, 1))));
                assertInstanceOf(AllocationException.NoSpace.class, cut, cut.getMessage());
                assertTrue(cut.getMessage().contains("'big'") && cut.getMessage().contains(limit + " "), cut.getMessage());
                assertEquals(free, (long) join(a.freeBlocks()), "the refused release freed nothing");
                // Allocations go on while they merge with the owner's runs, until one that would pass the limit.
                AllocationException past = null;
                for (int i = 0; i < 40 && past == null; i++) {
                    try {
                        for (Extent e : join(s.allocate(2, 1, 0, -1))) model.put(e.start(), e.start(), e.blocks(), false);
                        assertTrue(model.size() <= limit, model.size() + " extents");
                        free = join(a.freeBlocks());
                    } catch (AllocationException e) {
                        past = e;
                    }
                }
                assertNotNull(past, "no allocation was refused at the limit");
                assertInstanceOf(AllocationException.NoSpace.class, past, past.getMessage());
                assertEquals(free, (long) join(a.freeBlocks()), "the refused allocation's blocks went back");
                assertEquals(model.runs(), ownedNow(v, "big"));
            }
        }
        Fsck.Result r = Fsck.check(image, false);
        assertTrue(r.clean(), r::report);
        assertEquals(model.runs(), stored(Volume.inspect(image), "big"));
    }

    @Test
    void aBadOwnerIsRefusedAndAClosedSessionRefusesItsCalls() {
        Path image = Volumes.make(dir, 2);
        try (Volume v = open(image)) {
            VolumeAllocator a = v.allocator();
            assertThrows(AllocationException.InvalidRequest.class, () -> a.openSession(" "));
            assertThrows(AllocationException.InvalidRequest.class, () -> a.openSession(null));
            AllocationSession s = a.openSession();
            List<Extent> e = join(s.allocate(4, 1, 0, -1));
            s.close();
            assertInstanceOf(AllocationException.Closed.class, Volumes.refusal(s.allocate(4, 1, 0, -1)));
            assertInstanceOf(AllocationException.Closed.class, Volumes.refusal(s.release(e)));
            join(a.release(e)); // the default owner's, through the plain call
        }
        assertTrue(Fsck.check(image, false).clean());
    }
}
