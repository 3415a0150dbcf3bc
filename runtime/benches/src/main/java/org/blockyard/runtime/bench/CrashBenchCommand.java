package org.blockyard.runtime.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

import com.typesafe.config.Config;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import org.blockyard.runtime.config.BlockyardConfig;
import org.blockyard.runtime.volume.ExtentMap;
import org.blockyard.runtime.volume.Fsck;
import org.blockyard.runtime.volume.Layout;
import org.blockyard.runtime.volume.Metadata;
import org.blockyard.runtime.volume.Volume;

/**
 * {@code blockyard bench crash}: a child JVM runs mixed load on a volume ({@link CrashLoad}: files appended and
 * truncated, extents allocated and released by their owners), reporting every acknowledgement over its
 * standard output; the parent kills it with SIGKILL ({@code destroyForcibly}) at a random moment, reopens the
 * volume (recovery), runs fsck, and checks every file and owner of every round so far against what was
 * acknowledged. A call in flight at the kill may or may not have happened; nothing acknowledged may be lost
 * or undone.
 */
@Command(name = "crash", mixinStandardHelpOptions = true,
        description = "Kill a child JVM under load N times; check recovery against every acknowledged call, and fsck.")
public final class CrashBenchCommand implements Callable<Integer> {

    @Option(names = "--kills", defaultValue = "100", description = "rounds, each ending in a kill (default ${DEFAULT-VALUE})")
    int kills;

    @Option(names = "--seed", defaultValue = "1", description = "random seed of the load and the kill moments (default ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--writers", defaultValue = "3", description = "threads of load in the child (default ${DEFAULT-VALUE})")
    int writers;

    @Option(names = "--max-kill-ms", defaultValue = "1500", description = "the kill comes 0 to this many ms after the child's first acknowledgement (default ${DEFAULT-VALUE})")
    int maxKillMs;

    @Option(names = "--volume-size", defaultValue = "1GiB", converter = Sizes.Converter.class, description = "size of the volume (default ${DEFAULT-VALUE})")
    long volumeSize;

    @picocli.CommandLine.Mixin
    JsonOutput json;

    @Option(names = {"-q", "--quiet"}, description = "no line per kill on standard error")
    boolean quiet;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    /** What one key (a file or an owner) is known to hold: logical -> physical, or owned physical blocks. */
    private static final class Model {
        final TreeMap<Long, Long> blocks = new TreeMap<>();
        String[] inFlight;
    }

    @Override
    public Integer call() throws Exception {
        BadOption.atLeast("--kills", kills, 1);
        BadOption.atLeast("--writers", writers, 1);
        BadOption.atLeast("--max-kill-ms", maxKillMs, 1);
        if (volumeSize < 32768L * 4096) throw new BadOption("--volume-size", volumeSize, "must hold at least one group (128 MiB)");
        Config config = BlockyardConfig.load();
        Path image = Files.createTempFile("blockyard-crash-", ".img");
        Volume.mkfs(image, Layout.make(4096, volumeSize / 4096 / 32768 * 32768, 32768, 1024,
                config.getInt("blockyard.volume.journal-blocks"), 0, 0));
        Random rnd = new Random(seed);
        Map<String, Model> models = new HashMap<>();
        List<Double> recoveryMs = new ArrayList<>();
        long acks = 0, lost = 0, undone = 0, ownedTwice = 0, fsckProblems = 0, replayed = 0;
        List<String> findings = new ArrayList<>();
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        try {
            for (int round = 0; round < kills; round++) {
                String prefix = "k" + round + "-";
                Process child = new ProcessBuilder(java, "-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp",
                        System.getProperty("java.class.path"), CrashLoad.class.getName(), image.toString(), prefix,
                        Integer.toString(writers), Long.toString(seed * 1000 + round))
                        .redirectError(ProcessBuilder.Redirect.DISCARD).start();
                long killAt = -1;
                try (BufferedReader in = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
                    String line;
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
                    while ((line = in.readLine()) != null && System.nanoTime() < deadline) {
                        if (take(models, line)) {
                            acks++;
                            if (killAt < 0) killAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(rnd.nextInt(maxKillMs));
                        }
                        if (killAt > 0 && System.nanoTime() >= killAt) break;
                    }
                    // SIGKILL through the handle: Process.destroyForcibly would also close our end of the pipe.
                    child.toHandle().destroyForcibly();
                    // What the child said before it died is still in the pipe: those calls happened too. Only whole
                    // lines count (the kill may cut the last one).
                    StringBuilder rest = new StringBuilder();
                    char[] buf = new char[8192];
                    for (int n; (n = in.read(buf)) > 0; ) rest.append(buf, 0, n);
                    String[] lines = rest.toString().split("\n", -1);
                    for (int i = 0; i < lines.length - 1; i++) if (take(models, lines[i])) acks++;
                    child.waitFor(60, TimeUnit.SECONDS);
                }
                try (Volume v = Volume.open(image, config)) {
                    recoveryMs.add(v.recovery().nanos() / 1e6);
                    replayed += v.recovery().transactionsReplayed();
                }
                Fsck.Result r = Fsck.check(image, false);
                fsckProblems += r.problems().size();
                ownedTwice += r.count(Fsck.Kind.OWNED_TWICE);
                if (!r.clean()) findings.add("round " + round + ": " + r.report().trim());
                Metadata meta = Volume.inspect(image);
                for (Map.Entry<String, Model> e : models.entrySet()) {
                    long[] d = compare(e.getKey(), e.getValue(), meta);
                    lost += d[0];
                    undone += d[1];
                    if (d[0] + d[1] > 0) findings.add("round " + round + ": " + e.getKey() + " lost " + d[0] + ", undone " + d[1]);
                    e.getValue().inFlight = null; // the process that had it in flight is gone; what recovery kept is the truth
                    resync(e.getKey(), e.getValue(), meta);
                }
                if (!quiet) System.err.printf("kill %d/%d: %d acknowledged so far, recovery %.1f ms, fsck %s%n", round + 1, kills, acks,
                        recoveryMs.get(recoveryMs.size() - 1), r.clean() ? "clean" : r.problems().size() + " problems");
            }
        } finally {
            Files.deleteIfExists(image);
        }
        List<Double> sorted = new ArrayList<>(recoveryMs);
        sorted.sort(null);
        Map<String, Object> row = Report.row();
        row.put("workload", "crash");
        row.put("kills", kills);
        row.put("acknowledged", acks);
        row.put("lost_acknowledged_allocations", lost);
        row.put("undone_acknowledged_frees", undone);
        row.put("blocks_owned_twice", ownedTwice);
        row.put("fsck_problems", fsckProblems);
        row.put("replayed_transactions", replayed);
        Map<String, Object> recovery = new java.util.LinkedHashMap<>();
        recovery.put("p50", sorted.get(sorted.size() / 2));
        recovery.put("max", sorted.get(sorted.size() - 1));
        row.put("recovery_ms", recovery);
        java.io.PrintStream out = json.tables();
        Report.table(out, List.of(row), List.of("kills", "acknowledged", "lost_acknowledged_allocations",
                "undone_acknowledged_frees", "blocks_owned_twice", "fsck_problems", "recovery_ms.p50", "recovery_ms.max"));
        for (String f : findings) out.println(f);
        json.write(spec, List.of(row), null);
        return lost + undone + ownedTwice + fsckProblems == 0 ? 0 : 1;
    }

