package org.blockyard.benches;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;

import com.typesafe.config.Config;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.Extent;
import org.blockyard.runtime.store.FileStore;
import org.blockyard.runtime.volume.CrashImage;
import org.blockyard.runtime.volume.ExtentMap;
import org.blockyard.runtime.volume.Fsck;
import org.blockyard.runtime.volume.Journal;
import org.blockyard.runtime.volume.Layout;
import org.blockyard.runtime.volume.Metadata;
import org.blockyard.runtime.volume.Superblock;
import org.blockyard.runtime.volume.Volume;
import org.blockyard.runtime.volume.VolumeAllocator;
import org.blockyard.runtime.volume.WriteLog;

/**
 * A power-loss harness in the manner of dm-log-writes' replay and CrashMonkey: a mixed load runs on a fresh
 * volume whose image records every write and flush in order ({@link WriteLog}); then, at many cut points, the
 * crash states a power cut there allows are built from the record, recovered, checked against what was
 * acknowledged before the cut, and checked by fsck.
 *
 * <p><b>The load</b> is one thread, and its journal commits only when a call waits for durability
 * ({@link Journal.Settings#onDemand()}): no timer decides where a transaction ends or whether a checkpoint step
 * rides a commit, so a seed repeats its write stream exactly, and with it every state and what each found (the
 * report's digest says so). Data files are written block by block with {@link CrashPattern} contents through the
 * volume's {@link FileStore} (appends and overwrites), with flushes, truncates, deletes and new files; extent
 * owners allocate and release lists of extents across groups. Each call records where the write stream stood
 * when it was answered.
 *
 * <p><b>Crash states of a cut</b> at a point of the stream: every write before the last flush before it, then a
 * subset of the writes between that flush and the cut (in flight: a disk may have kept any of them, in any
 * order), the last one applied possibly torn at a 512-byte boundary. Each cut gets up to
 * {@code statesPerCut} distinct states: all its writes kept in order, none kept, then every subset when they are
 * few (in the recorded order), then random subsets in random orders, torn or not. A state is built in memory
 * from an image of what was durable at its flush ({@link CrashImage}: copies share blocks) and recovered there by
 * the volume's own recovery code; the first state of each cut (all kept) is also written to a file and opened
 * as a volume with its allocator and file store, and every {@value #REPAIR_EVERY}th of those (the first, the fifth, ...) is also repaired with
 * {@code fsck --repair} under the same harness.
 *
 * <p><b>What must hold</b>: every call answered before the cut is in the state (a durable answer comes after its
 * flush); calls answered later may or may not be. So after recovery: every file answered as created before the
 * cut exists unless a later delete may have run; every block reads as the last write answered before the cut, or
 * as a later write, or (past a later truncate or in a file a later delete may have removed) zeros, and a torn
 * block only where a write after the cut may have been torn; never another file's bytes or bytes no write wrote;
 * every owner holds every extent answered as allocated and not released before the cut, and no block it
 * released before the cut unless it may have allocated it again after; fsck finds the volume clean.
 */
final class PowerLoss {
    static final int BLOCK = 4096;
    static final int GROUPS = 4, BLOCKS_PER_GROUP = 4096, FILE_TABLE = 64, JOURNAL = 512;
    static final int FILES = 4, OWNERS = 3, FILE_BLOCKS = 48;
    private static final long DEADLINE_S = 60;
    /** Every this many states opened from a file, {@code fsck --repair} also runs on it under the same harness. */
    static final int REPAIR_EVERY = 4;
    /** Power cuts built from each repair's own write stream. */
    static final int REPAIR_CUTS = 3;
    /** At most this many writes in flight have every subset enumerated (2^n states). */
    private static final int ENUMERATE_UP_TO = 6;

    /**
     * {@code cuts} cut points, up to {@code statesPerCut} distinct states each, at most {@code maxStates} in all;
     * {@code fullEvery}: every this many cuts, the first state is also opened as a volume from a file (0: never).
     */
    record Spec(long seed, int cuts, int statesPerCut, int maxStates, int ops, boolean torn, int fullEvery) {
        Spec {
            if (cuts < 1 || statesPerCut < 1 || maxStates < 1 || ops < 1 || fullEvery < 0)
                throw new IllegalArgumentException("cuts, states per cut, states and ops are at least 1: " + this);
        }

