package org.blockyard.benches;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

import com.typesafe.config.Config;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.Extent;
import org.blockyard.runtime.store.FileStore;
import org.blockyard.runtime.volume.ExtentMap;
import org.blockyard.runtime.volume.Fsck;
import org.blockyard.runtime.volume.Layout;
import org.blockyard.runtime.volume.Metadata;
import org.blockyard.runtime.volume.Volume;
import org.blockyard.runtime.volume.VolumeAllocator;
import org.blockyard.runtime.volume.WriteLog;

/**
 * A power-loss harness in the manner of dm-log-writes' replay and CrashMonkey: a mixed load runs on a fresh
 * volume whose image records every write and flush in order ({@link WriteLog}); then, for many cut points, the
 * crash states a power cut there allows are built from the record, opened (recovery), checked against what was
 * acknowledged before the cut, and checked by fsck.
 *
 * <p><b>The load</b> is one thread, so that a seed repeats its write stream (the journal's timers aside): data
 * files written block by block with {@link CrashPattern} contents through the volume's {@link FileStore} (appends
 * and overwrites), flushes, truncates, deletes and new files; extent owners that allocate and release lists of
 * extents across groups. Each call records where the write stream stood when it was answered.
 *
 * <p><b>A crash state</b> for a cut at a point of the stream: every write before the last flush before it, then
 * any subset of the writes between that flush and the cut, applied in any order (a disk reorders what it has not
 * yet flushed), and sometimes the last of them torn at a 512-byte boundary. What must hold: every call answered
 * before the cut is in the state (a durable answer comes after its flush); calls answered later may or may not
 * be. So after recovery: every file answered as created before the cut exists unless a later
 * delete may have run; every block reads as the last write answered before the cut, or as a later write, or
 * (past a later truncate or in a file a later delete may have removed) zeros, and a torn block only where a
 * write after the cut may have been torn; never another file's bytes or bytes no write wrote; every owner holds
 * every extent answered as allocated and not released before the cut, and no block it released before the cut
 * unless it may have allocated it again after; fsck finds the volume clean.
 */
final class PowerLoss {
    static final int BLOCK = 4096;
    static final int GROUPS = 4, BLOCKS_PER_GROUP = 4096, FILE_TABLE = 64, JOURNAL = 512;
    static final int FILES = 4, OWNERS = 3, FILE_BLOCKS = 48;
    private static final long DEADLINE_S = 60;
    /** Every this many states, {@code fsck --repair} runs on the crash state under the same harness. */
    static final int REPAIR_EVERY = 4;
    /** Power cuts built from each repair's own write stream. */
    static final int REPAIR_CUTS = 3;

    record Spec(long seed, int states, int ops, boolean torn) {}

    /** One call of the load and where the write stream stood when it was answered (-1: refused). */
    sealed interface Op permits Open, Write, Truncate, Delete, Alloc, Release {
        int answeredAt();
    }

    record Open(String file, int answeredAt) implements Op {}

    /** With {@code overwrite}, the block was written before: durable only once a flush follows the answer. */
    record Write(String file, long logical, int generation, boolean overwrite, int answeredAt) implements Op {}

    record Truncate(String file, long from, int answeredAt) implements Op {}

    record Delete(String file, int answeredAt) implements Op {}

    record Alloc(String owner, List<Extent> extents, int answeredAt) implements Op {}

    record Release(String owner, List<Extent> extents, int answeredAt) implements Op {}

    /** One crash state that did not hold: where it was cut and what was wrong. */
    record Failure(int cut, int events, int flushes, int kept, int after, boolean torn, String what) {
        @Override
        public String toString() {
            return "cut at event " + cut + " of " + events + ", after flush " + flushes + " (" + kept + " of " + after
                    + " writes since kept" + (torn ? ", the last torn" : "") + "): " + what;
        }
    }

    /** {@code repairs}: states whose {@code fsck --repair}, cut by power at {@value #REPAIR_CUTS} points, held. */
    record Result(int events, int flushes, int ops, int states, int recovered, int repairs, List<Failure> failures) {}

    private final Spec spec;
    private final Config config;
    private final Path dir;

    PowerLoss(Spec spec, Config config, Path dir) {
        this.spec = spec;
        this.config = config;
        this.dir = dir;
    }

