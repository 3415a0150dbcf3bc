package org.blockyard.runtime.volume;

import static org.blockyard.runtime.volume.Volumes.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.api.alloc.MapRequest;

/**
 * How many extents one file-table entry may hold ({@link Layout#maxEntryExtents()}): any single change to an
 * entry within the limit fits one transaction and the table; the call that would take an entry past it, or
 * past what the table has left, is refused with NoSpace, nothing changes, and the journal goes on.
 */
class EntryLimitTest {
    @TempDir
    Path dir;

    /** 4 groups of 8,192 blocks, a 32-block file table and a 32-block journal: 20 table blocks, 3,200 extents. */
    private static final Layout SMALL_JOURNAL = Layout.make(4096, 8192L * 4, 8192, 32, 32, 0, 0);
    /** 4 groups of 4,096 blocks, an 8-block file table and a 256-block journal: the table is the bound. */
    private static final Layout SMALL_TABLE = Layout.make(4096, 4096L * 4, 4096, 8, 256, 0, 0);

    @Test
    void theLimitFollowsFromTheLayout() {
        // 31 log blocks; the journal closes a transaction at 13 blocks, and takes records while it has fewer than
        // 13 - 3: 9 blocks, then one entry's 20, its descriptor and its commit block make 31.
        assertEquals(13, SMALL_JOURNAL.maxTransactionBlocks());
        assertEquals(20, SMALL_JOURNAL.maxEntryTableBlocks());
        assertEquals(3_200, SMALL_JOURNAL.maxEntryExtents());
        assertEquals(8, SMALL_TABLE.maxEntryTableBlocks());
        assertEquals(1_280, SMALL_TABLE.maxEntryExtents());
        // mkfs's defaults: a 1,024-block table and a journal of 1,024 blocks (below 128 MiB) or more.
        Layout small = Layout.make(4096, 32768L * 3, 32768, 1024, 1024, 0, 0);
        assertEquals(514, small.maxEntryTableBlocks());
        assertEquals(82_240, small.maxEntryExtents());
        Layout big = Layout.make(4096, 32768L * 64, 32768, 1024, 16384, 0, 0);
        assertEquals(1024, big.maxEntryTableBlocks(), "the table, with a journal of 64 MiB");
        assertEquals(163_840, big.maxEntryExtents());
    }