        /** The old shape: {@code states} cut points, one state each. */
        static Spec oneStatePerCut(long seed, int states, int ops, boolean torn) {
            return new Spec(seed, states, 1, states, ops, torn, 1);
        }
    }

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

    /**
     * One crash state: of the {@code inFlight} writes since its flush, those at {@code kept} (indexes into them)
     * applied in that order, the last cut to {@code tornBytes} bytes when that is not -1.
     */
    record State(int[] kept, int tornBytes) {
        String describe(int inFlight) {
            if (kept.length == 0) return "none of " + inFlight + " writes since kept";
            boolean inOrder = true;
            for (int i = 1; i < kept.length; i++) inOrder &= kept[i] > kept[i - 1];
            return (kept.length == inFlight && inOrder ? "all " + inFlight + " writes since kept in order"
                    : kept.length + " of " + inFlight + " writes since kept, as " + Arrays.toString(kept))
                    + (tornBytes >= 0 ? ", the last torn after " + tornBytes + " bytes" : "");
        }
    }

    /** One crash state that did not hold: where it was cut, which state, and what was wrong. */
    record Failure(int cut, int events, int flushes, String state, String what) {
        @Override
        public String toString() {
            return "cut at event " + cut + " of " + events + ", after flush " + flushes + " (" + state + "): " + what;
        }
    }

    /**
     * {@code states} built and checked in memory, {@code recovered} of them held; {@code full} of them also opened as
     * a volume from a file, {@code repairs}: those whose {@code fsck --repair}, cut by power at {@value #REPAIR_CUTS}
     * points, held. {@code streamDigest}: CRC32C of the recorded write stream; {@code reportDigest}: of which states
     * were built and what each found (equal across runs of a seed). Times in nanoseconds: the load, the states
     * checked in memory, the checks from a file.
     */
    record Result(int events, int flushes, int ops, int cuts, int states, int recovered, int full, int repairs,
                  List<Failure> failures, long streamDigest, long reportDigest, long loadNanos, long memoryNanos,
                  long fileNanos) {}

    private final Spec spec;
    private final Config config;
    private final Path dir;
    /** The journal as the load runs it: commits on demand, so a seed repeats its stream. */
    private final Journal.Settings onDemand;
    /** The journal as the checks run it: timed group commit, as configured. */
    private final Journal.Settings settings;

    PowerLoss(Spec spec, Config config, Path dir) {
        this.spec = spec;
        this.config = config;
        this.dir = dir;
        this.settings = Volume.settingsFrom(config);
        this.onDemand = settings.onDemandOnly();
    }

