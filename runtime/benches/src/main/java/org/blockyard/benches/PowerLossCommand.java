package org.blockyard.benches;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;

import org.blockyard.runtime.config.BlockyardConfig;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code bench powerloss}: crash states a power cut allows, built from the recorded write stream ({@link PowerLoss}). */
@Command(name = "powerloss", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Run mixed load on a fresh volume that records every write and flush; then build N crash states "
                + "a power cut allows (every write before a flush, any subset of the writes after it in any order, "
                + "sometimes the last torn), recover each, and check it against what was acknowledged before the cut "
                + "and with fsck; every fourth state is also repaired with fsck --repair, whose own writes are cut "
                + "the same way. Exit 1 when a state does not hold."})
public final class PowerLossCommand implements Callable<Integer> {
    @Option(names = "--seed", paramLabel = "N", defaultValue = "1",
            description = "seed of the load and of the states chosen (default ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--states", paramLabel = "N", defaultValue = "100", description = "crash states to build and check (default ${DEFAULT-VALUE})")
    int states;

    @Option(names = "--ops", paramLabel = "N", defaultValue = "600", description = "calls of the load (default ${DEFAULT-VALUE})")
    int ops;

    @Option(names = "--torn", negatable = true, defaultValue = "true", fallbackValue = "true",
            description = "tear the last write of some states at a 512-byte boundary (--no-torn: never; default: on)")
    boolean torn;

    @Option(names = {"-q", "--quiet"}, description = "no progress on standard error")
    boolean quiet;

    @Override
    public Integer call() throws Exception {
        BadOption.atLeast("--states", states, 1);
        BadOption.atLeast("--ops", ops, 10);
        Path dir = Files.createTempDirectory("blockyard-powerloss");
        try {
            PowerLoss.Result r = new PowerLoss(new PowerLoss.Spec(seed, states, ops, torn), BlockyardConfig.load(), dir)
                    .run(quiet ? null : System.err);
            System.out.printf("seed %d: %d calls, %d writes and flushes recorded (%d flushes); %d states tried, %d "
                    + "recovered and held, %d of them also through fsck --repair cut by power %d times; %d failed%n",
                    seed, r.ops(), r.events(), r.flushes(), r.states(), r.recovered(), r.repairs(),
                    PowerLoss.REPAIR_CUTS + 1, r.failures().size());
            for (PowerLoss.Failure f : r.failures()) System.out.println("  seed " + seed + ", " + f);
            return r.failures().isEmpty() ? 0 : 1;
        } finally {
            try (var s = Files.walk(dir)) {
                s.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }
}