    Result run(java.io.PrintStream progress) throws Exception {
        Path image = dir.resolve("powerloss.img");
        Volume.mkfs(image, Layout.make(BLOCK, (long) GROUPS * BLOCKS_PER_GROUP, BLOCKS_PER_GROUP, FILE_TABLE,
                JOURNAL, 0, 0), true);
        byte[] base = Files.readAllBytes(image);
        WriteLog log = WriteLog.attach(image);
        List<Op> ops;
        try {
            ops = load(image, log);
        } finally {
            log.detach();
        }
        List<WriteLog.Event> events = log.events();
        List<Integer> flushAt = flushes(events);
        if (progress != null)
            progress.printf("powerloss: %d calls, %d writes and flushes recorded (%d flushes); building %d states%n",
                    ops.size(), events.size(), flushAt.size(), spec.states());

        Random rnd = new Random(spec.seed() * 31 + 7);
        List<Failure> failures = new ArrayList<>();
        int recovered = 0, repairs = 0;
        Path state = dir.resolve("state.img");
        for (int s = 0; s < spec.states(); s++) {
            // The power goes at a point of the stream: after the last flush before it everything is durable;
            // of the writes since, any subset in any order.
            // Half the cuts fall just as a flush is issued, when the most writes are in the air.
            int cut = rnd.nextBoolean() || flushAt.isEmpty() ? rnd.nextInt(events.size() + 1)
                    : flushAt.get(rnd.nextInt(flushAt.size()));
            Cut c = Cut.of(events, flushAt, cut, false, rnd);
            boolean torn = spec.torn() && !c.kept().isEmpty() && rnd.nextInt(4) == 0;
            build(state, base, events, c.from(), c.kept(), torn, rnd);
            byte[] crashed = s % REPAIR_EVERY == REPAIR_EVERY - 1 ? Files.readAllBytes(state) : null;
            String wrong;
            try {
                wrong = check(state, ops, cut, c.from());
                if (wrong == null) recovered++;
            } catch (Exception | AssertionError e) {
                wrong = "the volume did not open or read back: " + e;
            }
            if (wrong == null && crashed != null) {
                try {
                    wrong = repairUnderPower(crashed, ops, cut, c.from(), rnd);
                } catch (Exception | AssertionError e) {
                    wrong = "fsck --repair, or the volume after it, failed: " + e;
                }
                if (wrong == null) repairs++;
            }
            if (wrong != null)
                failures.add(new Failure(cut, events.size(), c.flushes(), c.kept().size(), c.since(), torn, wrong));
            if (progress != null && (s + 1) % 25 == 0)
                progress.printf("powerloss: %d of %d states, %d failed%n", s + 1, spec.states(), failures.size());
        }
        Files.deleteIfExists(state);
        Files.deleteIfExists(image);
        return new Result(events.size(), flushAt.size(), ops.size(), spec.states(), recovered, repairs, failures);
    }

    /** The event indexes of the flushes in {@code events}. */
    private static List<Integer> flushes(List<WriteLog.Event> events) {
        List<Integer> at = new ArrayList<>();
        for (int i = 0; i < events.size(); i++) if (events.get(i) instanceof WriteLog.Flush) at.add(i);
        return at;
    }

    /**
     * A power cut at event {@code at}: {@code flushes} flushes were issued before it, the last at {@code from} (0
     * when none), and of the {@code since} writes after that flush, {@code kept} reached the disk, in that order.
     */
    private record Cut(int at, int flushes, int from, int since, List<WriteLog.Write> kept) {
        /** With {@code all}, every write since the flush is kept in order; else a random subset, shuffled. */
        static Cut of(List<WriteLog.Event> events, List<Integer> flushAt, int at, boolean all, Random rnd) {
            int k = -1;
            while (k + 1 < flushAt.size() && flushAt.get(k + 1) < at) k++;
            int from = k < 0 ? 0 : flushAt.get(k);
            int since = 0;
            List<WriteLog.Write> kept = new ArrayList<>();
            for (int i = from; i < at; i++)
                if (events.get(i) instanceof WriteLog.Write w) {
                    since++;
                    if (all || rnd.nextBoolean()) kept.add(w);
                }
            if (!all) Collections.shuffle(kept, rnd);
            return new Cut(at, k + 1, from, since, kept);
        }
    }

    // ---- the load ---------------------------------------------------------------------------------------