    Result run(java.io.PrintStream progress) throws Exception {
        Path image = dir.resolve("powerloss.img");
        // A uuid and times of the seed's: the journal's checksums are seeded with the uuid, so the stream repeats.
        Superblock fresh = Superblock.fresh(Layout.make(BLOCK, (long) GROUPS * BLOCKS_PER_GROUP, BLOCKS_PER_GROUP,
                FILE_TABLE, JOURNAL, 0, 0));
        Volume.mkfs(image, new Superblock(fresh.layout(), new UUID(0x426c6f636b796172L, spec.seed()),
                fresh.featuresCompat(), fresh.featuresIncompat(), fresh.featuresRoCompat(), true, 0, 0, 0, 0, 0), true);
        byte[] base = Files.readAllBytes(image);
        long t0 = System.nanoTime();
        WriteLog log = WriteLog.attach(image);
        List<Op> ops;
        try {
            ops = load(image, log);
        } finally {
            log.detach();
        }
        long loadNanos = System.nanoTime() - t0;
        Files.deleteIfExists(image);
        List<WriteLog.Event> events = log.events();
        List<Integer> flushAt = flushes(events);
        long streamDigest = digest(events);
        if (progress != null)
            progress.printf("powerloss: %d calls, %d writes and flushes recorded (%d flushes, stream %08x); %d cut "
                    + "points, up to %d states each%n", ops.size(), events.size(), flushAt.size(), streamDigest,
                    spec.cuts(), spec.statesPerCut());

        Random rnd = new Random(spec.seed() * 31 + 7);
        TreeSet<Integer> cuts = chooseCuts(events.size(), flushAt, rnd);
        List<Failure> failures = new ArrayList<>();
        CRC32C report = new CRC32C();
        int states = 0, recovered = 0, full = 0, repairs = 0, c = 0;
        long memoryNanos = 0, fileNanos = 0;
        CrashImage durable = new CrashImage(base, BLOCK); // every write before the flush of the cut at hand
        int appliedThrough = 0;
        for (int cut : cuts) {
            if (states >= spec.maxStates()) break;
            int k = -1;
            while (k + 1 < flushAt.size() && flushAt.get(k + 1) < cut) k++;
            int from = k < 0 ? 0 : flushAt.get(k);
            for (; appliedThrough < from; appliedThrough++)
                if (events.get(appliedThrough) instanceof WriteLog.Write w) durable.write(w.position(), w.bytes(), w.bytes().length);
            List<WriteLog.Write> inFlight = new ArrayList<>();
            for (int i = from; i < cut; i++) if (events.get(i) instanceof WriteLog.Write w) inFlight.add(w);
            List<State> chosen = statesOf(inFlight, Math.min(spec.statesPerCut(), spec.maxStates() - states), rnd);
            for (int si = 0; si < chosen.size(); si++) {
                State st = chosen.get(si);
                CrashImage img = durable.copy();
                for (int i = 0; i < st.kept().length; i++) {
                    WriteLog.Write w = inFlight.get(st.kept()[i]);
                    boolean last = i == st.kept().length - 1;
                    img.write(w.position(), w.bytes(), last && st.tornBytes() >= 0 ? st.tornBytes() : w.bytes().length);
                }
                boolean fromFile = si == 0 && spec.fullEvery() > 0 && c % spec.fullEvery() == 0;
                byte[] crashed = fromFile ? img.toByteArray() : null;
                long m0 = System.nanoTime();
                String wrong;
                try {
                    wrong = checkInMemory(img, ops, cut, from);
                } catch (Exception | AssertionError e) {
                    wrong = "the volume did not recover in memory: " + e;
                }
                memoryNanos += System.nanoTime() - m0;
                if (wrong == null) recovered++;
                if (crashed != null) {
                    long f0 = System.nanoTime();
                    full++;
                    String onFile;
                    try {
                        onFile = checkFromFile(crashed, ops, cut, from);
                    } catch (Exception | AssertionError e) {
                        onFile = "the volume did not open or read back: " + e;
                    }
                    if (onFile == null && full % REPAIR_EVERY == 1) {
                        try {
                            onFile = repairUnderPower(crashed, ops, cut, from, rnd);
                        } catch (Exception | AssertionError e) {
                            onFile = "fsck --repair, or the volume after it, failed: " + e;
                        }
                        if (onFile == null) repairs++;
                    }
                    if (onFile != null) wrong = (wrong == null ? "" : wrong + "; ") + "opened from a file: " + onFile;
                    fileNanos += System.nanoTime() - f0;
                }
                String described = st.describe(inFlight.size());
                update(report, cut + " " + described + " " + (wrong == null ? "held" : wrong));
                if (wrong != null) failures.add(new Failure(cut, events.size(), k + 1, described, wrong));
                states++;
            }
            c++;
            if (progress != null && c % 25 == 0)
                progress.printf("powerloss: %d of %d cut points, %d states, %d failed%n", c, cuts.size(), states,
                        failures.size());
        }
        update(report, "stream " + streamDigest);
        return new Result(events.size(), flushAt.size(), ops.size(), c, states, recovered, full, repairs, failures,
                streamDigest, report.getValue(), loadNanos, memoryNanos, fileNanos);
    }

    /** The event indexes of the flushes in {@code events}. */
    private static List<Integer> flushes(List<WriteLog.Event> events) {
        List<Integer> at = new ArrayList<>();
        for (int i = 0; i < events.size(); i++) if (events.get(i) instanceof WriteLog.Flush) at.add(i);
        return at;
    }

