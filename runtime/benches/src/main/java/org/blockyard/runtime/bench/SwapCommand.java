package org.blockyard.runtime.bench;

import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

import com.typesafe.config.Config;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code blockyard bench swap}. */
@Command(name = "swap", mixinStandardHelpOptions = true,
        description = "Writers through the whole stack while elevators and policies are switched by name; "
                + "counts what was lost or issued twice, verifies every byte, and times each switch.")
public final class SwapCommand implements Callable<Integer> {

    @Option(names = "--seconds", defaultValue = "10", description = "how long the writers run (default ${DEFAULT-VALUE})")
    double seconds;

    @Option(names = "--swaps", defaultValue = "200", description = "elevator switches, and as many policy switches (default ${DEFAULT-VALUE})")
    int swaps;

    @Option(names = "--elevators", defaultValue = "noop,deadline", split = ",", description = "elevators to cycle through (default ${DEFAULT-VALUE})")
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
        Swap.Spec spec = new Swap.Spec(seconds, swaps, elevators, policies, writers, Sizes.parse(fileSize), List.of());
        List<Map<String, Object>> rows = run.measure(List.of("swap"), x -> {
            try {
                return Swap.run(spec, config, System.err);
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        Report.table(System.out, rows, List.of("swaps", "bundle_events", "requests_submitted", "requests_completed",
                "requests_lost", "requests_issued_twice", "bytes_verified", "verify_errors", "switch_pause_us.p50",
                "switch_pause_us.p99", "switch_pause_us.max", "elevator_pause_us.p99", "policy_pause_us.p99",
                "switch_call_us.p50", "switch_call_us.p99"));
        run.writeJson(rows);
        boolean clean = rows.stream().allMatch(r -> ((Number) r.get("requests_lost")).longValue() == 0
                && ((Number) r.get("requests_issued_twice")).longValue() == 0
                && ((Number) r.get("verify_errors")).longValue() == 0);
        return clean ? 0 : 1;
    }
}
