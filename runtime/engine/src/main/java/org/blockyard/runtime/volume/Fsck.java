package org.blockyard.runtime.volume;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.blockyard.api.alloc.Geometry;
import org.blockyard.runtime.volume.VolumeException.Structure;

/**
 * Checks a closed volume in e2fsck's passes, and with {@code repair} fixes what is safe.
 * <pre>
 *   pass 0  journal: committed transactions are applied (in memory; written with repair), up to the first
 *           that is not whole or not in sequence; a damaged one with committed ones after it is reported, and
 *           repair drops it and those after it
 *   pass 1  superblock and backups, group descriptors, bitmaps and file-table blocks against their checksums;
 *           every entry's extents: inside the volume, outside the system zone
 *   pass 2  blocks owned twice (two entries, or one entry twice)
 *   pass 5  bitmaps rebuilt from the owners and compared: owned but free, used by no one (leaks);
 *           free counts of the descriptors
 * </pre>
 * Repair frees leaks, marks owned blocks used, rebuilds counts and checksums, restores the superblock from
 * a backup and empties the journal once everything in it that can be replayed is home; its writes are
 * ordered and flushed so that a power cut at any point leaves a volume that opens ({@link #repairWrites}). It never decides between two owners of a block, never moves a file out
 * of the system zone, and never frees leaks while a file-table block is unreadable (its file's blocks would
 * look like leaks): those stay reported for the user. Exit codes as e2fsck's: 0 clean, 1 all problems
 * repaired, 4 problems left.
 */
public final class Fsck {
    public enum Kind {
        SUPERBLOCK, BACKUP_SUPERBLOCK, JOURNAL, DESCRIPTOR_CHECKSUM, BITMAP_CHECKSUM, FILE_TABLE_CHECKSUM,
        OUT_OF_RANGE, SYSTEM_ZONE_FREE, SYSTEM_ZONE_OWNED, OWNED_TWICE, OWNED_BUT_FREE, LEAK, WRONG_FREE_COUNT, MMP
    }

    /** One problem: pass, kind, and a sentence naming the file, logical block, physical block or structure. */
    public record Problem(int pass, Kind kind, String what, boolean repaired) {
        @Override
        public String toString() {
            return "pass " + pass + ": " + what + (repaired ? " [repaired]" : "");
        }
    }

    public record Result(String image, List<Problem> problems, List<String> notes, long files, long owners,
                         long usedBlocks, long dataBlocks) {
        public boolean clean() {
            return problems.isEmpty();
        }

        public long count(Kind kind) {
            return problems.stream().filter(p -> p.kind() == kind).count();
        }

        /** 0 clean, 1 every problem repaired, 4 problems left (e2fsck's codes). */
        public int exitCode() {
            if (problems.isEmpty()) return 0;
            return problems.stream().allMatch(Problem::repaired) ? 1 : 4;
        }

        public String report() {
            StringBuilder b = new StringBuilder();
            for (String n : notes) b.append(n).append('\n');
            for (Problem p : problems) b.append(p).append('\n');
            b.append(image).append(": ").append(files).append(" files, ").append(owners).append(" extent owners, ")
                    .append(usedBlocks).append('/').append(dataBlocks).append(" data blocks used");
            if (!problems.isEmpty()) {
                long left = problems.stream().filter(p -> !p.repaired()).count();
                b.append("; ").append(problems.size()).append(" problems, ").append(left).append(" left");
            }
            return b.append('\n').toString();
        }
    }

    private final List<Problem> problems = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();
    private final boolean repair;

    private Fsck(boolean repair) {
        this.repair = repair;
    }

    public static Result check(Path image, boolean repair) {
        // Held before any descriptor is opened (a refusal must not close one: ImageLock says why): alone for a
        // repair, beside other read-only looks for a check.
        try (ImageLock held = repair ? ImageLock.exclusive(image, false) : ImageLock.shared(image)) {
            Mmp mmp = watchMmp(held, image, repair);
            try {
                return new Fsck(repair).run(image, held.channel());
            } finally {
                if (mmp != null) mmp.release();
            }
        } catch (IOException e) {
            throw new UncheckedIOException("fsck " + image + ": " + e.getMessage(), e);
        }
    }

