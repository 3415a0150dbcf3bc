package org.blockyard.benches;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import com.typesafe.config.Config;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import org.blockyard.runtime.config.BlockyardConfig;
import org.blockyard.runtime.store.FileStore;
import org.blockyard.runtime.volume.ExtentMap;
import org.blockyard.runtime.volume.Fsck;
import org.blockyard.runtime.volume.Journal;
import org.blockyard.runtime.volume.Layout;
import org.blockyard.runtime.volume.Metadata;
import org.blockyard.runtime.volume.Volume;
import org.blockyard.runtime.volume.VolumeAllocator;
import org.blockyard.runtime.volume.VolumeException;

/**
 * {@code blockyard bench crash}: a child JVM runs mixed load on a volume ({@link CrashLoad}: files appended,
 * truncated and deleted, data files written through the volume's FileStore, owners allocating and releasing
 * lists of extents across groups), reporting every acknowledgement over its standard output; the parent kills
 * it with SIGKILL at a random moment, optionally damages the killed volume's journal, reopens the volume
 * (recovery), reads every data file back, runs fsck, and checks every file and owner of every round so far
 * against what was acknowledged. A call in flight at the kill may or may not have happened; nothing
 * acknowledged may be lost, undone or read back wrong, and a damaged journal must be reported, never lost
 * silently.
 *
 * <p>Every wait has a deadline: the child's output is read on a thread of its own, so a child that says
 * nothing is killed at its deadline and counted; the recovery and checks of a round run on a thread with a
 * deadline of their own, and a round that overruns it ends the run with a report.
 */
@Command(name = "crash", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Kill a child JVM under load N times; after each kill recover the volume, read every data file "
                + "back, fsck, and check every acknowledged call: mappings, owned extents, contents; every few rounds "
                + "damage the journal first and expect the damage reported.",
                "Exit code 1 when anything acknowledged was lost, undone or read back wrong, a block is owned twice, "
                        + "fsck found a problem, recovery left a block no one holds used, journal damage went unreported, the volume did not open, or a child hung or "
                        + "died on its own; threads that stopped and refused calls are listed with their reasons."})
public final class CrashBenchCommand implements Callable<Integer> {

    @Option(names = "--kills", paramLabel = "N", defaultValue = "100", description = "rounds, each ending in a kill (default ${DEFAULT-VALUE})")
    int kills;

    @Option(names = "--seed", paramLabel = "N", defaultValue = "1", description = "random seed of the load, the kill moments and the "
            + "journal damage (default ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--writers", paramLabel = "N", defaultValue = "3", description = "file threads in the child: each appends to and "
            + "truncates a file, writes small files whole, writes " + CrashLoad.DATA_FILES + " data files through "
            + "FileStore, and deletes files of earlier rounds (default ${DEFAULT-VALUE})")
    int writers;

    @Option(names = "--owners", paramLabel = "N", defaultValue = "3", description = "extent owners in the child, a thread each, living "
            + "across rounds: they allocate in several groups and release lists of extents spanning several groups "
            + "at once, concurrently (0 = none; default ${DEFAULT-VALUE})")
    int owners;

    @Option(names = "--sessions", description = "the owners make their calls through sessions of the volume, one each "
            + "opened on its thread, and between their lists run bursts of small allocations and releases a loan serves; "
            + "after each kill, blocks lent and not handed out must be free once the volume is open again")
    boolean sessions;

    @Option(names = "--max-release-extents", paramLabel = "N", defaultValue = "20000", description = "most extents an owner releases "
            + "in one call (lists of 100 up to this, as far as what it holds allows; default ${DEFAULT-VALUE})")
    int maxReleaseExtents;

    @Option(names = "--max-kill-ms", paramLabel = "MS", defaultValue = "1500", description = "the kill comes 0 to this many ms after the "
            + "child's first acknowledgement (default ${DEFAULT-VALUE})")
    int maxKillMs;

    @Option(names = "--volume-size", paramLabel = "SIZE", defaultValue = "1GiB", converter = Sizes.Converter.class, description = "size of "
            + "the volume, at least one group of 128 MiB (default ${DEFAULT-VALUE})")
    long volumeSize;

    @Option(names = "--corrupt-every", paramLabel = "N", defaultValue = "10", description = "every Nth round, after the kill and before "
            + "the reopen, flip one byte of a logged block of a committed journal transaction that has another after "
            + "it; the open must report it (JournalDamaged), then fsck repairs and the volume reopens. A round whose "
            + "journal holds fewer than two transactions passes the damage to the next. 0 = never (default "
            + "${DEFAULT-VALUE})")
    int corruptEvery;

    @Option(names = "--child-timeout", paramLabel = "SECONDS", defaultValue = "60", description = "seconds the parent waits for the child's "
            + "first acknowledgement, and again for its output to end after the kill; a child silent that long is "
            + "killed and counted (default ${DEFAULT-VALUE})")
    int childTimeoutSeconds;

    @Option(names = "--check-timeout", paramLabel = "SECONDS", defaultValue = "300", description = "seconds one round's recovery, reads and "
            + "fsck may take; past it the run stops and reports (default ${DEFAULT-VALUE})")
    int checkTimeoutSeconds;

    @picocli.CommandLine.Mixin
    JsonOutput json;

    @Option(names = {"-q", "--quiet"}, description = "no line per kill on standard error")
    boolean quiet;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    static final int BLOCK_BYTES = 4096, BLOCKS_PER_GROUP = 32768, FILE_TABLE_BLOCKS = 1024;
    /** Rounds whose files the next rounds keep (and keep checking) before the child deletes them. */
    static final int KEEP_ROUNDS = 2;
    /** A data block whose contents are not known (read back wrong once: not counted again). */
    static final int UNKNOWN = Integer.MIN_VALUE;
    /** Findings printed per round at most; the counts have them all. */
    static final int FINDINGS_PER_ROUND = 20;

