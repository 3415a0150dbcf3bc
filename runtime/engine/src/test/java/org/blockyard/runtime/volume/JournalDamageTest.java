package org.blockyard.runtime.volume;

import static org.blockyard.runtime.volume.Volumes.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.blockyard.api.alloc.Extent;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A journal damaged in its middle, or holding a committed transaction that logs a block outside the metadata:
 * recovery replays nothing and says what it holds back, fsck --repair replays every whole committed
 * transaction (the ones after the damage too), and the journal's sequence moves past everything in the log.
 */
class JournalDamageTest {
    @TempDir
    Path dir;

    /** Checkpoints only when the log is full, so the log keeps every transaction. */
    private static final Journal.Settings KEEP_LOG = new Journal.Settings(0, 64, 1.0);

    /** The extents of each acknowledged call, in order, and the log the kill left. */
    private record Killed(Path image, List<List<Extent>> calls, List<Journal.LoggedTransaction> log) {
        List<Extent> acknowledged() {
            return calls.stream().flatMap(List::stream).toList();
        }
    }

    /** Acknowledged extent allocations, each its own commit, then a kill: the log holds them all. */
    private Killed allocationsThenKill(int calls) {
        Path image = dir.resolve("vol.img");
        Volume.mkfs(image, Layout.make(4096, 4096L * 4, 4096, 64, 1024, 0, 0));
        Volume v = Volume.open(image, Volumes.CONFIG, KEEP_LOG);
        List<List<Extent>> acknowledged = new ArrayList<>();
        for (int i = 0; i < calls; i++) acknowledged.add(join(v.allocator().allocate(3 + i % 5, 1, 64, -1)));
        v.abandon();
        List<Journal.LoggedTransaction> log = Volume.journalTransactions(image);
        assertTrue(log.size() >= calls / 2, "transactions in the log: " + log.size());
        return new Killed(image, acknowledged, log);
    }

    /**
     * The calls whose extents the volume holds are the first {@code k} of them, for some {@code k}, and no more:
     * a state the volume was in after a commit, as a crash would leave it. Answers {@code k}.
     */
    private static int assertAPrefixOwned(Path image, List<List<Extent>> calls) {
        Metadata m = Volume.inspect(image);
        Metadata.Entry owner = m.owner(Volume.DEFAULT_OWNER);
        int k = 0;
        while (k < calls.size() && calls.get(k).stream().allMatch(e -> owner.map.holdsIdentity(e.start(), e.blocks()))) k++;
        for (int i = k; i < calls.size(); i++)
            for (Extent e : calls.get(i))
                for (long b = e.start(); b < e.start() + e.blocks(); b++)
                    assertTrue(!owner.map.holdsIdentity(b, 1) && !m.isUsed(b), "call " + i + " after the first lost one ("
                            + k + "): block " + b + " is neither owned nor used");
        assertAllOwned(image, calls.subList(0, k).stream().flatMap(List::stream).toList());
        return k;
    }

    private static void assertAllOwned(Path image, List<Extent> extents) {
        Metadata m = Volume.inspect(image);
        Metadata.Entry owner = m.owner(Volume.DEFAULT_OWNER);
        for (Extent e : extents) {
            assertTrue(owner.map.holdsIdentity(e.start(), e.blocks()), "acknowledged " + e + " still owned");
            for (long b = e.start(); b < e.start() + e.blocks(); b++) assertTrue(m.isUsed(b), "block " + b + " used");
        }
    }

