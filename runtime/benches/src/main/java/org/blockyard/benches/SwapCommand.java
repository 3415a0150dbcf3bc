package org.blockyard.benches;

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
 * measurement with a framework and bundle events ({@link #measureOnce}). Every installed elevator and policy
 * can be cycled through ({@link InstalledPlugins}: the built-in ones, the shipped plugins, {@code --deploy}'s).
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

    @Option(names = "--elevators", split = ",", paramLabel = "NAMES", description = "elevators to cycle through, any installed (default noop,deadline; with plugin bundles, fifo too)")
    List<String> elevators;

    @Option(names = "--policies", defaultValue = "no-reservation,reservation", split = ",", description = "policies to cycle through, any installed (default ${DEFAULT-VALUE})")
    List<String> policies;

    /**
     * The policy a host's bundle events install and uninstall (with the elevators its {@link #spec} call names):
     * left to them, not registered directly.
     */
    protected static final List<String> BUNDLE_POLICIES = List.of("no-reservation");

    @Option(names = "--writers", defaultValue = "2", description = "files written concurrently (default ${DEFAULT-VALUE})")
    int writers;

    @Option(names = "--file-size", defaultValue = "16MiB", converter = Sizes.Converter.class, description = "bytes per file, a multiple of 64 KiB (default ${DEFAULT-VALUE})")
    long fileSize;

    @Mixin
    DeployOption deploy;

    @Mixin
    RunOptions run;

    /** The configuration of this run, with the {@code --deploy} folders. */
    private Config config;

    @Override
    public Integer call() throws Exception {
        Config config = deploy.applyTo(run.config());
        this.config = config;
        if (!(seconds > 0)) throw new BadOption("--seconds", seconds, "must be above 0");
        BadOption.atLeast("--swaps", swaps, 1);
        BadOption.atLeast("--writers", writers, 1);
        if (fileSize < 1 || fileSize % (64 << 10) != 0) throw new BadOption("--file-size", fileSize, "must be a positive multiple of 64 KiB");
        BenchPolicies.check("--policies", policies, config);
        if (elevators != null) {
            org.blockyard.runtime.io.ElevatorRegistry installed = installedElevators(config);
            String hint = "installed are " + String.join(", ", installed.ids()) + " (a plugin of your own: --deploy DIR)";
            if (elevators.isEmpty()) throw new BadOption("--elevators", "", hint);
            for (String e : elevators) if (installed.resolve(e).isEmpty()) throw new BadOption("--elevators", e, hint);
        }
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

    /** The built-in elevators with every installed plugin registered: what {@code --elevators} may name. */
    private static org.blockyard.runtime.io.ElevatorRegistry installedElevators(Config config) {
        return org.blockyard.benches.io.BenchElevators.registerWith(
                org.blockyard.runtime.io.ElevatorRegistry.builtIn("deadline"), config);
    }

    /**
     * The options as a spec with {@code churn} between switches; {@code pluginElevators} join the default
     * elevators, not a list given with {@code --elevators}. With churn (a host's bundle events), the plugins
     * named that the churn does not bring ({@code pluginElevators}, {@link #BUNDLE_POLICIES}) are registered
     * with the engine directly when it starts ({@link Swap.Spec#direct}); without, the bare engine has them all.
     */
    protected final Swap.Spec spec(List<String> pluginElevators, List<Runnable> churn) {
        Config c = config != null ? config : run.config();
        List<String> cycle = elevators;
        if (cycle == null) {
            cycle = new ArrayList<>(DEFAULT_ELEVATORS);
            for (String e : pluginElevators) if (!cycle.contains(e)) cycle.add(e);
        }
        List<String> direct = new ArrayList<>();
        if (!churn.isEmpty()) {
            org.blockyard.runtime.io.ElevatorRegistry installed = installedElevators(c);
            for (String e : cycle)
                installed.resolve(e).filter(id -> !installed.isBuiltIn(id) && !pluginElevators.contains(id)
                        && !direct.contains(id)).ifPresent(direct::add);
            org.blockyard.runtime.alloc.PolicyRegistry ps = BenchPolicies.registry(c);
            for (String p : policies)
                ps.resolve(p).filter(id -> !ps.isBuiltIn(id) && !BUNDLE_POLICIES.contains(id) && !direct.contains(id))
                        .ifPresent(direct::add);
        }
        return new Swap.Spec(seconds, swaps, cycle, policies, writers, fileSize, churn, direct);
    }
}