    /**
     * On a volume with multi-mount protection: a check is refused while another host holds the volume (its MMP
     * block moves); a repair takes the block as an open does, and gives it back clean at its end. A superblock or
     * MMP block that fails its checks is left to the passes, which report it (and a repair rewrites it).
     */
    private static Mmp watchMmp(ImageLock held, Path image, boolean repair) throws IOException {
        Superblock sb;
        try {
            sb = Volume.readSuperblock(held.channel(), image);
        } catch (VolumeException.Corrupt e) {
            return null;
        }
        if (!sb.mmp()) return null;
        try {
            if (!repair) {
                Mmp.checkIdle(held, sb);
                return null;
            }
            return Mmp.take(held, sb, Mmp.holderName("fsck --repair " + image), why -> {});
        } catch (VolumeException.Corrupt e) {
            return null;
        }
    }

    /**
     * A repair of {@code image} whose writes go to {@code out} instead of the image, which is only read: the
     * power-cut tests record them and replay every prefix.
     */
    static Result repairInto(Path image, Writes out) {
        try (ImageLock held = ImageLock.shared(image)) {
            return new Fsck(true).run(image, held.channel(), out);
        } catch (IOException e) {
            throw new UncheckedIOException("fsck " + image + ": " + e.getMessage(), e);
        }
    }

    /** The MMP block failed its checks: a repair writes it clean. */
    private boolean mmpBad;

    /** A check, read only, of the volume {@code ch} holds (an image in memory: {@link CrashImage}). */
    static Result check(Path name, FileChannel ch) throws IOException {
        return new Fsck(false).run(name, ch);
    }

    private void problem(int pass, Kind kind, String what, boolean fixable) {
        problems.add(new Problem(pass, kind, what, repair && fixable));
    }

    private Result run(Path image, FileChannel ch) throws IOException {
        return run(image, ch, Writes.to(ch));
    }