    @Test
    void aFlippedByteInAMiddleTransactionHoldsTheVolumeBackAndRepairLeavesItAsItWasBefore() {
        Killed k = allocationsThenKill(60);
        Journal.LoggedTransaction middle = k.log().get(k.log().size() / 2);
        Tamper.flip(k.image(), middle.imageBlocks().get(1) * 4096 + 777); // a logged image: its commit checksum fails
        String before = Tamper.digest(k.image());

        VolumeException.JournalDamaged damaged = assertThrows(VolumeException.JournalDamaged.class,
                () -> Volumes.open(k.image()).close());
        long last = k.log().get(k.log().size() - 1).seq();
        assertEquals(middle.seq(), damaged.skipped().get(0), damaged.getMessage());
        assertEquals(last, damaged.skipped().get(damaged.skipped().size() - 1), damaged.getMessage());
        assertTrue(damaged.getMessage().contains("transaction " + middle.seq()), damaged.getMessage());
        assertTrue(damaged.skippedBlocks() > 0);
        assertEquals(before, Tamper.digest(k.image()), "a refused open writes nothing");

        Fsck.Result look = Fsck.check(k.image(), false);
        assertEquals(1, look.count(Fsck.Kind.JOURNAL), look::report);
        assertEquals(4, look.exitCode(), look::report);
        assertEquals(before, Tamper.digest(k.image()), "fsck without --repair writes nothing");

        Fsck.Result repaired = Fsck.check(k.image(), true);
        assertTrue(repaired.problems().stream().filter(p -> p.kind() == Fsck.Kind.JOURNAL).allMatch(Fsck.Problem::repaired),
                repaired::report);
        assertTrue(repaired.report().contains("left as it was after transaction " + (middle.seq() - 1)), repaired::report);
        // The transactions before the damaged one are replayed, and nothing after: a state the volume was in.
        int kept = assertAPrefixOwned(k.image(), k.calls());
        assertTrue(kept > 0 && kept < k.calls().size(), "calls kept: " + kept + " of " + k.calls().size());
        try (Volume v = Volumes.open(k.image())) {
            assertEquals(0, v.recovery().transactionsReplayed());
        }
        Fsck.Result after = Fsck.check(k.image(), false);
        assertTrue(after.clean(), after::report);
        assertEquals(kept, assertAPrefixOwned(k.image(), k.calls()));
    }

    @Test
    void aDamagedDescriptorInTheMiddleIsNotTakenForTheEndOfTheLog() {
        Killed k = allocationsThenKill(40);
        Journal.LoggedTransaction middle = k.log().get(k.log().size() / 3);
        Tamper.flip(k.image(), middle.imageBlocks().get(0) * 4096); // its descriptor's magic
        VolumeException.JournalDamaged damaged = assertThrows(VolumeException.JournalDamaged.class,
                () -> Volumes.open(k.image()).close());
        assertEquals(middle.seq(), damaged.skipped().get(0), damaged.getMessage());
        Fsck.check(k.image(), true);
        int kept = assertAPrefixOwned(k.image(), k.calls());
        assertTrue(kept > 0 && kept < k.calls().size(), "calls kept: " + kept);
        assertTrue(Fsck.check(k.image(), false).clean());
    }

    /** A committed transaction (its checksum valid) that logs a data block, appended after good ones. */
    @Test
    void aCommittedTransactionLoggingADataBlockIsHeldBackAndRepairKeepsTheOnesBeforeIt() {
        Killed k = allocationsThenKill(30);
        Superblock sb = Superblock.decode(Tamper.read(k.image(), 0, Superblock.BYTES), 0, "t");
        Layout layout = sb.layout();
        Journal.LoggedTransaction last = k.log().get(k.log().size() - 1);
        long pos = last.position() + last.imageBlocks().size();
        long dataBlock = layout.geometry().groupStart(2) + 100;
        byte[] junk = new byte[4096];
        new Random(7).nextBytes(junk);
        ByteBuffer tx = Journal.encode(layout, sb.uuidBytes(), last.seq() + 1, List.of(dataBlock),
                (home, into, at) -> System.arraycopy(junk, 0, into, at, 4096));
        for (int i = 0; i < tx.capacity() / 4096; i++) {
            byte[] b = new byte[4096];
            tx.get(i * 4096, b);
            Tamper.write(k.image(), Journal.layoutBlock(layout, pos + i) * 4096, b);
        }
        String before = Tamper.digest(k.image());
        VolumeException.JournalDamaged damaged = assertThrows(VolumeException.JournalDamaged.class,
                () -> Volumes.open(k.image()).close());
        assertEquals(List.of(last.seq() + 1), damaged.skipped(), damaged.getMessage());
        assertTrue(damaged.getMessage().contains("logs block " + dataBlock), damaged.getMessage());
        assertEquals(before, Tamper.digest(k.image()));

        Fsck.Result repaired = Fsck.check(k.image(), true);
        assertEquals(1, repaired.count(Fsck.Kind.JOURNAL), repaired::report);
        assertAllOwned(k.image(), k.acknowledged());
        assertTrue(Fsck.check(k.image(), false).clean());
        try (Volume v = Volumes.open(k.image())) {
            assertEquals(4, join(v.allocator().allocate(4, 1, 64, -1)).stream().mapToLong(Extent::blocks).sum());
        }
    }