    private List<Op> load(Path image, WriteLog log) throws Exception {
        Random rnd = new Random(spec.seed());
        List<Op> ops = new ArrayList<>();
        Volume v = Volume.open(image, config);
        try {
            VolumeAllocator a = v.allocator();
            FileStore store = v.fileStore();
            Map<String, Long> length = new LinkedHashMap<>();
            Map<String, Set<Long>> written = new HashMap<>(); // blocks written, as the file's map holds them
            int[] generation = {0};
            int made = 0;
            Map<String, List<Extent>> owned = new HashMap<>();
            for (int o = 0; o < OWNERS; o++) owned.put("o" + o, new ArrayList<>());
            for (int i = 0; i < spec.ops(); i++) {
                int what = rnd.nextInt(100);
                if (length.size() < FILES || what < 3) {
                    if (length.size() >= FILES) { // a delete first
                        String gone = new ArrayList<>(length.keySet()).get(rnd.nextInt(length.size()));
                        await(a.close(gone));
                        await(a.delete(gone));
                        length.remove(gone);
                        written.remove(gone);
                        ops.add(new Delete(gone, log.size()));
                    }
                    String f = "f" + made++;
                    await(a.open(f));
                    length.put(f, 0L);
                    written.put(f, new HashSet<>());
                    ops.add(new Open(f, log.size()));
                } else if (what < 55) {
                    String f = pick(length, rnd);
                    long len = length.get(f);
                    long l = len < FILE_BLOCKS && (len == 0 || rnd.nextInt(3) > 0) ? len : rnd.nextInt((int) Math.max(1, len));
                    int g = ++generation[0];
                    ByteBuffer data = ByteBuffer.allocate(BLOCK);
                    CrashPattern.fill(data, BLOCK, f, l, g);
                    data.flip();
                    await(store.write(f, l * BLOCK, data));
                    length.put(f, Math.max(len, l + 1));
                    boolean overwrite = !written.get(f).add(l);
                    ops.add(new Write(f, l, g, overwrite, log.size()));
                } else if (what < 62) {
                    await(store.flush(pick(length, rnd)));
                } else if (what < 67) {
                    String f = pick(length, rnd);
                    long from = rnd.nextInt((int) Math.max(1, length.get(f)));
                    await(a.truncate(f, from));
                    length.put(f, Math.min(length.get(f), from));
                    written.get(f).removeIf(b -> b >= from);
                    ops.add(new Truncate(f, from, log.size()));
                } else if (what < 85) {
                    String o = "o" + rnd.nextInt(OWNERS);
                    long hint = (long) rnd.nextInt(GROUPS) * BLOCKS_PER_GROUP + rnd.nextInt(BLOCKS_PER_GROUP);
                    try {
                        List<Extent> got = await(a.allocate(o, 1 + rnd.nextInt(24), 1, 1 + rnd.nextInt(8), hint));
                        owned.get(o).addAll(got);
                        ops.add(new Alloc(o, got, log.size()));
                    } catch (AllocationException.NoSpace full) {
                        // the volume is full for now: releases come
                    }
                } else {
                    String o = "o" + rnd.nextInt(OWNERS);
                    List<Extent> mine = owned.get(o);
                    if (mine.isEmpty()) continue;
                    List<Extent> out = new ArrayList<>();
                    for (int n = 1 + rnd.nextInt(Math.min(6, mine.size())); n > 0; n--)
                        out.add(mine.remove(rnd.nextInt(mine.size())));
                    await(a.release(o, out));
                    ops.add(new Release(o, out, log.size()));
                }
            }
        } finally {
            log.detach(); // the power cut: nothing the volume writes from here on reaches the disk
            v.abandon();
        }
        return ops;
    }

    private static String pick(Map<String, Long> files, Random rnd) {
        return new ArrayList<>(files.keySet()).get(rnd.nextInt(files.size()));
    }

    private static <T> T await(CompletionStage<T> s) throws Exception {
        try {
            return s.toCompletableFuture().get(DEADLINE_S, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof Exception x) throw x;
            throw e;
        }
    }

    // ---- a crash state ------------------------------------------------------------------------------------

    private static void build(Path state, byte[] base, List<WriteLog.Event> events, int before,
                              List<WriteLog.Write> kept, boolean torn, Random rnd) throws IOException {
        Files.write(state, base);
        try (FileChannel ch = FileChannel.open(state, StandardOpenOption.WRITE)) {
            for (int i = 0; i < before; i++) if (events.get(i) instanceof WriteLog.Write w) put(ch, w.position(), w.bytes());
            for (int i = 0; i < kept.size(); i++) {
                WriteLog.Write w = kept.get(i);
                byte[] b = w.bytes();
                if (torn && i == kept.size() - 1 && b.length > 512) {
                    int sectors = b.length / 512;
                    b = java.util.Arrays.copyOf(b, 512 * (1 + rnd.nextInt(sectors - 1)));
                }
                put(ch, w.position(), b);
            }
        }
    }