    /** CRC32C of the stream: each write's position and bytes, each flush as a marker. */
    static long digest(List<WriteLog.Event> events) {
        CRC32C c = new CRC32C();
        ByteBuffer at = ByteBuffer.allocate(9);
        for (WriteLog.Event e : events) {
            at.clear();
            if (e instanceof WriteLog.Write w) {
                at.put((byte) 'W').putLong(w.position());
                c.update(at.array());
                c.update(w.bytes());
            } else {
                at.put((byte) 'F').putLong(0);
                c.update(at.array());
            }
        }
        return c.getValue();
    }

    private static void update(CRC32C c, String line) {
        c.update((line + "\n").getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    /**
     * {@code spec.cuts()} distinct cut points (fewer when the stream has fewer): half just as a flush is issued,
     * when the most writes are in the air, half anywhere.
     */
    private TreeSet<Integer> chooseCuts(int events, List<Integer> flushAt, Random rnd) {
        TreeSet<Integer> cuts = new TreeSet<>();
        int want = Math.min(spec.cuts(), events + 1);
        for (int tries = 0; cuts.size() < want && tries < want * 20; tries++)
            cuts.add(rnd.nextBoolean() || flushAt.isEmpty() ? rnd.nextInt(events + 1) : flushAt.get(rnd.nextInt(flushAt.size())));
        return cuts;
    }

    /**
     * Up to {@code max} distinct states of a cut with {@code inFlight} writes in the air: all kept in order, none,
     * every subset in the recorded order when there are at most {@value #ENUMERATE_UP_TO}, then random subsets in
     * random orders, the last torn in half of them (with {@code spec.torn()}).
     */
    private List<State> statesOf(List<WriteLog.Write> inFlight, int max, Random rnd) {
        int n = inFlight.size();
        Map<String, State> out = new LinkedHashMap<>();
        int[] all = new int[n];
        for (int i = 0; i < n; i++) all[i] = i;
        add(out, new State(all, -1), max);
        add(out, new State(new int[0], -1), max);
        if (n <= ENUMERATE_UP_TO)
            for (int mask = 1; mask < (1 << n) - 1 && out.size() < max; mask++) {
                int[] kept = new int[Integer.bitCount(mask)];
                for (int i = 0, j = 0; i < n; i++) if ((mask & (1 << i)) != 0) kept[j++] = i;
                add(out, new State(kept, -1), max);
            }
        for (int tries = 0; out.size() < max && tries < max * 8; tries++) {
            List<Integer> kept = new ArrayList<>();
            for (int i = 0; i < n; i++) if (rnd.nextBoolean()) kept.add(i);
            Collections.shuffle(kept, rnd);
            int torn = -1;
            if (spec.torn() && !kept.isEmpty() && rnd.nextBoolean()) {
                int sectors = inFlight.get(kept.get(kept.size() - 1)).bytes().length / 512;
                if (sectors > 1) torn = 512 * (1 + rnd.nextInt(sectors - 1));
            }
            add(out, new State(kept.stream().mapToInt(Integer::intValue).toArray(), torn), max);
        }
        return new ArrayList<>(out.values());
    }

    private static void add(Map<String, State> out, State s, int max) {
        if (out.size() < max) out.putIfAbsent(Arrays.toString(s.kept()) + "/" + s.tornBytes(), s);
    }

    // ---- the load ---------------------------------------------------------------------------------------

    private List<Op> load(Path image, WriteLog log) throws Exception {
        Random rnd = new Random(spec.seed());
        List<Op> ops = new ArrayList<>();
        Volume v = Volume.open(image, config, onDemand);
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
                        call(v, a.close(gone));
                        call(v, a.delete(gone));
                        length.remove(gone);
                        written.remove(gone);
                        ops.add(new Delete(gone, log.size()));
                    }
                    String f = "f" + made++;
                    call(v, a.open(f));
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
                    call(v, store.write(f, l * BLOCK, data));
                    length.put(f, Math.max(len, l + 1));
                    boolean overwrite = !written.get(f).add(l);
                    ops.add(new Write(f, l, g, overwrite, log.size()));
                } else if (what < 62) {
                    call(v, store.flush(pick(length, rnd)));
                } else if (what < 67) {
                    String f = pick(length, rnd);
                    long from = rnd.nextInt((int) Math.max(1, length.get(f)));
                    call(v, a.truncate(f, from));
                    length.put(f, Math.min(length.get(f), from));
                    written.get(f).removeIf(b -> b >= from);
                    ops.add(new Truncate(f, from, log.size()));
                } else if (what < 85) {
                    String o = "o" + rnd.nextInt(OWNERS);
                    long hint = (long) rnd.nextInt(GROUPS) * BLOCKS_PER_GROUP + rnd.nextInt(BLOCKS_PER_GROUP);
                    try {
                        List<Extent> got = call(v, a.allocate(o, 1 + rnd.nextInt(24), 1, 1 + rnd.nextInt(8), hint));
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
                    call(v, a.release(o, out));
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

    /**
     * A call of the load, its journal commits driven from here: whenever the call waits for durability, once the
     * actors are idle (a question to every group waits behind whatever a call left to them, a truncate's blocks
     * freed in their groups, say), the journal is asked to commit. So every commit holds the same records on
     * every run, and the stream repeats.
     */
    private static <T> T call(Volume v, CompletionStage<T> s) throws Exception {
        java.util.concurrent.CompletableFuture<T> f = s.toCompletableFuture();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(DEADLINE_S);
        while (!f.isDone()) {
            if (System.nanoTime() - until > 0) throw new java.util.concurrent.TimeoutException("a call of the load "
                    + "was not answered within " + DEADLINE_S + " s");
            if (v.journal().callersWaiting() == 0) {
                try {
                    f.get(1, TimeUnit.MILLISECONDS);
                } catch (java.util.concurrent.TimeoutException notYet) {
                    // the call is still at its I/O or its actors
                } catch (java.util.concurrent.ExecutionException e) {
                    break;
                }
                continue;
            }
            await(v.allocator().stats());
            await(v.allocator().stats());
            if (!v.journal().commitWaiting(TimeUnit.SECONDS.toNanos(DEADLINE_S)))
                throw new java.util.concurrent.TimeoutException("the journal did not commit within " + DEADLINE_S + " s");
            try {
                f.get(1, TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.TimeoutException notYet) {
                // durable soon, or waiting for another commit
            } catch (java.util.concurrent.ExecutionException e) {
                break;
            }
        }
        return await(f);
    }

    private static <T> T await(CompletionStage<T> s) throws Exception {
        try {
            return s.toCompletableFuture().get(DEADLINE_S, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof Exception x) throw x;
            throw e;
        }
    }

    // ---- fsck --repair under power ------------------------------------------------------------------------

    /**
     * A power cut at event {@code at} of a repair's stream: {@code flushes} flushes were issued before it, the last
     * at {@code from} (0 when none), and of the {@code since} writes after that flush, {@code kept} reached the
     * disk, in that order.
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
                CrashImage img = new CrashImage(crashed, BLOCK);
                for (int i = 0; i < r.from(); i++)
                    if (events.get(i) instanceof WriteLog.Write w) img.write(w.position(), w.bytes(), w.bytes().length);
                for (WriteLog.Write w : r.kept()) img.write(w.position(), w.bytes(), w.bytes().length);
                Files.write(state, img.toByteArray());
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

    // ---- the check ----------------------------------------------------------------------------------------

    /** Reads a recovered volume: its files, and a file's first {@value #FILE_BLOCKS} blocks. */
    private interface Contents {
        List<String> files();

        ByteBuffer[] blocks(String file) throws Exception;
    }

    /**
     * What is wrong with the crash state {@code img} cut at stream position {@code cut} (the last flush before it
     * at {@code flushed}) once recovered in memory, or null when it holds.
     */
    private String checkInMemory(CrashImage img, List<Op> ops, int cut, int flushed) throws Exception {
        List<String> wrong = new ArrayList<>();
        Metadata meta = img.recover(settings).meta();
        Map<String, Metadata.Entry> files = new TreeMap<>();
        for (Metadata.Entry e : meta.entries()) if (e.kind == Metadata.KIND_FILE) files.put(e.name, e);
        checkFiles(new Contents() {
            @Override
            public List<String> files() {
                return new ArrayList<>(files.keySet());
            }

            @Override
            public ByteBuffer[] blocks(String file) {
                ByteBuffer[] out = new ByteBuffer[FILE_BLOCKS];
                for (int l = 0; l < FILE_BLOCKS; l++) out[l] = ByteBuffer.allocate(BLOCK);
                for (ExtentMap.Run r : files.get(file).map.runs()) {
                    if (r.unwritten()) continue; // reads as zeros
                    for (long l = Math.max(0, r.logical()); l < Math.min(FILE_BLOCKS, r.logical() + r.blocks()); l++)
                        out[(int) l] = ByteBuffer.wrap(img.read(r.physical() + (l - r.logical())));
                }
                return out;
            }
        }, ops, cut, flushed, wrong);
        checkOwners(meta, ops, cut, wrong);
        Fsck.Result r = img.fsck();
        if (!r.clean()) wrong.add("fsck: " + r.problems().subList(0, Math.min(3, r.problems().size())));
        return wrong.isEmpty() ? null : String.join("; ", wrong.subList(0, Math.min(4, wrong.size())));
    }

    /** As {@link #checkInMemory}, for the crash state written to a file and opened as a volume. */
    private String checkFromFile(byte[] crashed, List<Op> ops, int cut, int flushed) throws Exception {
        Path state = dir.resolve("state.img");
        Files.write(state, crashed);
        try {
            return check(state, ops, cut, flushed);
        } finally {
            Files.deleteIfExists(state);
        }
    }

    /**
     * What is wrong with the volume in {@code state} cut at stream position {@code cut} (the last flush before it
     * at {@code flushed}), opened with its allocator and file store, or null when it holds.
     */
    private String check(Path state, List<Op> ops, int cut, int flushed) throws Exception {
        List<String> wrong = new ArrayList<>();
        Volume v = Volume.open(state, config, settings);
        try {
            FileStore store = v.fileStore();
            checkFiles(new Contents() {
                @Override
                public List<String> files() {
                    return v.allocator().files();
                }

                @Override
                public ByteBuffer[] blocks(String f) throws Exception {
                    ByteBuffer[] out = new ByteBuffer[FILE_BLOCKS];
                    await(v.allocator().open(f));
                    for (long l = 0; l < FILE_BLOCKS; l++) out[(int) l] = await(store.read(f, l * BLOCK, BLOCK));
                    await(v.allocator().close(f));
                    return out;
                }
            }, ops, cut, flushed, wrong);
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

    private void checkFiles(Contents v, List<Op> ops, int cut, int flushed, List<String> wrong) throws Exception {
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
        List<String> present = v.files();
        for (Map.Entry<String, Boolean> e : mustExist.entrySet()) {
            String f = e.getKey();
            boolean there = present.contains(f);
            if (e.getValue() && !there && !mayBeGone.contains(f)) wrong.add(f + " answered as created is gone");
            if (!e.getValue() && there) wrong.add(f + " answered as deleted is back");
        }
        for (String f : present)
            if (!mustExist.containsKey(f) && !mayBeNew.contains(f)) wrong.add(f + " exists, and no call made it");
        for (String f : present) {
            TreeMap<Long, Integer> must = required.getOrDefault(f, new TreeMap<>());
            Map<Long, Set<Integer>> may = alsoMay.getOrDefault(f, Map.of());
            long truncatedFrom = truncatedAfter.getOrDefault(f, Long.MAX_VALUE);
            boolean mayBeStale = mayBeGone.contains(f) || (mayBeNew.contains(f) && !mustExist.containsKey(f));
            ByteBuffer[] blocks = v.blocks(f);
            for (long l = 0; l < FILE_BLOCKS; l++) {
                ByteBuffer got = blocks[(int) l];
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
