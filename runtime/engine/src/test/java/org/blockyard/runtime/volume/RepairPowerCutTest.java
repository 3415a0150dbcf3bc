package org.blockyard.runtime.volume;

import static org.blockyard.runtime.volume.Volumes.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.blockyard.api.alloc.Extent;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * fsck --repair cut by a power failure at every point: its writes are recorded, and every state a disk could
 * be left in is built from them (each prefix of the writes, and each prefix whose last barrier's epoch lost
 * all but one of its writes, as a disk that reorders what it has not yet flushed). Each such image must open
 * (or, when the journal was damaged before the repair, be refused as damaged and repair again) and come to
 * what the whole repair leaves: every acknowledged extent and file, or, past a damaged transaction, the
 * state before it.
 */
class RepairPowerCutTest {
    @TempDir
    Path dir;

    private static final Journal.Settings KEEP_LOG = new Journal.Settings(0, 64, 1.0);

    /** One write of the repair, and the barrier epoch it belongs to (writes of one epoch may land in any order). */
    private record Write(long offset, byte[] bytes, int epoch) {}

    private static final class Recorder implements Fsck.Writes {
        final List<Write> writes = new ArrayList<>();
        int epoch;

        @Override
        public void write(byte[] bytes, long offset) {
            writes.add(new Write(offset, bytes.clone(), epoch));
        }

        @Override
        public void force() {
            epoch++;
        }
    }

    /** What was acknowledged before the kill: each owner's extents and each file's map (logical to physical). */
    private record Acknowledged(List<Extent> owned, Map<String, TreeMap<Long, Long>> files) {}

    private Acknowledged loadThenKill(Path image) {
        Volume.mkfs(image, Layout.make(4096, 4096L * 4, 4096, 64, 512, 0, 0));
        Volume v = Volume.open(image, Volumes.CONFIG, KEEP_LOG);
        List<Extent> owned = new ArrayList<>();
        Map<String, TreeMap<Long, Long>> files = new TreeMap<>();
        for (int i = 0; i < 24; i++) {
            owned.addAll(join(v.allocator().allocate(2 + i % 7, 1, 64, -1)));
            String f = "f" + (i % 4);
            join(v.allocator().open(f));
            long logical = i / 4 * 10L;
            var run = join(v.allocator().getBlocks(f, logical, 6, true));
            TreeMap<Long, Long> m = files.computeIfAbsent(f, k -> new TreeMap<>());
            for (int b = 0; b < run.blocks(); b++) m.put(logical + b, run.physicalStart() + b);
        }
        v.abandon(); // preallocations and reservations stay marked used: the repair frees them as leaks
        return new Acknowledged(owned, files);
    }

    private static void assertHolds(Path image, Acknowledged a, String state) {
        Metadata m = Volume.inspect(image);
        Metadata.Entry owner = m.owner(Volume.DEFAULT_OWNER);
        assertTrue(owner != null, state + ": the owner's entry is there");
        for (Extent e : a.owned()) {
            assertTrue(owner.map.holdsIdentity(e.start(), e.blocks()), state + ": " + e + " owned");
            for (long b = e.start(); b < e.start() + e.blocks(); b++) assertTrue(m.isUsed(b), state + ": " + b + " used");
        }
        for (Map.Entry<String, TreeMap<Long, Long>> f : a.files().entrySet()) {
            Metadata.Entry e = m.entry(f.getKey());
            assertTrue(e != null, state + ": file " + f.getKey() + " is there");
            for (Map.Entry<Long, Long> b : f.getValue().entrySet()) {
                boolean found = false;
                for (ExtentMap.Run r : e.map.runs())
                    found |= b.getKey() >= r.logical() && b.getKey() < r.logical() + r.blocks()
                            && r.physical() + (b.getKey() - r.logical()) == b.getValue();
                assertTrue(found, state + ": " + f.getKey() + " logical " + b.getKey() + " at " + b.getValue());
                assertTrue(m.isUsed(b.getValue()), state + ": " + b.getValue() + " used");
            }
        }
    }

    @Test
    void aRepairCutAtAnyWriteLeavesAVolumeThatOpensWithEverythingAcknowledged() throws IOException {
        Path image = dir.resolve("vol.img");
        Acknowledged a = loadThenKill(image);
        cutEverywhere(image, a, false);
    }