    /**
     * {@code fsck --repair} of the crash state {@code crashed}, its own writes recorded, then cut by power at
     * {@value #REPAIR_CUTS} points of them (and at its end): each such image must open and hold what the crash
     * state had to, the calls answered before {@code cut} (the crash's last flush at {@code flushed}). Null when
     * all held.
     */
    private String repairUnderPower(byte[] crashed, List<Op> ops, int cut, int flushed, Random rnd) throws Exception {
        Path image = dir.resolve("repair.img");
        Path state = dir.resolve("repair-state.img");
        Files.write(image, crashed);
        WriteLog log = WriteLog.attach(image);
        try {
            Fsck.check(image, true);
        } finally {
            log.detach();
        }
        List<WriteLog.Event> events = log.events();
        List<Integer> flushAt = flushes(events);
        try {
            for (int c = 0; c <= REPAIR_CUTS; c++) {
                boolean end = c == REPAIR_CUTS;
                Cut r = Cut.of(events, flushAt, end ? events.size() : rnd.nextInt(events.size() + 1), end, rnd);
                build(state, crashed, events, r.from(), r.kept(), false, rnd);
                String wrong = check(state, ops, cut, flushed);
                if (wrong != null)
                    return "fsck --repair cut at its event " + r.at() + " of " + events.size() + " (" + r.kept().size()
                            + " writes since its flush " + r.flushes() + " kept): " + wrong;
            }
            return null;
        } finally {
            Files.deleteIfExists(image);
            Files.deleteIfExists(state);
        }
    }

