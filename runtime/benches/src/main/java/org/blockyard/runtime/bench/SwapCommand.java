package org.blockyard.runtime.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

import com.typesafe.config.Config;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code blockyard bench swap} without plugin bundles. The host's command extends this one and runs each
 * measurement with a framework and bundle events ({@link #measureOnce}).
 */
@Command(name = "swap", mixinStandardHelpOptions = true,
        description = "Writers through the whole stack while elevators and policies are switched by name; "
                + "counts what was lost or issued twice, verifies every byte, and times each switch.")
public class SwapCommand implements Callable<Integer> {

    @Option(names = "--seconds", defaultValue = "10", description = "how long the writers run (default ${DEFAULT-VALUE})")
    double seconds;

    @Option(names = "--swaps", defaultValue = "200", description = "elevator switches, and as many policy switches (default ${DEFAULT-VALUE})")
    int swaps;

    private static final List<String> DEFAULT_ELEVATORS = List.of("noop", "deadline");

    @Option(names = "--elevators", split = ",", paramLabel = "NAMES", description = "elevators to cycle through (default noop,deadline; with plugin bundles, fifo too)")
    List<String> elevators;

    @Option(names = "--policies", defaultValue = "no-reservation,reservation", split = ",", description = "policies to cycle through (default ${DEFAULT-VALUE})")
    List<String> policies;

    @Option(names = "--writers", defaultValue = "2", description = "files written concurrently (default ${DEFAULT-VALUE})")
    int writers;

    @Option(names = "--file-size", defaultValue = "16MiB", converter = Sizes.Converter.class, description = "bytes per file, a multiple of 64 KiB (default ${DEFAULT-VALUE})")
    long fileSize;

    @Mixin
    RunOptions run;

    @Override
    public Integer call() throws Exception {
        Config config = run.config();
        if (!(seconds > 0)) throw new BadOption("--seconds", seconds, "must be above 0");
        BadOption.atLeast("--swaps", swaps, 1);
        BadOption.atLeast("--writers", writers, 1);
        if (fileSize < 1 || fileSize % (64 << 10) != 0) throw new BadOption("--file-size", fileSize, "must be a positive multiple of 64 KiB");
        BadOption.allOf("--policies", policies, BenchPolicies.names(config));
        List<Map<String, Object>> rows = run.measure(List.of("swap"), x -> {
            try {
                return measureOnce(config);
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        Report.table(run.out(), rows, List.of("swaps", "bundle_events", "requests_submitted", "requests_completed",
                "requests_lost", "requests_issued_twice", "bytes_verified", "verify_errors", "switch_pause_us.raw.p50",
                "switch_pause_us.raw.p99", "switch_pause_us.raw.max", "elevator_pause_us.raw.p99",
                "policy_pause_us.raw.p99", "switch_call_us.raw.p50", "switch_call_us.raw.p99",
                "switch_call_us.corrected.p99"));
        run.writeJson(rows);
        boolean clean = rows.stream().allMatch(r -> ((Number) r.get("requests_lost")).longValue() == 0
                && ((Number) r.get("requests_issued_twice")).longValue() == 0
                && ((Number) r.get("verify_errors")).longValue() == 0);
        return clean ? 0 : 1;
    }

    /** One run (the warm-up or a measured one). */
    protected Map<String, Object> measureOnce(Config config) throws Exception {
        return Swap.run(spec(List.of(), List.of()), config, progressStream());
    }

    /** Where the switch counts go while it runs: standard error, or nowhere with {@code --quiet}. */
    protected final java.io.PrintStream progressStream() {
        return run.quiet ? null : System.err;
    }

    /**
     * The options as a spec with {@code churn} between switches; {@code pluginElevators} join the default
     * elevators, not a list given with {@code --elevators}.
     */
    protected final Swap.Spec spec(List<String> pluginElevators, List<Runnable> churn) {
        if (elevators != null) {
            // Names the built-in elevators, the plugins on the class path or the bundles' elevators resolve.
            org.blockyard.runtime.io.ElevatorRegistry known = org.blockyard.runtime.io.bench.BenchElevators.registerWith(
                    org.blockyard.runtime.io.ElevatorRegistry.builtIn("deadline"));
            List<String> allowed = new ArrayList<>(known.ids());
            for (String e : pluginElevators) if (!allowed.contains(e)) allowed.add(e);
            if (elevators.isEmpty()) throw new BadOption("--elevators", "", "allowed are " + String.join(", ", allowed));
            for (String e : elevators)
                if (known.resolve(e).isEmpty() && !pluginElevators.contains(e.trim()))
                    throw new BadOption("--elevators", e, "allowed are " + String.join(", ", allowed));
        }
        List<String> cycle = elevators;
        if (cycle == null) {
            cycle = new ArrayList<>(DEFAULT_ELEVATORS);
            for (String e : pluginElevators) if (!cycle.contains(e)) cycle.add(e);
        }
        return new Swap.Spec(seconds, swaps, cycle, policies, writers, fileSize, churn);
    }
}