    /** The journal never closes a transaction later than the layout's bound says, whatever its settings. */
    @Test
    void theJournalsTransactionCapIsWithinTheLayoutsBound() throws Exception {
        for (Layout l : List.of(SMALL_JOURNAL, SMALL_TABLE, Layout.make(4096, 4096L * 4, 4096, 8, 9, 0, 0),
                Layout.make(1024, 8192L * 4, 8192, 64, 4000, 0, 0))) {
            Path image = dir.resolve("cap-" + l.journalBlocks() + "-" + l.blockSize() + ".img");
            Volume.mkfs(image, l);
            try (FileChannel ch = FileChannel.open(image, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                for (int settings : new int[] {1, 64, 256, 100_000}) {
                    Journal j = new Journal(ch, Metadata.fresh(Superblock.fresh(l)),
                            new Journal.Settings(0, settings, 0.5), 0, 1);
                    assertTrue(j.maxTransactionBlocks() <= l.maxTransactionBlocks(), l + " " + settings);
                }
            }
        }
    }

    /**
     * The worst case, on metadata alone: the running transaction as full as the journal lets it be before it
     * takes one more record, then a change before the first extent of an entry at the limit (every block of
     * its chain rewritten). What the commit logs fits the log, for journals of several sizes.
     */
    @Test
    void aChangeToAnEntryAtTheLimitFitsOneTransactionWhateverCameBefore() {
        for (int journal : new int[] {9, 16, 32, 64, 256, 1024}) {
            Layout l = Layout.make(4096, 4096L * 700, 4096, 1024, journal, 0, 0);
            Metadata m = Metadata.fresh(Superblock.fresh(l));
            int slots = l.maxEntryTableBlocks(), runs = l.maxEntryExtents();
            m.created(1, Metadata.KIND_OWNER, "big");
            List<Extent> every = new ArrayList<>();
            Geometry g = l.geometry();
            long b = g.groupStart(1) + g.systemBlocks(1);
            for (int i = 0; i < runs; i++, b += 2) {
                if (b + 1 >= g.groupStart(g.groupOf(b)) + g.groupBlocks(g.groupOf(b))) b = g.groupStart(g.groupOf(b) + 1)
                        + g.systemBlocks(g.groupOf(b) + 1);
                every.add(new Extent(b, 1));
            }
            m.ownerChanged(1, every, true);
            m.takeCommit();
            int maxTx = l.maxTransactionBlocks(), margin = l.bitmapBlocks() + 2;
            // Bitmap records of groups the entry does not use, as many as leave the journal taking one more record
            // (it takes one while the transaction counts fewer than maxTx - margin blocks).
            int group = g.groups() - 1;
            while (m.pendingBlocks() + (l.bitmapBlocks() + 1) + margin < maxTx) {
                m.bitmapChanged(group, g.groupStart(group) + g.systemBlocks(group), 1, true);
                group--;
            }
            assertTrue(m.pendingBlocks() + margin < maxTx || m.pendingBlocks() == 0, "the journal takes the next record");
            m.ownerChanged(1, List.of(every.get(0)), false); // before the first extent: the whole chain
            m.ownerChanged(1, List.of(new Extent(every.get(0).start() + 1, 1)), true);
            int pending = m.pendingBlocks();
            int logged = m.takeCommit().size();
            assertTrue(pending >= logged, "counted " + pending + ", logged " + logged);
            assertTrue(logged >= slots, "the chain of " + slots + " blocks is rewritten: " + logged);
            assertTrue(Journal.transactionBlocks(logged, l.blockSize()) <= journal - 1, "journal of " + journal
                    + " blocks: a transaction of " + logged + " blocks, entry of " + slots + " table blocks");
        }
    }

    /**
     * A chunk of {@code blocks} blocks from {@code at} that the filler held, now {@code owner}'s, with a hole of
     * one block freed at every other block but where {@code keep} says: {@code owner}'s runs, merged.
     */
    private static ExtentMap chunkWithHoles(VolumeAllocator a, String owner, long at, int blocks,
                                            java.util.function.LongPredicate keep) {
        Extent chunk = new Extent(at, blocks);
        join(a.release("filler", List.of(chunk)));
        List<Extent> got = join(a.allocate(owner, blocks, 1, 0, at));
        ExtentMap m = new ExtentMap();
        for (Extent e : got) m.put(e.start(), e.start(), e.blocks(), false);
        assertEquals(List.of(new ExtentMap.Run(at, at, blocks, false)), m.runs(), "the chunk: " + got);
        List<Extent> holes = new ArrayList<>();
        for (long b = at + 1; b < at + blocks - 1; b += 2) if (!keep.test(b)) holes.add(new Extent(b, 1));
        join(a.release(owner, holes));
        for (Extent h : holes) m.remove(h.start(), 1, false);
        return m;
    }

    /**
     * An owner driven to the limit (3,200 extents: a chunk with a hole at every other block) gets NoSpace on
     * the allocation and on the release that would take it past; nothing changes; a release in the middle of
     * its map and other owners' and files' calls go on and are durable; a close and a reopen keep everything.
     */
    @Test
    void anOwnerAtTheLimitIsRefusedTheCallThatWouldPassItAndTheJournalGoesOn() {
        Path image = dir.resolve("owner-limit.img");
        Volume.mkfs(image, SMALL_JOURNAL);
        int limit = SMALL_JOURNAL.maxEntryExtents();
        ExtentMap big;
        Extent middle, triple;
        try (Volume v = Volumes.open(image)) {
            VolumeAllocator a = v.allocator();
            Geometry g = v.geometry();
            join(a.allocate("filler", join(a.freeBlocks()), 1, 0, -1));
            long at = g.groupStart(1) + g.systemBlocks(1);
            // 3,199 holes in 6,401 blocks make 3,200 runs of one block but one, of three (two holes left out).
            long tripleStart = at + 2 * 1000;
            big = chunkWithHoles(a, "big", at, 2 * limit + 1, b -> b == tripleStart + 1);
            assertEquals(limit, big.size(), "at the limit");
            triple = new Extent(tripleStart, 3);
            assertTrue(big.holdsIdentity(triple.start(), 3) && !big.holdsIdentity(triple.start() - 1, 1));

            join(a.release("filler", List.of(new Extent(g.groupStart(3) + 2000, 64)))); // apart from the big owner
            long free = join(a.freeBlocks());
            AllocationException past = Volumes.refusal(a.allocate("big", 2, 1, 0, -1));
            assertInstanceOf(AllocationException.NoSpace.class, past, past.getMessage());
            assertTrue(past.getMessage().contains("'big'") && past.getMessage().contains(limit + " extents")
                    && past.getMessage().contains("would hold " + (limit + 1)), past.getMessage());
            assertEquals(free, join(a.freeBlocks()), "the refused allocation's blocks went back");
            AllocationException cut = Volumes.refusal(a.release("big", List.of(new Extent(triple.start() + 1, 1))));
            assertInstanceOf(AllocationException.NoSpace.class, cut, cut.getMessage());
            assertEquals(free, join(a.freeBlocks()), "the refused release freed nothing");

            middle = new Extent(at + limit, 1); // a run of one block, in the middle: the chain from there on
            assertTrue(big.holdsIdentity(middle.start(), 1) && !big.holdsIdentity(middle.start() + 1, 1));
            join(a.release("big", List.of(middle)));
            big.remove(middle.start(), 1, false);
            List<Extent> other = join(a.allocate("other", 8, 1, 0, -1));
            assertEquals(8, other.stream().mapToLong(Extent::blocks).sum());
            join(a.open("f"));
            join(a.getBlocks("f", 0, 8, true));
            join(a.close("f"));
            // Allocations for the big owner go on until the one that would take it past the limit again.
            AllocationException again = null;
            for (int i = 0; i < 10 && again == null; i++) {
                try {
                    for (Extent e : join(a.allocate("big", 2, 1, 0, -1))) big.put(e.start(), e.start(), e.blocks(), false);
                    assertTrue(big.size() <= limit, big.size() + " extents");
                } catch (AllocationException e) {
                    again = e;
                }
            }
            assertInstanceOf(AllocationException.NoSpace.class, again);
        }
        Fsck.Result r = Fsck.check(image, false);
        assertTrue(r.clean(), r::report);
        Metadata m = Volume.inspect(image);
        assertEquals(big.runs(), m.owner("big").map.runs(), "the big owner's map after a close");
        try (Volume v = Volumes.open(image)) {
            assertTrue(v.recovery().wasClean());
            join(v.allocator().release("big", List.of(triple))); // still held, and the journal works
        }
        assertTrue(Fsck.check(image, false).clean());
    }

    /**
     * Two owners filling an 8-block table: the growth that would need a ninth block is refused with NoSpace
     * naming the table, before any record, and the journal goes on (without the check, the commit that laid
     * the entries out threw inside the journal and failed it for good).
     */
    @Test
    void anEntryThatWouldOutgrowTheTableIsRefusedAndTheJournalGoesOn() {
        Path image = dir.resolve("table-full.img");
        Volume.mkfs(image, SMALL_TABLE);
        int per = SMALL_TABLE.extentsPerTableBlock();
        ExtentMap a5, b2;
        try (Volume v = Volumes.open(image)) {
            VolumeAllocator a = v.allocator();
            Geometry g = v.geometry();
            join(a.allocate("filler", join(a.freeBlocks()), 1, 0, -1));
            // The filler's entry takes 1 block, "a" 5 (800 runs) and "b" 2 (320 runs): the table's 8.
            long at = g.groupStart(1) + g.systemBlocks(1);
            a5 = chunkWithHoles(a, "a", at, 2 * 5 * per - 1, b -> false);
            b2 = chunkWithHoles(a, "b", at + 2 * 5 * per + 10, 2 * 2 * per - 1, b -> false);
            assertEquals(5 * per, a5.size());
            assertEquals(2 * per, b2.size());
            join(a.release("filler", List.of(new Extent(g.groupStart(3) + 2000, 64)))); // apart from both
            long free = join(a.freeBlocks());
            AllocationException full = Volumes.refusal(a.allocate("b", 2, 1, 0, -1));
            assertInstanceOf(AllocationException.NoSpace.class, full, full.getMessage());
            assertTrue(full.getMessage().contains("file table is full") && full.getMessage().contains("'b'"),
                    full.getMessage());
            assertEquals(free, join(a.freeBlocks()), "the refused allocation's blocks went back");
            // The journal goes on: "a" gives back a block's worth of runs, and then "b" may grow.
            List<Extent> back = new ArrayList<>();
            for (ExtentMap.Run run : a5.runs().subList(1, per + 1)) back.add(new Extent(run.physical(), run.blocks()));
            join(a.release("a", back));
            for (Extent e : back) a5.remove(e.start(), e.blocks(), false);
            for (Extent e : join(a.allocate("b", 2, 1, 0, -1))) b2.put(e.start(), e.start(), e.blocks(), false);
            assertEquals(2 * per + 1, b2.size());
        }
        Fsck.Result r = Fsck.check(image, false);
        assertTrue(r.clean(), r::report);
        Metadata m = Volume.inspect(image);
        assertEquals(a5.runs(), m.owner("a").map.runs());
        assertEquals(b2.runs(), m.owner("b").map.runs());
    }

    /**
     * A file driven to the limit through getBlocks (1,280 runs, each a hole apart): a getBlocks that would map
     * one more run, and a conversion or a discard that would cut a run in the middle, are refused with NoSpace;
     * a conversion of a whole run and a truncate go on; the close and a reopen keep everything.
     */
    @Test
    void aFileAtTheLimitIsRefusedTheGrowthButNotTheChangesThatKeepItWithin() {
        Path image = dir.resolve("file-limit.img");
        Volume.mkfs(image, SMALL_TABLE);
        int limit = SMALL_TABLE.maxEntryExtents();
        List<BlockRun> runs;
        try (Volume v = Volumes.open(image)) {
            VolumeAllocator a = v.allocator();
            join(a.open("f"));
            List<MapRequest> requests = new ArrayList<>();
            requests.add(MapRequest.allocate(0, 4));
            for (int i = 1; i < limit; i++) requests.add(MapRequest.allocate(4L + 2 * i, 1));
            runs = join(a.getBlocks("f", requests));
            assertEquals(limit, join(a.fileExtents("f")).size());
            long free = join(a.freeBlocks());
            AllocationException more = Volumes.refusal(a.getBlocks("f", 1_000_000, 1, true));
            assertInstanceOf(AllocationException.NoSpace.class, more, more.getMessage());
            assertTrue(more.getMessage().contains("'f'") && more.getMessage().contains(limit + " extents"),
                    more.getMessage());
            assertInstanceOf(AllocationException.NoSpace.class, Volumes.refusal(a.markWritten("f", 1, 1)), "a cut in two");
            assertInstanceOf(AllocationException.NoSpace.class, Volumes.refusal(a.discardUnwritten("f", 1, 2)), "a hole");
            assertEquals(free, join(a.freeBlocks()));
            assertEquals(limit, join(a.fileExtents("f")).size(), "nothing changed");
            assertEquals(4L, join(a.markWritten("f", 0, 4)), "a whole run converted");
            assertEquals(1L, join(a.markWritten("f", 6, 1)), "and another");
            join(a.truncate("f", 4L + 2 * (limit - 10)));
            join(a.getBlocks("f", 1_000_000, 1, true)); // room again
            join(a.close("f"));
        }
        Fsck.Result r = Fsck.check(image, false);
        assertTrue(r.clean(), r::report);
        Metadata m = Volume.inspect(image);
        List<ExtentMap.Run> stored = m.entry("f").map.runs();
        assertEquals(limit - 10 + 1, stored.size());
        assertEquals(runs.get(0).physicalStart(), stored.get(0).physical());
        assertFalse(stored.get(0).unwritten());
        try (Volume v = Volumes.open(image)) {
            join(v.allocator().open("f"));
            join(v.allocator().getBlocks("f", 2_000_000, 1, true));
            join(v.allocator().close("f"));
        }
        assertTrue(Fsck.check(image, false).clean());
    }
}