    private static void put(FileChannel ch, long position, byte[] bytes) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        while (b.hasRemaining()) ch.write(b, position + b.position());
    }

    // ---- the check ----------------------------------------------------------------------------------------

    /**
     * What is wrong with the recovered state cut at stream position {@code cut} (the last flush before it at
     * {@code flushed}), or null when it holds.
     */
    private String check(Path state, List<Op> ops, int cut, int flushed) throws Exception {
        List<String> wrong = new ArrayList<>();
        Volume v = Volume.open(state, config);
        try {
            checkFiles(v, ops, cut, flushed, wrong);
        } finally {
            v.close();
        }
        checkOwners(Volume.inspect(state), ops, cut, wrong);
        Fsck.Result r = Fsck.check(state, false);
        if (!r.clean()) wrong.add("fsck: " + r.problems().subList(0, Math.min(3, r.problems().size())));
        return wrong.isEmpty() ? null : String.join("; ", wrong.subList(0, Math.min(4, wrong.size())));
    }

    private static boolean before(Op op, int cut) {
        return op.answeredAt() >= 0 && op.answeredAt() <= cut;
    }

    private void checkFiles(Volume v, List<Op> ops, int cut, int flushed, List<String> wrong) throws Exception {
        // Per file, in the order of the calls: what must be there (from calls answered before the cut), and
        // what may also be there (from the calls after it).
        Map<String, Boolean> mustExist = new LinkedHashMap<>();
        Set<String> mayBeGone = new HashSet<>(), mayBeNew = new HashSet<>();
        Map<String, TreeMap<Long, Integer>> required = new HashMap<>();
        Map<String, Map<Long, Set<Integer>>> alsoMay = new HashMap<>();
        Map<String, Set<Long>> mayTear = new HashMap<>();
        Map<String, Long> truncatedAfter = new HashMap<>(); // the lowest cut of a truncate answered after the power cut
        for (Op op : ops) {
            boolean done = before(op, cut);
            if (op instanceof Open o) {
                if (done) {
                    mustExist.put(o.file(), true);
                    required.put(o.file(), new TreeMap<>());
                } else {
                    mayBeNew.add(o.file());
                }
            } else if (op instanceof Write w) {
                // An overwrite answered before the cut with no flush after it may still be old, new, or torn.
                if (done && (!w.overwrite() || flushed >= w.answeredAt())) {
                    required.get(w.file()).put(w.logical(), w.generation());
                } else {
                    alsoMay.computeIfAbsent(w.file(), k -> new HashMap<>())
                            .computeIfAbsent(w.logical(), k -> new HashSet<>()).add(w.generation());
                    mayTear.computeIfAbsent(w.file(), k -> new HashSet<>()).add(w.logical());
                }
            } else if (op instanceof Truncate t) {
                if (done) required.get(t.file()).tailMap(t.from(), true).clear();
                else truncatedAfter.merge(t.file(), t.from(), Math::min);
            } else if (op instanceof Delete d) {
                if (done) {
                    mustExist.put(d.file(), false);
                    required.remove(d.file());
                } else {
                    mayBeGone.add(d.file());
                }
            }
        }
        List<String> present = v.allocator().files();
        for (Map.Entry<String, Boolean> e : mustExist.entrySet()) {
            String f = e.getKey();
            boolean there = present.contains(f);
            if (e.getValue() && !there && !mayBeGone.contains(f)) wrong.add(f + " answered as created is gone");
            if (!e.getValue() && there) wrong.add(f + " answered as deleted is back");
        }
        for (String f : present)
            if (!mustExist.containsKey(f) && !mayBeNew.contains(f)) wrong.add(f + " exists, and no call made it");
        FileStore store = v.fileStore();
        for (String f : present) {
            TreeMap<Long, Integer> must = required.getOrDefault(f, new TreeMap<>());
            Map<Long, Set<Integer>> may = alsoMay.getOrDefault(f, Map.of());
            long truncatedFrom = truncatedAfter.getOrDefault(f, Long.MAX_VALUE);
            boolean mayBeStale = mayBeGone.contains(f) || (mayBeNew.contains(f) && !mustExist.containsKey(f));
            await(v.allocator().open(f));
            for (long l = 0; l < FILE_BLOCKS; l++) {
                ByteBuffer got = await(store.read(f, l * BLOCK, BLOCK));
                int g = CrashPattern.generation(got, 0, BLOCK, f, l);
                Set<Integer> ok = new HashSet<>();
                ok.add(must.getOrDefault(l, 0));
                ok.addAll(may.getOrDefault(l, Set.of()));
                if (l >= truncatedFrom || mayBeStale) ok.add(0);
                boolean tearable = mayTear.getOrDefault(f, Set.of()).contains(l);
                if (ok.contains(g) || (g == CrashPattern.TORN && tearable)) continue;
                if (mayBeStale && g > 0) continue; // a file a later call removed and made again
                wrong.add(f + " block " + l + " reads " + CrashPattern.describe(g) + ", expected "
                        + (must.containsKey(l) ? "generation " + must.get(l) : "zeros")
                        + (ok.size() > 1 ? " or one of " + ok : ""));
            }
            await(v.allocator().close(f));
        }
    }

    private void checkOwners(Metadata meta, List<Op> ops, int cut, List<String> wrong) {
        Map<String, Set<Long>> must = new HashMap<>(), may = new HashMap<>();
        for (Op op : ops) {
            if (op instanceof Alloc al) {
                Set<Long> into = (before(al, cut) ? must : may).computeIfAbsent(al.owner(), k -> new HashSet<>());
                for (Extent e : al.extents()) for (long b = e.start(); b < e.end(); b++) into.add(b);
            } else if (op instanceof Release r) {
                Set<Long> m = must.computeIfAbsent(r.owner(), k -> new HashSet<>());
                Set<Long> o = may.computeIfAbsent(r.owner(), k -> new HashSet<>());
                for (Extent e : r.extents())
                    for (long b = e.start(); b < e.end(); b++) {
                        if (before(r, cut)) {
                            m.remove(b);
                            o.remove(b);
                        } else if (m.remove(b)) {
                            o.add(b); // released after the cut: held or not
                        }
                    }
            }
        }
        for (int o = 0; o < OWNERS; o++) {
            String owner = "o" + o;
            Metadata.Entry e = meta.owner(owner);
            Set<Long> holds = new HashSet<>();
            if (e != null) for (ExtentMap.Run r : e.map.runs())
                for (long b = r.physical(); b < r.physicalEnd(); b++) holds.add(b);
            Set<Long> required = must.getOrDefault(owner, Set.of()), optional = may.getOrDefault(owner, Set.of());
            long lost = required.stream().filter(b -> !holds.contains(b)).count();
            if (lost > 0) wrong.add(owner + " lost " + lost + " acknowledged blocks, e.g. "
                    + required.stream().filter(b -> !holds.contains(b)).sorted().limit(3).toList());
            long back = holds.stream().filter(b -> !required.contains(b) && !optional.contains(b)).count();
            if (back > 0) wrong.add(owner + " holds " + back + " blocks it was never given or released, e.g. "
                    + holds.stream().filter(b -> !required.contains(b) && !optional.contains(b)).sorted().limit(3).toList());
        }
    }
}