    @Test
    void aRepairedJournalStartsPastEverySequenceItHeld() {
        Killed k = allocationsThenKill(20);
        long last = k.log().get(k.log().size() - 1).seq();
        Journal.LoggedTransaction middle = k.log().get(k.log().size() / 2);
        Tamper.flip(k.image(), middle.imageBlocks().get(1) * 4096 + 5);
        Fsck.check(k.image(), true);
        Superblock sb = Superblock.decode(Tamper.read(k.image(), 0, Superblock.BYTES), 0, "t");
        ByteBuffer j = Layout.le(Tamper.read(k.image(), sb.layout().journalStart() * 4096L, 4096));
        assertTrue(j.getLong(8) > last, "journal sequence " + j.getLong(8) + " past " + last);
    }

    @Test
    void aTornLastTransactionIsDroppedAndTheNextOneTakesANewNumber() {
        Killed k = allocationsThenKill(10);
        Journal.LoggedTransaction last = k.log().get(k.log().size() - 1);
        Tamper.flip(k.image(), last.imageBlocks().get(1) * 4096 + 9); // torn: it was never acknowledged
        Volume v = Volume.open(k.image(), Volumes.CONFIG, KEEP_LOG);
        assertEquals(k.log().size() - 1, v.recovery().transactionsReplayed());
        join(v.allocator().allocate(4, 1, 64, -1));
        v.abandon();
        List<Journal.LoggedTransaction> log = Volume.journalTransactions(k.image());
        assertTrue(log.get(0).seq() > last.seq(), "first new transaction " + log.get(0).seq() + " after the torn "
                + last.seq());
    }

    @Test
    void aJournalSuperblockWithAnImpossibleTailOrSequenceIsCorrupt() {
        for (long[] tailSeq : new long[][] {{Long.MAX_VALUE - 3, 5}, {0, Long.MAX_VALUE - 1}, {-8, 5}}) {
            Path image = dir.resolve("j" + tailSeq[0] + "-" + tailSeq[1] + ".img");
            Volume.mkfs(image, Volumes.layout(2));
            Superblock sb = Superblock.decode(Tamper.read(image, 0, Superblock.BYTES), 0, "t");
            Layout layout = sb.layout();
            Tamper.write(image, layout.journalStart() * 4096L,
                    Journal.superBlock(layout, sb.uuidBytes(), tailSeq[1], tailSeq[0]));
            VolumeException.Corrupt e = assertThrows(VolumeException.Corrupt.class, () -> Volumes.open(image).close());
            assertEquals(VolumeException.Structure.JOURNAL, e.structure(), e.getMessage());
            Fsck.Result r = Fsck.check(image, true);
            assertEquals(1, r.count(Fsck.Kind.JOURNAL), r::report);
            try (Volume v = Volumes.open(image)) {
                join(v.allocator().allocate(4, 1, 64, -1));
            }
            assertTrue(Fsck.check(image, false).clean());
        }
    }
}