    /** What one key (a file or an owner) is known to hold. */
    private static final class Model {
        /** Mapped files and owners: logical -> physical (an owner's are the same). */
        final TreeMap<Long, Long> blocks = new TreeMap<>();
        /** A data file (written through FileStore): its contents are checked, not its mapping. */
        boolean data;
        /** A data file whose open (its creation) was acknowledged. */
        boolean opened;
        /** Its delete was acknowledged, and nothing made it again since. */
        boolean deleted;
        /** A data file's blocks: logical -> the generation acknowledged last ({@link #UNKNOWN}: not known). */
        final TreeMap<Long, Integer> generations = new TreeMap<>();
        /** The call in flight (its GO line, split), and a release's extents as start -> end. */
        String[] inFlight;
        TreeMap<Long, Long> inFlightExtents;
        /** What this round's reads found, for the resync. */
        TreeMap<Long, Integer> observed;
    }

    private final Map<String, Model> models = new TreeMap<>();
    private final List<String> findings = new ArrayList<>();
    private final Map<String, Long> stoppedReasons = new TreeMap<>();
    private final Map<String, Long> refusedReasons = new TreeMap<>();
    private final List<Double> recoveryMs = new ArrayList<>();
    private long acks, lost, undone, wrong, ownedTwice, fsckProblems, replayed;
    private long stopped, refused, silentChildren, childFailures, hungChecks;
    private long corruptRounds, corruptSkipped, damageReported, damageNotReported, unexpectedDamage, lostWithReport;
    private long lostAfterUnreported, undoneAfterUnreported, wrongAfterUnreported, fsckAfterUnreported;
    private long blocksChecked, releases, releasedExtents, largestRelease, multiGroupReleases, deletes;
    private long maxTableSlots, repairs, openFailures;
    /** With sessions: each owner's last LOAN figure this round; over the rounds, what was on loan at the kills. */
    private final Map<String, Long> loanedNow = new TreeMap<>();
    private long loanedAtKills, roundsWithLoansOut, recoveryFreed, notFreedByRecovery;
    private boolean corruptPending;
    private long deleteBefore;
    private Random rnd;
    private Path image;
    private Config config;
    /** Per round: what it counted of lost, undone, wrong, and its finding lines. */
    private long roundLost, roundUndone, roundWrong, roundFindings;
    private int round;