    @Test
    void aRepairOfADamagedJournalCutAtAnyWriteLeavesAVolumeThatOpensOrIsRefusedUntilRepairedAgain()
            throws IOException {
        Path image = dir.resolve("vol.img");
        Acknowledged a = loadThenKill(image);
        List<Journal.LoggedTransaction> log = Volume.journalTransactions(image);
        Tamper.flip(image, log.get(log.size() / 2).imageBlocks().get(1) * 4096 + 99);
        cutEverywhere(image, a, true);
    }

    private void cutEverywhere(Path image, Acknowledged a, boolean damaged) throws IOException {
        Path pristine = dir.resolve("pristine.img");
        sparseCopy(image, pristine);
        Recorder rec = new Recorder();
        Fsck.Result r = Fsck.repairInto(pristine, rec);
        assertTrue(r.problems().stream().anyMatch(p -> p.kind() == Fsck.Kind.LEAK), r::report);
        assertTrue(rec.epoch >= 5, "barriers in the repair: " + rec.epoch);
        List<List<Write>> states = new ArrayList<>();
        for (int n = 0; n <= rec.writes.size(); n++) states.add(rec.writes.subList(0, n));
        for (int n = 0; n < rec.writes.size(); n++) { // the epoch of write n lost everything but write n
            int epoch = rec.writes.get(n).epoch();
            List<Write> s = new ArrayList<>();
            for (Write w : rec.writes) if (w.epoch() < epoch) s.add(w);
            s.add(rec.writes.get(n));
            states.add(s);
        }
        // What the whole repair leaves: every cut state must come to it (the damaged case loses what the dropped
        // transactions changed; the other must keep everything acknowledged).
        Path whole = dir.resolve("whole.img");
        sparseCopy(pristine, whole);
        apply(whole, rec.writes);
        Volumes.open(whole).close();
        Map<String, List<ExtentMap.Run>> expected = entries(whole);
        if (!damaged) assertHolds(whole, a, "the whole repair");
        Files.delete(whole);
        Path cut = dir.resolve("cut.img");
        int refused = 0;
        for (int i = 0; i < states.size(); i++) {
            String state = "state " + i + " of " + states.size() + " (" + states.get(i).size() + " of "
                    + rec.writes.size() + " writes)";
            sparseCopy(pristine, cut);
            apply(cut, states.get(i));
            try {
                Volumes.open(cut).close();
            } catch (VolumeException.JournalDamaged e) {
                assertTrue(damaged, state + ": " + e.getMessage());
                refused++;
                Fsck.check(cut, true);
                Volumes.open(cut).close();
            }
            Fsck.Result after = Fsck.check(cut, false);
            assertTrue(after.clean(), () -> state + ": " + after.report());
            assertEquals(expected, entries(cut), state);
            if (!damaged) assertHolds(cut, a, state);
        }
        if (damaged) assertTrue(refused > 0 && refused < states.size(), "refused " + refused + " of " + states.size());
        Files.delete(cut);
    }

    /** Every entry of the volume and its runs, by kind and name. */
    private static Map<String, List<ExtentMap.Run>> entries(Path image) {
        Map<String, List<ExtentMap.Run>> out = new TreeMap<>();
        for (Metadata.Entry e : Volume.inspect(image).entries()) out.put(e.kind + ":" + e.name, e.map.runs());
        return out;
    }

    private static void apply(Path image, List<Write> writes) {
        try (FileChannel ch = FileChannel.open(image, StandardOpenOption.WRITE)) {
            for (Write w : writes) Volume.write(ch, w.bytes(), w.offset());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Copies {@code from} to {@code to}, leaving holes where {@code from} reads as zeros (volumes are mostly empty). */
    private static void sparseCopy(Path from, Path to) throws IOException {
        Files.deleteIfExists(to);
        try (FileChannel in = FileChannel.open(from, StandardOpenOption.READ);
             FileChannel out = FileChannel.open(to, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ByteBuffer buf = ByteBuffer.allocate(1 << 16);
            byte[] zero = new byte[1 << 16];
            for (long pos = 0; pos < in.size(); pos += buf.capacity()) {
                buf.clear();
                while (buf.hasRemaining() && in.read(buf, pos + buf.position()) > 0) {
                    // fill
                }
                if (java.util.Arrays.equals(buf.array(), 0, buf.position(), zero, 0, buf.position())) continue;
                buf.flip();
                while (buf.hasRemaining()) out.write(buf, pos + buf.position());
            }
            if (out.size() < in.size()) out.write(ByteBuffer.wrap(new byte[1]), in.size() - 1);
        }
    }
}
