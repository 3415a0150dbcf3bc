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

    @Option(names = "--elevators", split = ",", description = "elevators to cycle through (default noop,deadline; with plugin bundles, fifo too)")
    List<String> elevators;

    @Option(names = "--policies", defaultValue = "no-reservation,reservation", split = ",", description = "policies to cycle through (default ${DEFAULT-VALUE})")
    List<String> policies;

    @Option(names = "--writers", defaultValue = "2", description = "files written concurrently (default ${DEFAULT-VALUE})")
    int writers;

    @Option(names = "--file-size", defaultValue = "16MiB", description = "bytes per file, a multiple of 64 KiB (default ${DEFAULT-VALUE})")
    String fileSize;

    @Mixin
    RunOptions run;

    @Override
    public Integer call() throws Exception {
        Config config = run.config();
        List<Map<String, Object>> rows = run.measure(List.of("swap"), x -> {
            try {
                return measureOnce(config);
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        Report.table(System.out, rows, List.of("swaps", "bundle_events", "requests_submitted", "requests_completed",
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
        return Swap.run(spec(List.of(), List.of()), config, System.err);
    }

    /**
     * The options as a spec with {@code churn} between switches; {@code pluginElevators} join the default
     * elevators, not a list given with {@code --elevators}.
     */
    protected final Swap.Spec spec(List<String> pluginElevators, List<Runnable> churn) {
        List<String> cycle = elevators;
        if (cycle == null) {
            cycle = new ArrayList<>(DEFAULT_ELEVATORS);
            for (String e : pluginElevators) if (!cycle.contains(e)) cycle.add(e);
        }
        return new Swap.Spec(seconds, swaps, cycle, policies, writers, Sizes.parse(fileSize), churn);
    }
}