    /** Checks the volume read through {@code ch}; a repair's writes go to {@code out}, after every read. */
    Result run(Path image, FileChannel ch, Writes out) throws IOException {
        // ---- pass 1a: the superblock (pass 0 needs its geometry) ----
        Superblock sb;
        boolean restoreSuper = false;
        try {
            sb = Volume.readSuperblock(ch, image);
        } catch (VolumeException.Corrupt e) {
            sb = findBackup(ch);
            if (sb == null) throw e;
            problem(1, Kind.SUPERBLOCK, "superblock: " + e.getMessage() + "; using the backup in group " + sb.copyOf(), true);
            restoreSuper = true;
            sb = sb.copyIn(0);
        }
        Layout layout = sb.layout();
        Geometry g = layout.geometry();
        int bs = layout.blockSize();
        Superblock primary = sb;
        for (int group = 1; group < g.groups(); group++) {
            if (!Layout.hasBackup(group)) continue;
            long block = layout.headerBlock(group);
            try {
                Superblock b = Superblock.decode(Volume.read(ch, block * bs, Superblock.BYTES), block, image.toString());
                if (!b.layout().equals(layout) || !b.uuid().equals(primary.uuid()))
                    problem(1, Kind.BACKUP_SUPERBLOCK, "backup superblock in group " + group + " describes another volume", true);
            } catch (VolumeException e) {
                problem(1, Kind.BACKUP_SUPERBLOCK, "backup superblock in group " + group + ": " + e.getMessage(), true);
            }
        }
        if (!sb.clean()) notes.add("note: the volume was not closed cleanly");
        if (sb.mmp()) {
            try {
                Mmp.decode(Volume.read(ch, layout.mmpBlock() * bs, bs), sb.uuidBytes(), layout.mmpBlock());
            } catch (VolumeException.Corrupt e) {
                problem(1, Kind.MMP, e.getMessage(), true);
                mmpBad = true;
            }
        }
        Metadata.BlockReader disk = b -> {
            try {
                return Volume.read(ch, b * bs, bs);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        };

        // ---- pass 0: the journal ----
        // What replaying the journal writes home: the transactions taken whole and in sequence from the tail.
        // Past a damaged one nothing is replayed: each later transaction's images were made from a state that
        // held the damaged one's changes, so laid over the state before it they mix two moments (a chain of
        // table blocks from two layouts, a block freed there and owned again later); the prefix is a state
        // the volume was in, as after a crash right after it.
        Map<Long, byte[]> overlay = new LinkedHashMap<>();
        Journal.Replay replay = null;
        try {
            replay = Journal.scan(layout, sb.uuidBytes(), disk, true);
            overlay.putAll(replay.blocks());
            if (replay.transactions() > 0)
                notes.add("note: the journal holds " + replay.transactions() + " committed transactions ("
                        + replay.blocks().size() + " blocks); checked as replayed" + (repair ? " and written home" : ""));
            Journal.Damage d = replay.damage();
            if (d != null)
                problem(0, Kind.JOURNAL, "journal: " + d.report() + "; " + (repair ? "" : "to be ") + "dropped: the "
                        + "volume is " + (repair ? "" : "to be ") + "left as it was after transaction " + (d.stop() - 1)
                        + ", and what the " + d.skipped().size() + " transactions from " + d.stop() + " on changed is "
                        + "lost", true);
        } catch (VolumeException.Corrupt e) {
            problem(0, Kind.JOURNAL, e.getMessage() + "; the log cannot be placed and is emptied", true);
        }

        // ---- pass 1b: descriptors, bitmaps, file table ----
        boolean[] bitmapBad = new boolean[g.groups()];
        boolean[] tableBad = {false};
        Metadata.Problems report = new Metadata.Problems() {
            @Override
            public boolean salvage(VolumeException.Structure s, long block, String what) {
                problem(1, Kind.FILE_TABLE_CHECKSUM, "file table block " + block + ": " + what + "; its blocks each "
                        + "check, so the entry is rebuilt from them (runs they disagree on are dropped; what those held "
                        + "is a leak)", true);
                return true;
            }

            @Override
            public void corrupt(VolumeException.Structure s, long block, String what) {
                switch (s) {
                    case GROUP_DESCRIPTOR -> problem(1, Kind.DESCRIPTOR_CHECKSUM, "group descriptor block " + block + ": "
                            + what, true);
                    case BITMAP -> {
                        bitmapBad[g.groupOf(block)] = true;
                        problem(1, Kind.BITMAP_CHECKSUM, "block bitmap at block " + block + ": " + what
                                + "; rebuilt from the owners", true);
                    }
                    case FILE_TABLE -> {
                        tableBad[0] = true;
                        problem(1, Kind.FILE_TABLE_CHECKSUM, "file table block " + block + ": " + what
                                + "; the entry in it is unreadable, so no leak is freed (restore the block from a copy)",
                                false);
                    }
                    default -> problem(1, Kind.JOURNAL, s + " block " + block + ": " + what, false);
                }
            }
        };
        Metadata meta = Metadata.load(sb, b -> overlay.containsKey(b) ? overlay.get(b) : disk.read(b), report);

        // ---- pass 1c: every entry's extents ----
        record Piece(Metadata.Entry entry, long logical, long physical, long blocks) {}
        List<Piece> pieces = new ArrayList<>();
        long files = 0, owners = 0;
        for (Metadata.Entry e : meta.entries()) {
            if (e.kind == Metadata.KIND_FILE) files++;
            else owners++;
            for (ExtentMap.Run r : e.map.runs()) {
                if (r.physical() < 0 || r.physicalEnd() > g.totalBlocks()) {
                    problem(1, Kind.OUT_OF_RANGE, who(e) + " logical " + r.logical() + ": physical " + r.physical() + "+"
                            + r.blocks() + " lies outside the volume [0, " + g.totalBlocks() + ")", false);
                    continue;
                }
                long b = firstSystemBlock(g, r.physical(), r.physicalEnd());
                if (b >= 0)
                    problem(1, Kind.SYSTEM_ZONE_OWNED, who(e) + " logical " + (r.logical() + (b - r.physical()))
                            + ": physical block " + b + " is in the system zone (" + layout.structureOf(b) + ")",
                            false);
                pieces.add(new Piece(e, r.logical(), r.physical(), r.blocks()));
            }
        }

        // ---- pass 2: blocks owned twice ----
        pieces.sort(Comparator.comparingLong(Piece::physical));
        Piece reach = null;
        for (Piece p : pieces) {
            if (reach != null && p.physical() < reach.physical() + reach.blocks()) {
                long end = Math.min(reach.physical() + reach.blocks(), p.physical() + p.blocks());
                problem(2, Kind.OWNED_TWICE, "physical blocks " + p.physical() + ".." + (end - 1) + " are owned by "
                        + who(reach.entry()) + " (logical " + (reach.logical() + (p.physical() - reach.physical()))
                        + ") and by " + who(p.entry()) + " (logical " + p.logical() + "); decide which keeps them", false);
            }
            if (reach == null || p.physical() + p.blocks() > reach.physical() + reach.blocks()) reach = p;
        }

        // ---- pass 5: bitmaps against the owners, counts ----
        long[][] owned = meta.ownedBitmaps();
        long used = 0;
        for (int group = 0; group < g.groups(); group++) {
            long[] want = meta.bitmapWords(group);
            boolean changed = false;
            long base = g.groupStart(group);
            int from = g.systemBlocks(group), to = g.groupBlocks(group);
            for (int i = Metadata.nextBit(want, 0, from, false); i < from;
                 i = Metadata.nextBit(want, i + 1, from, false)) {
                problem(5, Kind.SYSTEM_ZONE_FREE, "group " + group + ": system-zone block " + (base + i) + " ("
                        + layout.structureOf(base + i) + ") is marked free", true);
                Metadata.setBits(want, i, 1, true);
                changed = true;
            }
            // Compared a word at a time (an 8 TiB volume has 2^31 blocks), as a close reconciles.
            int grp = group;
            boolean[] rebuilt = {false};
            Metadata.forEachDifferingRun(owned[group], want, from, to, (s, end, o) -> {
                if (!bitmapBad[grp]) { // an untrusted bitmap is rebuilt, not compared
                    if (o) problem(5, Kind.OWNED_BUT_FREE, "blocks " + (base + s) + ".." + (base + end - 1)
                            + " are owned by " + owners(meta, base + s) + " but marked free in the bitmap of group "
                            + grp, true);
                    else problem(5, Kind.LEAK, "blocks " + (base + s) + ".." + (base + end - 1) + " are marked used "
                            + "in group " + grp + " but owned by no file or owner (leak)", !tableBad[0]);
                    if (!o && tableBad[0]) return; // a leak is freed only when every owner could be read
                }
                Metadata.setBits(want, s, end - s, o); // the owners' bit, whichever way it differed
                rebuilt[0] = true;
            });
            changed |= rebuilt[0];
            if (changed) meta.replaceBitmap(group, want);
            if (!bitmapBad[group] && meta.storedFree(group) != Metadata.countFree(want, from, to))
                problem(5, Kind.WRONG_FREE_COUNT, "group " + group + ": descriptor counts " + meta.storedFree(group)
                        + " free blocks, the bitmap " + Metadata.countFree(want, from, to), true);
            used += (to - from) - meta.free(group);
        }

        if (repair) {
            boolean left = problems.stream().anyMatch(p -> !p.repaired());
            repairWrites(out, layout, sb, meta, disk, overlay, replay, tableBad[0], !left);
            if (restoreSuper) notes.add("note: the superblock was restored from its backup");
        }
        return new Result(image.toString(), List.copyOf(problems), List.copyOf(notes), files, owners, used, g.dataBlocks());
    }

    /** Where a repair's writes go: the image, or a recorder in power-cut tests. */
    interface Writes {
        void write(byte[] bytes, long offset) throws IOException;

        /** A barrier: every write before it is durable when it returns. */
        void force() throws IOException;

        static Writes to(FileChannel ch) {
            return new Writes() {
                @Override
                public void write(byte[] bytes, long offset) throws IOException {
                    Volume.write(ch, bytes, offset);
                }

                @Override
                public void force() throws IOException {
                    ch.force(false);
                }
            };
        }
    }

    /**
     * Writes a repair so that a power cut at any point leaves a volume that opens as it did before the repair,
     * or as repaired (the disk may lose or reorder whatever came after the last barrier):
     * <ol>
     *   <li>the journal's replayable state home, then a barrier: the log still holds it, and a replay of it is
     *       idempotent;</li>
     *   <li>the journal superblock with an empty log whose sequence lies past every number in it, a barrier;</li>
     *   <li>fsck's own changes (the blocks whose repaired image differs from what is home) as one journal
     *       transaction, a barrier: torn, it fails its checksum and changes nothing; whole, recovery replays it;</li>
     *   <li>those blocks home, a barrier; the journal superblock past that transaction, a barrier;</li>
     *   <li>the backup superblocks, a barrier, and last the primary (clean when nothing is left), a barrier.</li>
     * </ol>
     * A repair larger than the log is written home in place after step 2, and says so.
     */
    private void repairWrites(Writes out, Layout layout, Superblock sb, Metadata meta, Metadata.BlockReader disk,
                              Map<Long, byte[]> overlay, Journal.Replay replay, boolean tableBad, boolean clean)
            throws IOException {
        int bs = layout.blockSize();
        Geometry g = layout.geometry();
        byte[] seed = sb.uuidBytes();
        if (!overlay.isEmpty()) {
            for (Map.Entry<Long, byte[]> e : overlay.entrySet()) out.write(e.getValue(), e.getKey() * bs);
            out.force();
        }
        long seq = replay != null ? replay.nextSeq() : Journal.pastEverySeq(layout, disk);
        out.write(Journal.superBlock(layout, seed, seq, 0), layout.journalStart() * bs);
        out.force();
        meta.dirtyAll();
        List<Long> changed = new ArrayList<>();
        Map<Long, byte[]> images = new HashMap<>();
        for (long b : meta.takeCommit()) {
            long slot = b - layout.fileTableStart();
            if (tableBad && slot >= 0 && slot < layout.fileTableBlocks()) continue; // leave unreadable slots alone
            byte[] img = meta.image(b);
            byte[] home = overlay.containsKey(b) ? overlay.get(b) : disk.read(b);
            if (java.util.Arrays.equals(img, home)) continue;
            changed.add(b);
            images.put(b, img);
        }
        if (!changed.isEmpty()) {
            int capacity = layout.journalBlocks() - 1;
            if (Journal.transactionBlocks(changed.size(), bs) <= capacity) {
                java.nio.ByteBuffer tx = Journal.encode(layout, seed, seq, changed,
                        (home, into, at) -> System.arraycopy(images.get(home), 0, into, at, bs));
                byte[] all = new byte[tx.capacity()];
                tx.get(0, all);
                out.write(all, Journal.layoutBlock(layout, 0) * bs); // position 0: the log's first block on
                out.force();
                for (long b : changed) out.write(images.get(b), b * bs);
                out.force();
                seq++;
                out.write(Journal.superBlock(layout, seed, seq, all.length / bs), layout.journalStart() * bs);
                out.force();
            } else {
                notes.add("note: the repair changes " + changed.size() + " metadata blocks, more than the journal's "
                        + capacity + " log blocks hold: written in place (a power cut during it may need another fsck)");
                for (long b : changed) out.write(images.get(b), b * bs);
                out.force();
            }
        }
        for (int group = 1; group < g.groups(); group++)
            if (Layout.hasBackup(group)) out.write(sb.copyIn(group).encode(), layout.headerBlock(group) * bs);
        if (mmpBad) out.write(Mmp.clean(sb), layout.mmpBlock() * bs); // no holder could be seen: none is left
        out.force();
        out.write(sb.withState(clean, sb.mounts()).copyIn(0).encode(), 0);
        out.force();
    }

    private static String who(Metadata.Entry e) {
        return (e.kind == Metadata.KIND_FILE ? "file '" : "owner '") + e.name + "'";
    }

    private static String owners(Metadata meta, long block) {
        for (Metadata.Entry e : meta.entries())
            for (ExtentMap.Run r : e.map.runs())
                if (block >= r.physical() && block < r.physicalEnd())
                    return who(e) + " (logical " + (r.logical() + block - r.physical()) + ")";
        return "?";
    }

    /** The first block of {@code [start, end)} in a group's system zone, or -1: one test per group it crosses. */
    static long firstSystemBlock(Geometry g, long start, long end) {
        for (long b = start; b < end; ) {
            int group = g.groupOf(b);
            long zoneEnd = g.groupStart(group) + g.systemBlocks(group);
            if (b < zoneEnd) return b;
            if (group + 1 >= g.groups()) return -1;
            b = g.groupStart(group + 1);
        }
        return -1;
    }

    /**
     * A backup superblock when the primary is unreadable: group 1's first block, for each block size and
     * group size mkfs may have used (as e2fsck looks at 8193, 32768, ...).
     */
    private static Superblock findBackup(FileChannel ch) throws IOException {
        for (int bs = 1024; bs <= 65536; bs <<= 1) {
            for (long bpg = 1024; bpg <= 8L * bs; bpg <<= 1) {
                long pos = bpg * bs;
                if (pos + Superblock.BYTES > ch.size()) continue;
                try {
                    Superblock s = Superblock.decode(Volume.read(ch, pos, Superblock.BYTES), bpg, "backup");
                    if (s.layout().blockSize() == bs && s.layout().geometry().blocksPerGroup() == bpg && s.copyOf() == 1)
                        return s;
                } catch (VolumeException ignored) {
                    // not here
                }
            }
        }
        return null;
    }
}
