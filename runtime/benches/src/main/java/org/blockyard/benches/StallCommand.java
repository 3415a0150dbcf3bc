package org.blockyard.benches;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

import com.typesafe.config.Config;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code blockyard bench stall}. */
@Command(name = "stall", mixinStandardHelpOptions = true,
        description = "Clients append in their own groups while a victim makes long window searches in another;"
                + " actors, the global lock and the group locks in one run, latencies raw and corrected for coordinated omission.")
public final class StallCommand implements Callable<Integer> {

    @Option(names = "--clients", defaultValue = "2",
            description = "clients, each in a group of its own (default ${DEFAULT-VALUE}: one per core here; more clients than"
                    + " cores make the lock side's threads wait for the CPU, not for the lock)")
    int clients;

    @Option(names = "--calls", defaultValue = "1000000",
            description = "getBlocks calls per client (default ${DEFAULT-VALUE}: about a second of the actors' clients, long enough"
                    + " for the JIT to settle; at 100,000 its compilations still take a core for milliseconds within the run)")
    long calls;

    @Option(names = "--victim-every", defaultValue = "100",
            description = "one long victim search per this many client calls (all clients together); 0 = the victim"
                    + " searches all the time (default ${DEFAULT-VALUE})")
    int victimEvery;

    @Option(names = "--victim-per-second", defaultValue = "0",
            description = "when above 0, one victim search is due this many times a second instead, whatever the"
                    + " clients do: the same victim work for both allocators (default ${DEFAULT-VALUE}: unused)")
    double victimPerSecond;

    @Option(names = "--search-slides", defaultValue = "2000",
            description = "how many other files' windows each victim search slides past, as in ProvisionalWindowTest"
                    + " (default ${DEFAULT-VALUE})")
    int searchSlides;

    @Option(names = "--blocks-per-group", defaultValue = "65536",
            description = "blocks per group; the victim's stretch takes up to 20 per slide (default ${DEFAULT-VALUE})")
    int blocksPerGroup;

    @Option(names = "--chunk-blocks", defaultValue = "1", description = "blocks per client call (default ${DEFAULT-VALUE})")
    int chunkBlocks;

    @Option(names = "--file-blocks", defaultValue = "4096",
            description = "a client truncates its file and starts again when it reaches this (default ${DEFAULT-VALUE})")
    int fileBlocks;

    @Option(names = "--allocators", defaultValue = "actors,global-lock,group-locks", split = ",",
            description = "actors | global-lock | group-locks (a lock per group and per file; the clients do not wait for the victim), comma-separated (default ${DEFAULT-VALUE})")
    List<String> allocators;

    @Option(names = "--seed", defaultValue = "1", description = "seed for the victim group's stretch (default ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--expected-interval-us", defaultValue = "10",
            description = "also correct every client of both allocators as one meant to call this often, in"
                    + " microseconds: both compared at one offered rate (default ${DEFAULT-VALUE}: about what the"
                    + " global lock sustains per client here with the default victim); 0 = not reported")
    double expectedIntervalUs;

    @Mixin
    RunOptions run;

    @Override
    public Integer call() throws Exception {
        Config config = run.config();
        BadOption.allOf("--allocators", allocators, List.of(Stall.ACTORS, Stall.GLOBAL_LOCK, Stall.GROUP_LOCKS));
        BadOption.atLeast("--clients", clients, 1);
        BadOption.atLeast("--calls", calls, 1);
        BadOption.atLeast("--victim-every", victimEvery, 0);
        if (!(victimPerSecond >= 0)) throw new BadOption("--victim-per-second", victimPerSecond, "must be 0 (unused) or more");
        BadOption.atLeast("--search-slides", searchSlides, 1);
        BadOption.atLeast("--chunk-blocks", chunkBlocks, 1);
        BadOption.atLeast("--file-blocks", fileBlocks, chunkBlocks);
        if (!(expectedIntervalUs >= 0) || Double.isInfinite(expectedIntervalUs))
            throw new BadOption("--expected-interval-us", expectedIntervalUs, "must be 0 (not reported) or more microseconds");
        long commonNanos = expectedIntervalUs == 0 ? 0 : Math.max(1, Math.round(expectedIntervalUs * 1000));
        Stall.Spec spec = new Stall.Spec(clients, calls, victimEvery, victimPerSecond, searchSlides, blocksPerGroup, chunkBlocks,
                fileBlocks, seed, commonNanos);
        List<Map<String, Object>> rows = run.measure(allocators, a -> Stall.run(spec, a, config));
        Report.table(run.out(), rows, Report.columns("allocator", "clients", "victim_every", "victim_per_s",
                "victim_searches", "victim_searches_per_s", "client_calls_per_search", "client_calls_per_s", "client_latency_us.raw.p50",
                "client_latency_us.raw.p90", "client_latency_us.raw.p99", "client_latency_us.raw.p999",
                "client_latency_us.corrected.p50", "client_latency_us.corrected.p90", "client_latency_us.corrected.p99",
                "client_latency_us.corrected.p999", "client_latency_common_us.p99", "client_latency_common_us.p999",
                "client_latency_us.raw.max", "victim_search_us.raw.p50",
                "elapsed_s"));
        Map<String, Object> ratios = ratios(rows);
        if (!ratios.isEmpty()) {
            run.out().println();
            ratios.forEach((k, v) -> run.out().println(k + ": " + Report.format(v)));
        }
        run.writeJson(rows, ratios);
        return 0;
    }

    /**
     * Actors against each lock peer that ran beside them: throughput up is better, latency ratios are the peer's
     * over the actors'. The global lock's keys say {@code lock}, the group locks' {@code group_locks}.
     */
    static Map<String, Object> ratios(List<Map<String, Object>> rows) {
        Map<String, Object> actors = null;
        for (Map<String, Object> r : rows) if (Stall.ACTORS.equals(r.get("allocator"))) actors = r;
        Map<String, Object> out = new LinkedHashMap<>();
        if (actors == null) return out;
        for (Map<String, Object> lock : rows) {
            String tag = Stall.GLOBAL_LOCK.equals(lock.get("allocator")) ? "lock"
                    : Stall.GROUP_LOCKS.equals(lock.get("allocator")) ? "group_locks" : null;
            if (tag == null) continue;
            out.put("throughput_actors_over_" + tag, ratio(actors.get("client_calls_per_s"), lock.get("client_calls_per_s")));
            for (String kind : List.of("common", "corrected", "raw")) {
                String key = kind.equals("common") ? "client_latency_common_us." : "client_latency_us." + kind + ".";
                for (String p : List.of("p99", "p999")) {
                    Object l = Report.get(lock, key + p);
                    Object a = Report.get(actors, key + p);
                    if (l != null && a != null) out.put(kind + "_" + p + "_" + tag + "_over_actors", ratio(l, a));
                }
            }
        }
        return out;
    }

    private static double ratio(Object num, Object den) {
        double d = ((Number) den).doubleValue();
        return d == 0 ? Double.NaN : Latency.round(((Number) num).doubleValue() / d);
    }
}