    @Override
    public Integer call() throws Exception {
        BadOption.atLeast("--kills", kills, 1);
        BadOption.atLeast("--writers", writers, 1);
        BadOption.atLeast("--owners", owners, 0);
        BadOption.atLeast("--max-release-extents", maxReleaseExtents, 100);
        BadOption.atLeast("--max-kill-ms", maxKillMs, 1);
        BadOption.atLeast("--corrupt-every", corruptEvery, 0);
        BadOption.atLeast("--child-timeout", childTimeoutSeconds, 1);
        BadOption.atLeast("--check-timeout", checkTimeoutSeconds, 1);
        if (volumeSize < (long) BLOCKS_PER_GROUP * BLOCK_BYTES)
            throw new BadOption("--volume-size", volumeSize, "must hold at least one group (128 MiB)");
        config = BlockyardConfig.load();
        long totalBlocks = volumeSize / BLOCK_BYTES / BLOCKS_PER_GROUP * BLOCKS_PER_GROUP;
        Layout layout = Layout.make(BLOCK_BYTES, totalBlocks, BLOCKS_PER_GROUP, FILE_TABLE_BLOCKS,
                config.getInt("blockyard.volume.journal-blocks"), 0, 0);
        long dataBlocks = layout.geometry().dataBlocks();
        // Space: owners up to 30 % of the data blocks together, the appended files as much over the rounds
        // kept; the file table: owners' extents up to two fifths of it together (lists of tens of thousands
        // of extents need owners that hold that many).
        long bigMax = Math.max(64, dataBlocks * 3 / 10 / ((long) writers * (KEEP_ROUNDS + 1)));
        long ownerMaxBlocks = owners == 0 ? 0 : Math.max(256, dataBlocks * 3 / 10 / owners);
        int ownerMaxRuns = owners == 0 ? 0 : Math.max(200, FILE_TABLE_BLOCKS * 2 / 5 * layout.extentsPerTableBlock() / owners);
        rnd = new Random(seed);
        image = Files.createTempFile("blockyard-crash-", ".img");
        Path stderr = Files.createTempFile("blockyard-crash-", ".stderr");
        ExecutorService checker = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "crash-check");
            t.setDaemon(true);
            return t;
        });
        long t0 = System.nanoTime();
        int done = 0;
        try {
            Volume.mkfs(image, layout);
            for (round = 0; round < kills; round++) {
                roundLost = roundUndone = roundWrong = roundFindings = 0;
                long stoppedBefore = stopped;
                String childFailure = runChild(stderr, bigMax, ownerMaxBlocks, ownerMaxRuns);
                boolean corrupt = corruptEvery > 0 && (corruptPending || (round + 1) % corruptEvery == 0);
                Future<String> check = checker.submit(() -> check(corrupt));
                String outcome;
                try {
                    outcome = check.get(checkTimeoutSeconds, TimeUnit.SECONDS);
                } catch (TimeoutException e) {
                    hungChecks++;
                    finding("round " + round + ": recovery and checks did not finish within " + checkTimeoutSeconds
                            + " s; the run stops here", true);
                    check.cancel(true);
                    tail(stderr);
                    break;
                } catch (ExecutionException e) {
                    hungChecks++;
                    Throwable c = e.getCause();
                    finding("round " + round + ": recovery or checks failed: " + CrashLoad.reason(c) + "; the run stops here", true);
                    if (!quiet) c.printStackTrace();
                    tail(stderr);
                    break;
                }
                done++;
                if (childFailure != null || stopped > stoppedBefore) tail(stderr);
                if (!quiet)
                    System.err.printf("kill %d/%d: %,d acknowledged so far, recovery %.1f ms, %s; lost %d, undone %d, "
                                    + "wrong %d, stopped %d%s%n", round + 1, kills, acks,
                            recoveryMs.get(recoveryMs.size() - 1), outcome, lost, undone, wrong, stopped,
                            childFailure == null ? "" : "; child: " + childFailure);
            }
        } finally {
            checker.shutdownNow();
            Files.deleteIfExists(image);
            Files.deleteIfExists(stderr);
        }
        double elapsed = (System.nanoTime() - t0) / 1e9;
        return report(done, elapsed);
    }

    // ---- the child ------------------------------------------------------------------------------------

    /**
     * The child's standard output, read on a thread of its own: whole lines into a queue, then {@link #END}; a
     * last line the kill cut (no newline) is dropped, as the call it was to report may not have happened.
     */
    private static final class ChildOutput implements Runnable {
        static final String END = new String("END of output");
        final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        private final InputStream in;

        ChildOutput(InputStream in) {
            this.in = in;
        }

        @Override
        public void run() {
            ByteArrayOutputStream line = new ByteArrayOutputStream();
            byte[] buf = new byte[1 << 16];
            try {
                for (int n; (n = in.read(buf)) > 0; ) {
                    int from = 0;
                    for (int i = 0; i < n; i++) {
                        if (buf[i] != '\n') continue;
                        line.write(buf, from, i - from);
                        lines.add(line.toString(StandardCharsets.UTF_8));
                        line.reset();
                        from = i + 1;
                    }
                    line.write(buf, from, n - from);
                }
            } catch (IOException e) {
                // the pipe broke: what came before counts
            } finally {
                lines.add(END);
            }
        }
    }

    /**
     * Runs one child until the kill and takes every whole line it wrote; answers why the round's child failed
     * (silent, died on its own, did not end), or null.
     */
    private String runChild(Path stderr, long bigMax, long ownerMaxBlocks, int ownerMaxRuns) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process child = new ProcessBuilder(java, "-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp",
                System.getProperty("java.class.path"), CrashLoad.class.getName(), image.toString(), "k" + round + "-",
                Integer.toString(writers), Integer.toString(owners), Long.toString(seed * 1000 + round),
                Long.toString(deleteBefore), Long.toString(bigMax), Long.toString(ownerMaxBlocks),
                Integer.toString(ownerMaxRuns), Integer.toString(maxReleaseExtents), sessions ? "sessions" : "plain")
                .redirectError(ProcessBuilder.Redirect.to(stderr.toFile())).start();
        ChildOutput out = new ChildOutput(child.getInputStream());
        Thread reader = new Thread(out, "crash-child-output");
        reader.setDaemon(true);
        reader.start();
        long timeout = TimeUnit.SECONDS.toNanos(childTimeoutSeconds);
        long firstDeadline = System.nanoTime() + timeout, killAt = -1;
        boolean ended = false, ready = false;
        String failure = null;
        try {
            while (true) {
                long left = (killAt >= 0 ? killAt : firstDeadline) - System.nanoTime();
                if (left <= 0) break;
                String line = out.lines.poll(left, TimeUnit.NANOSECONDS);
                if (line == null) continue;
                if (line == ChildOutput.END) {
                    ended = true;
                    break;
                }
                ready |= line.equals("READY");
                if (take(line) && killAt < 0) killAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(rnd.nextInt(maxKillMs));
            }
            if (ended) {
                childFailures++;
                failure = "the child ended on its own before the kill"
                        + (child.waitFor(timeout, TimeUnit.NANOSECONDS) ? " (exit code " + child.exitValue() + ")" : "");
            } else if (killAt < 0) {
                silentChildren++;
                failure = "no acknowledgement within " + childTimeoutSeconds + " s (" + (ready ? "it was READY" : "not even READY")
                        + "); killed";
            }
        } finally {
            // SIGKILL through the handle: Process.destroyForcibly would also close our end of the pipe.
            child.toHandle().destroyForcibly();
        }
        // What the child said before it died is still in the pipe: those calls happened too.
        long drainDeadline = System.nanoTime() + timeout;
        while (!ended) {
            long left = drainDeadline - System.nanoTime();
            String line = left <= 0 ? null : out.lines.poll(left, TimeUnit.NANOSECONDS);
            if (line == null && System.nanoTime() >= drainDeadline) {
                childFailures++;
                failure = (failure == null ? "" : failure + "; ") + "its output did not end within "
                        + childTimeoutSeconds + " s of the kill";
                break;
            }
            if (line == null) continue;
            if (line == ChildOutput.END) ended = true;
            else take(line);
        }
        if (!child.waitFor(timeout, TimeUnit.NANOSECONDS)) {
            childFailures++;
            failure = (failure == null ? "" : failure + "; ") + "it did not exit within " + childTimeoutSeconds + " s of the kill";
        }
        if (failure != null) finding("round " + round + ": " + failure, true);
        return failure;
    }

    /** Prints the end of the child's standard error, after a failure. */
    private void tail(Path stderr) {
        try (RandomAccessFile f = new RandomAccessFile(stderr.toFile(), "r")) {
            long len = f.length();
            if (len == 0) {
                System.err.println("  (the child's standard error is empty)");
                return;
            }
            int n = (int) Math.min(len, 8192);
            byte[] b = new byte[n];
            f.seek(len - n);
            f.readFully(b);
            String[] lines = new String(b, StandardCharsets.UTF_8).split("\n");
            System.err.println("  the child's standard error, last lines (round " + round + "):");
            for (int i = Math.max(lines.length > 1 && n < len ? 1 : 0, lines.length - 30); i < lines.length; i++)
                System.err.println("  | " + lines[i]);
        } catch (IOException e) {
            System.err.println("  (the child's standard error could not be read: " + e.getMessage() + ")");
        }
    }

    /** Applies one line of the child's; answers whether it was an acknowledgement. */
    private boolean take(String line) {
        String[] f = line.split(" ");
        if (f.length < 2) return false;
        switch (f[0]) {
            case "GO" -> {
                if (f.length < 3) return false;
                Model m = models.computeIfAbsent(f[1], k -> new Model());
                m.inFlight = f;
                m.inFlightExtents = null;
                if (f[2].equals("OPEN")) m.data = true;
                if (f[2].equals("REL")) {
                    m.inFlightExtents = new TreeMap<>();
                    for (int i = 3; i + 1 < f.length; i += 2) {
                        long s = Long.parseLong(f[i]);
                        m.inFlightExtents.put(s, s + Long.parseLong(f[i + 1]));
                    }
                }
                return false;
            }
            case "ACK" -> {
                if (f.length < 3) return false;
                Model m = models.computeIfAbsent(f[1], k -> new Model());
                apply(m, f);
                m.inFlight = null;
                m.inFlightExtents = null;
                acks++;
                return true;
            }
            case "NACK" -> { // refused: the API says it changed nothing
                Model m = models.get(f[1]);
                if (m != null) {
                    m.inFlight = null;
                    m.inFlightExtents = null;
                }
                refused++;
                refusedReasons.merge(kind(line, 2), 1L, Long::sum);
                return false;
            }
            case "LOAN" -> { // blocks on loan, not handed out, as the child's allocator counted them
                if (f.length >= 3) loanedNow.put(f[1], Long.parseLong(f[2]));
                return false;
            }
            case "STOPPED" -> { // the call in flight stays in flight
                stopped++;
                String why = kind(line, 2);
                stoppedReasons.merge(why, 1L, Long::sum);
                finding("round " + round + ": a thread stopped on " + f[1] + ": " + rest(line, 2));
                return false;
            }
            default -> {
                return false;
            }
        }
    }

    /** The words of {@code line} from the {@code from}th on. */
    private static String rest(String line, int from) {
        int at = 0;
        for (int i = 0; i < from && at >= 0; i++) at = line.indexOf(' ', at) + 1;
        return at <= 0 ? "" : line.substring(at);
    }

    /** A reason as a kind: numbers and names taken out, so the same cause counts once. */
    private static String kind(String line, int from) {
        String r = rest(line, from).replaceAll("'[^']*'", "'…'").replaceAll("\\d+", "#");
        return r.length() > 160 ? r.substring(0, 160) + "…" : r;
    }

    private void apply(Model m, String[] f) {
        switch (f[2]) {
            case "MAP", "MAPS" -> { // one run, or a batch's runs: logical physical blocks, again and again
                for (int i = 3; i + 2 < f.length; i += 3) {
                    long l = Long.parseLong(f[i]), p = Long.parseLong(f[i + 1]), n = Long.parseLong(f[i + 2]);
                    for (long k = 0; k < n; k++) m.blocks.put(l + k, p + k);
                }
                m.deleted = false;
            }
            case "TRUNC" -> {
                long from = Long.parseLong(f[3]);
                if (m.data) m.generations.tailMap(from, true).clear();
                else m.blocks.tailMap(from, true).clear();
            }
            case "DEL" -> {
                m.blocks.clear();
                m.generations.clear();
                m.deleted = true;
                m.opened = false;
                deletes++;
            }
            case "OPEN" -> {
                m.data = true;
                m.opened = true;
                m.deleted = false;
            }
            case "WRITE" -> {
                long from = Long.parseLong(f[3]), n = Long.parseLong(f[4]);
                int gen = Integer.parseInt(f[5]);
                for (long l = from; l < from + n; l++) m.generations.put(l, gen);
            }
            case "EXT" -> {
                for (int i = 3; i + 1 < f.length; i += 2) {
                    long s = Long.parseLong(f[i]), n = Long.parseLong(f[i + 1]);
                    for (long b = s; b < s + n; b++) m.blocks.put(b, b);
                }
            }
            case "REL" -> {
                TreeMap<Long, Long> list = m.inFlightExtents;
                if (list == null) throw new IllegalStateException("a release acknowledged without its GO: " + String.join(" ", f));
                Set<Long> groups = new HashSet<>();
                for (Map.Entry<Long, Long> e : list.entrySet()) {
                    for (long b = e.getKey(); b < e.getValue(); b++) m.blocks.remove(b);
                    groups.add(e.getKey() / BLOCKS_PER_GROUP);
                }
                releases++;
                releasedExtents += list.size();
                largestRelease = Math.max(largestRelease, list.size());
                if (groups.size() > 1) multiGroupReleases++;
            }
            default -> throw new IllegalStateException("unknown line " + String.join(" ", f));
        }
    }

    // ---- after the kill -------------------------------------------------------------------------------

    /** A byte flipped on purpose in a logged block of a committed transaction. */
    private record Damage(long seq, int index, int transactions, long block, int offset) {
        @Override
        public String toString() {
            return "transaction " + seq + " (" + (index + 1) + " of " + transactions + " in the log), block " + block
                    + " byte " + offset;
        }
    }

    /**
     * Flips one byte in one of the logged blocks of a committed transaction with at least one after it;
     * null when the log holds fewer than two.
     */
    private Damage damage() throws IOException {
        List<Journal.LoggedTransaction> txs = Volume.journalTransactions(image);
        if (txs.size() < 2) return null;
        // One in the middle: neither the first nor the last when there are three or more.
        int index = txs.size() == 2 ? 0 : 1 + rnd.nextInt(txs.size() - 2);
        Journal.LoggedTransaction t = txs.get(index);
        List<Long> where = t.imageBlocks(); // descriptors, logged blocks, the commit block
        try (FileChannel ch = FileChannel.open(image, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer desc = ByteBuffer.allocate(BLOCK_BYTES).order(ByteOrder.LITTLE_ENDIAN);
            ch.read(desc, where.get(0) * BLOCK_BYTES);
            int logged = desc.getInt(16), descriptors = where.size() - logged - 1;
            if (logged < 1 || descriptors < 1) { // not as the format says: any block but the first and the commit
                logged = Math.max(1, where.size() - 2);
                descriptors = 1;
            }
            long block = where.get(Math.min(where.size() - 1, descriptors + rnd.nextInt(logged)));
            int offset = rnd.nextInt(BLOCK_BYTES);
            ByteBuffer b = ByteBuffer.allocate(1);
            ch.read(b, block * BLOCK_BYTES + offset);
            b.put(0, (byte) (b.get(0) ^ (1 + rnd.nextInt(255))));
            b.rewind();
            ch.write(b, block * BLOCK_BYTES + offset);
            ch.force(true);
            return new Damage(t.seq(), index, txs.size(), block, offset);
        }
    }

    /**
     * One round's check: damage the journal if asked, reopen (recovery; after reported damage, fsck repairs
     * and the volume opens again), read the data files back, close, fsck, compare every key with what was
     * acknowledged, then follow what recovery kept. Answers a few words for the progress line.
     */
    private String check(boolean corrupt) throws Exception {
        Damage damage = corrupt ? damage() : null;
        if (corrupt && damage == null) {
            corruptSkipped++;
            corruptPending = true;
        } else if (damage != null) {
            corruptRounds++;
            corruptPending = false;
        }
        boolean reported = false;
        Volume v;
        try {
            v = Volume.open(image, config);
        } catch (VolumeException.JournalDamaged e) {
            reported = true;
            finding("round " + round + ": " + (damage == null ? "journal damage reported after a plain kill: "
                    : "damaged " + damage + "; reported: ") + e.getMessage() + " (skipped " + e.skipped() + ")", true);
            Fsck.Result repaired = Fsck.check(image, true);
            if (!repaired.problems().isEmpty())
                finding("round " + round + ": fsck --repair after the damage: " + brief(repaired, 3), true);
            v = Volume.open(image, config);
        } catch (VolumeException.Corrupt e) {
            // Not a journal the open could not replay: metadata that does not check. A failure; repaired to go on.
            openFailures++;
            finding("round " + round + ": the volume does not open: " + e.getMessage() + (damage == null ? ""
                    : " (after damaged " + damage + ", not reported)"), true);
            Fsck.Result fixed = Fsck.check(image, true);
            repairs++;
            finding("round " + round + ": fsck --repair to go on: " + brief(fixed, 3), true);
            v = Volume.open(image, config);
        }
        long loaned = loanedNow.values().stream().mapToLong(Long::longValue).sum();
        loanedNow.clear();
        loanedAtKills += loaned;
        if (loaned > 0) roundsWithLoansOut++;
        long freeAfterOpen;
        try {
            recoveryMs.add(v.recovery().nanos() / 1e6);
            replayed += v.recovery().transactionsReplayed();
            recoveryFreed += v.recovery().leaksFreed();
            // Exact: nothing is on loan or preallocated yet, no call is in flight.
            freeAfterOpen = await(v.allocator().freeBlocks(), "free blocks");
            readBack(v);
        } finally {
            v.close();
        }
        Fsck.Result r = Fsck.check(image, false);
        fsckProblems += r.problems().size();
        ownedTwice += r.count(Fsck.Kind.OWNED_TWICE);
        if (!r.clean()) {
            finding("round " + round + ": fsck: " + brief(r, 10), true);
            finding("round " + round + ": in flight at the kill: " + inFlight(), true);
            // Repaired, so that the next rounds run on a volume that opens (the problems are counted above).
            Fsck.Result fixed = Fsck.check(image, true);
            repairs++;
            finding("round " + round + ": fsck --repair to go on: " + brief(fixed, 3), true);
        }
        Metadata meta = Volume.inspect(image);
        // What no file or owner holds was free once the volume was open again: the close found nothing more to free
        // (blocks lent to sessions and not handed out, preallocations, windows: all memory only).
        if (r.clean() && meta.freeBlocks() != freeAfterOpen) {
            notFreedByRecovery += Math.abs(meta.freeBlocks() - freeAfterOpen);
            finding("round " + round + ": " + freeAfterOpen + " blocks free after recovery, " + meta.freeBlocks()
                    + " after the close: recovery left blocks no one holds used" + (loaned > 0 ? " (" + loaned
                    + " blocks were on loan at the kill)" : ""), true);
        }
        for (Map.Entry<String, Model> e : models.entrySet()) {
            Model m = e.getValue();
            if (m.data) continue; // read back above
            long[] d = compare(e.getKey(), m, meta);
            roundLost += d[0];
            roundUndone += d[1];
            if (d[0] + d[1] > 0) finding("round " + round + ": " + e.getKey() + " lost " + d[0] + ", undone " + d[1]
                    + (m.inFlight == null ? "" : " (in flight: " + String.join(" ", head(m.inFlight)) + ")"));
        }
        long bad = roundLost + roundUndone + roundWrong;
        if (reported) {
            damageReported++;
            if (damage == null) unexpectedDamage++;
            lostWithReport += bad;
        } else {
            lost += roundLost;
            undone += roundUndone;
            wrong += roundWrong;
            if (damage != null) {
                damageNotReported++;
                lostAfterUnreported += roundLost;
                undoneAfterUnreported += roundUndone;
                wrongAfterUnreported += roundWrong;
                fsckAfterUnreported += r.problems().size();
                finding("round " + round + ": damaged " + damage + "; the open did not report it (replayed "
                        + v.recovery().transactionsReplayed() + " transactions, log ends: " + v.recovery().logEnd() + ")"
                        + (bad > 0 ? "; " + bad + " acknowledged blocks lost, undone or wrong without a word" : ""), true);
            }
        }
        resync(meta);
        long slots = 0;
        for (Metadata.Entry e : meta.entries()) slots += e.slots().size();
        maxTableSlots = Math.max(maxTableSlots, slots);
        // The next child deletes the files of the rounds before the kept ones; all before it when the table fills.
        deleteBefore = slots > FILE_TABLE_BLOCKS / 2 ? round + 1 : round + 1 - KEEP_ROUNDS;
        String fsck = r.clean() ? "fsck clean" : "fsck " + r.problems().size() + " problems";
        if (damage == null) return fsck + (reported ? ", journal damage reported" : "");
        return fsck + ", journal damaged (" + damage + "): " + (reported ? "reported" : "NOT reported");
    }

    /** An fsck result in a few lines: the problems by kind, how many are left, the first {@code lines} of them. */
    private static String brief(Fsck.Result r, int lines) {
        Map<Fsck.Kind, Long> kinds = new TreeMap<>();
        for (Fsck.Problem p : r.problems()) kinds.merge(p.kind(), 1L, Long::sum);
        long left = r.problems().stream().filter(p -> !p.repaired()).count();
        StringBuilder b = new StringBuilder(r.problems().size() + " problems " + kinds + ", " + left + " left");
        for (int i = 0; i < Math.min(lines, r.problems().size()); i++) b.append("\n    ").append(r.problems().get(i));
        if (r.problems().size() > lines) b.append("\n    ...");
        return b.toString();
    }

    /** The calls in flight at the kill, in a few words each. */
    private String inFlight() {
        List<String> out = new ArrayList<>();
        for (Model m : models.values()) {
            if (m.inFlight == null) continue;
            String[] f = m.inFlight;
            if (m.inFlightExtents != null) {
                Set<Long> groups = new TreeSet<>();
                for (long s : m.inFlightExtents.keySet()) groups.add(s / BLOCKS_PER_GROUP);
                out.add(f[1] + " REL of " + m.inFlightExtents.size() + " extents " + m.inFlightExtents.firstKey() + ".."
                        + (m.inFlightExtents.lastEntry().getValue() - 1) + " in groups " + groups);
            } else {
                out.add(String.join(" ", head(f)).substring(3));
            }
        }
        return out.isEmpty() ? "nothing" : String.join("; ", out);
    }

    private static List<String> head(String[] f) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < Math.min(f.length, 8); i++) out.add(f[i]);
        if (f.length > 8) out.add("… (" + (f.length - 8) + " more)");
        return out;
    }

    private static <T> T await(CompletionStage<T> s, String what) throws Exception {
        try {
            return s.toCompletableFuture().get(60, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            throw new TimeoutException(what + " did not complete within 60 s");
        }
    }

    /**
     * Reads every data file back through the volume's FileStore and checks each block against what was
     * acknowledged: the generation acknowledged last, or the one in flight at the kill (a truncate in flight:
     * zeros too); a block never written (or truncated) reads zeros. A data file whose creation was
     * acknowledged must be there; one whose delete was, gone.
     */
    private void readBack(Volume v) throws Exception {
        VolumeAllocator a = v.allocator();
        Set<String> present = new HashSet<>(a.files());
        FileStore store = v.fileStore();
        for (Map.Entry<String, Model> e : models.entrySet()) {
            String key = e.getKey();
            Model m = e.getValue();
            if (!m.data) continue;
            String[] fl = m.inFlight;
            String op = fl == null ? "" : fl[2];
            m.observed = null;
            if (!present.contains(key)) {
                if (m.opened && !op.equals("DEL")) {
                    long written = m.generations.values().stream().filter(g -> g != 0).count();
                    roundLost += 1;
                    roundWrong += written;
                    finding("round " + round + ": data file " + key + " is gone; its creation was acknowledged"
                            + (written > 0 ? ", and " + written + " blocks written" : ""));
                }
                continue;
            }
            boolean undeleted = m.deleted && fl == null; // its blocks are not judged again: the delete is what was undone
            if (undeleted) {
                roundUndone++;
                finding("round " + round + ": data file " + key + " is still there; its delete was acknowledged");
            }
            ByteBuffer data;
            try {
                await(a.open(key), "open " + key);
                data = await(store.read(key, 0, CrashLoad.DATA_BLOCKS * BLOCK_BYTES), "read " + key);
                await(a.close(key), "close " + key);
            } catch (ExecutionException | TimeoutException failed) {
                long written = m.generations.values().stream().filter(g -> g != 0).count();
                roundWrong += written;
                finding("round " + round + ": data file " + key + " cannot be read back (" + CrashLoad.reason(failed)
                        + ")" + (written > 0 ? ": its " + written + " blocks written count as wrong" : ""));
                m.observed = new TreeMap<>();
                for (long l = 0; l < CrashLoad.DATA_BLOCKS; l++) m.observed.put(l, UNKNOWN);
                continue;
            }
            TreeMap<Long, Integer> seen = new TreeMap<>();
            long badFrom = -1; // a run of wrong blocks that read and were acknowledged alike: one finding
            int badGot = 0, badWant = 0;
            for (long l = 0; l <= CrashLoad.DATA_BLOCKS; l++) {
                boolean ok = true;
                int got = 0, want = 0;
                if (l < CrashLoad.DATA_BLOCKS) {
                    got = CrashPattern.generation(data, (int) l * BLOCK_BYTES, BLOCK_BYTES, key, l);
                    want = m.generations.getOrDefault(l, 0);
                    ok = undeleted || want == UNKNOWN || got == want
                            || op.equals("WRITE") && l >= Long.parseLong(fl[3]) && l < Long.parseLong(fl[3]) + Long.parseLong(fl[4])
                            && got == Integer.parseInt(fl[5])
                            || op.equals("TRUNC") && l >= Long.parseLong(fl[3]) && got == 0
                            // a delete frees the file's blocks before it unlinks the name: one cut short leaves
                            // the file there with any of its blocks freed (docs/limits.md)
                            || op.equals("DEL") && got == 0;
                    blocksChecked++;
                }
                if (badFrom >= 0 && (ok || got != badGot || want != badWant)) {
                    finding("round " + round + ": " + key + (l - badFrom == 1 ? " block " + badFrom : " blocks " + badFrom
                            + ".." + (l - 1)) + " read " + CrashPattern.describe(badGot) + ", acknowledged "
                            + CrashPattern.describe(badWant) + (fl == null ? "" : " (in flight: " + String.join(" ", head(fl)) + ")"));
                    badFrom = -1;
                }
                if (l == CrashLoad.DATA_BLOCKS) break;
                if (ok) {
                    if (got != 0) seen.put(l, got);
                    continue;
                }
                roundWrong++;
                seen.put(l, UNKNOWN);
                if (badFrom < 0) {
                    badFrom = l;
                    badGot = got;
                    badWant = want;
                }
            }
            m.observed = seen;
        }
    }

    private static TreeMap<Long, Long> stored(String key, Metadata meta) {
        Metadata.Entry e = key.contains("-f") ? meta.entry(key) : meta.owner(key);
        TreeMap<Long, Long> out = new TreeMap<>();
        if (e == null) return out;
        for (ExtentMap.Run r : e.map.runs())
            for (long i = 0; i < r.blocks(); i++) out.put(r.logical() + i, r.physical() + i);
        return out;
    }

    /**
     * {lost, undone}: acknowledged blocks missing (unless the call in flight could have removed them), and
     * blocks present that an acknowledged free removed (unless the call in flight could have added them); a
     * file whose delete was acknowledged and that is still there counts one undone.
     */
    private static long[] compare(String key, Model m, Metadata meta) {
        TreeMap<Long, Long> got = stored(key, meta);
        String[] fl = m.inFlight;
        String op = fl == null ? "" : fl[2];
        long lost = 0, undone = 0;
        for (Map.Entry<Long, Long> b : m.blocks.entrySet()) {
            long l = b.getKey();
            boolean mayBeGone = op.equals("DEL")
                    || op.equals("TRUNC") && l >= Long.parseLong(fl[3])
                    || op.equals("REL") && inside(m.inFlightExtents, l);
            if (!mayBeGone && !b.getValue().equals(got.get(l))) lost++;
        }
        TreeSet<Long> extra = new TreeSet<>(got.keySet());
        extra.removeAll(m.blocks.keySet());
        for (long b : extra) {
            boolean mayBeNew = op.equals("MAP") && b >= Long.parseLong(fl[3]) || op.equals("EXT");
            if (!mayBeNew) undone++;
        }
        if (m.deleted && fl == null && key.contains("-f") && meta.entry(key) != null && got.isEmpty()) undone++;
        return new long[] {lost, undone};
    }

    private static boolean inside(TreeMap<Long, Long> extents, long block) {
        if (extents == null) return false;
        Map.Entry<Long, Long> e = extents.floorEntry(block);
        return e != null && block < e.getValue();
    }

    /**
     * After the check, the models follow what recovery kept of the calls that were in flight (the process that
     * had them in flight is gone); keys the volume no longer holds and nothing expects are dropped.
     */
    private void resync(Metadata meta) {
        for (Iterator<Map.Entry<String, Model>> it = models.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, Model> e = it.next();
            String key = e.getKey();
            Model m = e.getValue();
            m.inFlight = null;
            m.inFlightExtents = null;
            boolean file = key.contains("-f");
            boolean exists = file ? meta.entry(key) != null : meta.owner(key) != null;
            if (m.data) {
                if (!exists) {
                    it.remove();
                    continue;
                }
                m.opened = true;
                m.deleted = false;
                m.generations.clear();
                if (m.observed != null) m.generations.putAll(m.observed);
                m.observed = null;
                continue;
            }
            m.blocks.clear();
            m.blocks.putAll(stored(key, meta));
            if (!exists && m.blocks.isEmpty()) it.remove();
            else if (exists) m.deleted = false;
        }
    }

    // ---- the report -----------------------------------------------------------------------------------

    /** A line for the report; past {@link #FINDINGS_PER_ROUND} in a round, one line says there were more. */
    private void finding(String line) {
        finding(line, false);
    }

    /** As {@link #finding(String)}; with {@code always}, listed however many came before (a round's summary). */
    private void finding(String line, boolean always) {
        if (always) {
            findings.add(line);
            return;
        }
        long n = roundFindings++;
        if (n < FINDINGS_PER_ROUND) findings.add(line);
        else if (n == FINDINGS_PER_ROUND) findings.add("round " + round + ": (more findings of this round are counted, not listed)");
    }

    private int report(int done, double elapsed) throws IOException {
        List<Double> sorted = new ArrayList<>(recoveryMs);
        sorted.sort(null);
        Map<String, Object> row = Report.row();
        row.put("workload", "crash");
        row.put("kills", (long) done);
        row.put("kills_asked", (long) kills);
        row.put("acknowledged", acks);
        row.put("lost_acknowledged_allocations", lost);
        row.put("undone_acknowledged_frees", undone);
        row.put("wrong_contents", wrong);
        row.put("blocks_owned_twice", ownedTwice);
        row.put("fsck_problems", fsckProblems);
        row.put("stopped_writers", stopped);
        row.put("stopped_writer_reasons", new LinkedHashMap<>(stoppedReasons));
        row.put("refused_calls", refused);
        row.put("refused_call_reasons", new LinkedHashMap<>(refusedReasons));
        row.put("silent_children", silentChildren);
        row.put("child_failures", childFailures);
        row.put("hung_or_failed_checks", hungChecks);
        row.put("open_failures", openFailures);
        row.put("repairs_to_go_on", repairs);
        row.put("corrupt_rounds", corruptRounds);
        row.put("corrupt_skipped", corruptSkipped);
        row.put("damage_reported", damageReported);
        row.put("damage_not_reported", damageNotReported);
        row.put("unexpected_damage", unexpectedDamage);
        row.put("lost_with_report", lostWithReport);
        Map<String, Object> after = new LinkedHashMap<>();
        after.put("lost", lostAfterUnreported);
        after.put("undone", undoneAfterUnreported);
        after.put("wrong", wrongAfterUnreported);
        after.put("fsck_problems", fsckAfterUnreported);
        row.put("after_unreported_damage", after);
        row.put("blocks_checked", blocksChecked);
        row.put("releases", releases);
        row.put("released_extents", releasedExtents);
        row.put("largest_release_extents", largestRelease);
        row.put("multi_group_releases", multiGroupReleases);
        row.put("deletes", deletes);
        row.put("file_table_max_slots", maxTableSlots);
        row.put("replayed_transactions", replayed);
        row.put("sessions", sessions);
        row.put("loaned_at_kills_blocks", loanedAtKills);
        row.put("rounds_with_loans_out", roundsWithLoansOut);
        row.put("recovery_freed_blocks", recoveryFreed);
        row.put("not_freed_by_recovery", notFreedByRecovery);
        Map<String, Object> recovery = new LinkedHashMap<>();
        recovery.put("p50", sorted.isEmpty() ? null : sorted.get(sorted.size() / 2));
        recovery.put("max", sorted.isEmpty() ? null : sorted.get(sorted.size() - 1));
        row.put("recovery_ms", recovery);
        row.put("elapsed_s", Math.round(elapsed * 10) / 10.0);
        PrintStream out = json.tables();
        Report.table(out, List.of(row), List.of("kills", "acknowledged", "lost_acknowledged_allocations",
                "undone_acknowledged_frees", "wrong_contents", "blocks_owned_twice", "fsck_problems", "stopped_writers",
                "silent_children", "damage_reported", "damage_not_reported", "lost_with_report", "blocks_checked",
                "released_extents", "largest_release_extents", "recovery_ms.p50", "recovery_ms.max"));
        for (String f : findings) out.println(f);
        for (Map.Entry<String, Long> e : stoppedReasons.entrySet())
            out.println("stopped " + e.getValue() + " times: " + e.getKey());
        for (Map.Entry<String, Long> e : refusedReasons.entrySet())
            out.println("refused " + e.getValue() + " times: " + e.getKey());
        out.printf(java.util.Locale.ROOT, "crash: %d of %d kills, %,d acknowledged, %d lost, %d undone, %d wrong, "
                        + "%d owned twice, %d fsck problems, %d stopped, %d silent children, %d child failures, damage "
                        + "reported %d / not reported %d, %d lost with a report, %,d blocks read back, %,.1f s%n", done, kills,
                acks, lost, undone, wrong, ownedTwice, fsckProblems, stopped, silentChildren, childFailures,
                damageReported, damageNotReported, lostWithReport, blocksChecked, elapsed);
        json.write(spec, List.of(row), null);
        if (sessions)
            out.printf(java.util.Locale.ROOT, "sessions: %d of %d kills with blocks on loan, %,d blocks on loan at the "
                    + "kills, %,d freed by recovery, %d left used after it%n", roundsWithLoansOut, done, loanedAtKills,
                    recoveryFreed, notFreedByRecovery);
        long failures = lost + undone + wrong + ownedTwice + fsckProblems + damageNotReported + unexpectedDamage
                + silentChildren + childFailures + hungChecks + openFailures + notFreedByRecovery;
        return failures == 0 ? 0 : 1;
    }
}