    /** Applies one line of the child's; answers whether it was an acknowledgement. */
    private static boolean take(Map<String, Model> models, String line) {
        String[] f = line.split(" ");
        if (!(f[0].equals("GO") || f[0].equals("ACK")) || f.length < 3) return false;
        Model m = models.computeIfAbsent(f[1], k -> new Model());
        if (f[0].equals("GO")) {
            m.inFlight = f;
            return false;
        }
        m.inFlight = null;
        apply(m, f);
        return true;
    }

    private static void apply(Model m, String[] f) {
        switch (f[2]) {
            case "MAP", "MAPS" -> { // one run, or a batch's runs: logical physical blocks, again and again
                for (int i = 3; i + 2 < f.length; i += 3) {
                    long l = Long.parseLong(f[i]), p = Long.parseLong(f[i + 1]), n = Long.parseLong(f[i + 2]);
                    for (long k = 0; k < n; k++) m.blocks.put(l + k, p + k);
                }
            }
            case "TRUNC" -> m.blocks.tailMap(Long.parseLong(f[3]), true).clear();
            case "DEL" -> m.blocks.clear();
            case "EXT" -> {
                for (int i = 3; i + 1 < f.length; i += 2) {
                    long s = Long.parseLong(f[i]), n = Long.parseLong(f[i + 1]);
                    for (long b = s; b < s + n; b++) m.blocks.put(b, b);
                }
            }
            case "REL" -> {
                long s = Long.parseLong(f[3]), n = Long.parseLong(f[4]);
                for (long b = s; b < s + n; b++) m.blocks.remove(b);
            }
            default -> throw new IllegalStateException("unknown line " + String.join(" ", f));
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
     * blocks present that an acknowledged free removed (unless the call in flight could have added them).
     */
    private static long[] compare(String key, Model m, Metadata meta) {
        TreeMap<Long, Long> got = stored(key, meta);
        String[] fl = m.inFlight;
        long lost = 0, undone = 0;
        for (Map.Entry<Long, Long> b : m.blocks.entrySet()) {
            boolean mayBeGone = fl != null && (fl[2].equals("DEL")
                    || fl[2].equals("TRUNC") && b.getKey() >= Long.parseLong(fl[3])
                    || fl[2].equals("REL") && b.getKey() >= Long.parseLong(fl[3]) && b.getKey() < Long.parseLong(fl[3]) + Long.parseLong(fl[4]));
            if (!mayBeGone && !b.getValue().equals(got.get(b.getKey()))) lost++;
        }
        TreeSet<Long> extra = new TreeSet<>(got.keySet());
        extra.removeAll(m.blocks.keySet());
        for (long b : extra) {
            boolean mayBeNew = fl != null && (fl[2].equals("MAP") && b >= Long.parseLong(fl[3]) || fl[2].equals("EXT"));
            if (!mayBeNew) undone++;
        }
        return new long[] {lost, undone};
    }

    /** After the check, the model follows what recovery kept of the call that was in flight. */
    private static void resync(String key, Model m, Metadata meta) {
        m.blocks.clear();
        m.blocks.putAll(stored(key, meta));
    }
}
