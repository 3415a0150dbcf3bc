package org.blockyard.benches;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;

import org.blockyard.runtime.config.BlockyardConfig;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code bench powerloss}: crash states a power cut allows, built from the recorded write stream ({@link PowerLoss}). */
@Command(name = "powerloss", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Run mixed load on a fresh volume that records every write and flush; then, at C cut points, "
                + "build up to K distinct crash states a power cut there allows (every write before the last flush, "
                + "subsets of the writes after it in any order, some with the last torn), recover each in memory, and "
                + "check it against what was acknowledged before the cut and with fsck; each cut's first state is also "
                + "opened as a volume from a file, and every fourth of those repaired with fsck --repair, whose own writes "
                + "are cut the same way. A seed replays the same states and findings (the report's digest). "
                + "Exit 1 when a state does not hold."})
public final class PowerLossCommand implements Callable<Integer> {
    @Option(names = "--seed", paramLabel = "N", defaultValue = "1",
            description = "seed of the load and of the states chosen (default ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--cuts", paramLabel = "C", defaultValue = "100", description = "cut points (default ${DEFAULT-VALUE})")
    int cuts;

    @Option(names = "--states-per-cut", paramLabel = "K",
            description = "distinct crash states per cut point (default 100, or --states spread over the cuts)")
    Integer perCut;

    @Option(names = "--states", paramLabel = "N", description = "crash states in all, at most (default C x K)")
    Integer states;

    @Option(names = "--ops", paramLabel = "N", defaultValue = "600", description = "calls of the load (default ${DEFAULT-VALUE})")
    int ops;

    @Option(names = "--torn", negatable = true, defaultValue = "true", fallbackValue = "true",
            description = "tear the last write of some states at a 512-byte boundary (--no-torn: never; default: on)")
    boolean torn;

    @Option(names = "--full-every", paramLabel = "N", defaultValue = "1",
            description = "every N cut points, also open the first state from a file as a volume (0: never; default ${DEFAULT-VALUE})")
    int fullEvery;

    @Option(names = "--replay-check", description = "run it all twice and fail unless both reports are the same")
    boolean replayCheck;

    @Option(names = {"-q", "--quiet"}, description = "no progress on standard error")
    boolean quiet;

    @Override
    public Integer call() throws Exception {
        BadOption.atLeast("--cuts", cuts, 1);
        if (perCut != null) BadOption.atLeast("--states-per-cut", perCut, 1);
        if (states != null) BadOption.atLeast("--states", states, 1);
        BadOption.atLeast("--ops", ops, 10);
        BadOption.atLeast("--full-every", fullEvery, 0);
        int k = perCut != null ? perCut : states != null ? Math.max(1, (states + cuts - 1) / cuts) : 100;
        int most = states != null ? states : (int) Math.min(Integer.MAX_VALUE, (long) cuts * k);
        PowerLoss.Spec spec = new PowerLoss.Spec(seed, cuts, k, most, ops, torn, fullEvery);
        PowerLoss.Result r = once(spec);
        if (replayCheck) {
            PowerLoss.Result again = once(spec);
            boolean same = again.reportDigest() == r.reportDigest() && again.streamDigest() == r.streamDigest();
            System.out.printf("replay: stream %08x, report %08x; again: stream %08x, report %08x: %s%n",
                    r.streamDigest(), r.reportDigest(), again.streamDigest(), again.reportDigest(),
                    same ? "the same" : "DIFFERENT");
            if (!same) return 1;
        }
        return r.failures().isEmpty() ? 0 : 1;
    }

    private PowerLoss.Result once(PowerLoss.Spec spec) throws Exception {
        Path dir = Files.createTempDirectory("blockyard-powerloss");
        try {
            PowerLoss.Result r = new PowerLoss(spec, BlockyardConfig.load(), dir).run(quiet ? null : System.err);
            double memS = r.memoryNanos() / 1e9, fileS = r.fileNanos() / 1e9;
            System.out.printf("seed %d: %d calls, %d writes and flushes recorded (%d flushes; stream %08x); %d cut "
                    + "points, %d states tried, %d recovered and held; %d also opened from a file, %d of them also "
                    + "through fsck --repair cut by power %d times; %d failed; report %08x%n",
                    seed, r.ops(), r.events(), r.flushes(), r.streamDigest(), r.cuts(), r.states(), r.recovered(),
                    r.full(), r.repairs(), PowerLoss.REPAIR_CUTS + 1, r.failures().size(), r.reportDigest());
            System.out.printf("  time: load %.1f s; states in memory %.1f s (%.0f states/s); from files %.1f s "
                    + "(%.2f states/s, repairs included)%n", r.loadNanos() / 1e9, memS, r.states() / Math.max(memS, 1e-9),
                    fileS, r.full() / Math.max(fileS, 1e-9));
            for (PowerLoss.Failure f : r.failures()) System.out.println("  seed " + seed + ", " + f);
            return r;
        } finally {
            try (var s = Files.walk(dir)) {
                s.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }
}
