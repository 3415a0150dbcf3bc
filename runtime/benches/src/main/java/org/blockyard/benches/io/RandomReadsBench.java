package org.blockyard.benches.io;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Callable;

import org.blockyard.api.io.IoRequest;
import org.blockyard.benches.BadOption;
import org.blockyard.benches.Latency;
import org.blockyard.benches.PlotOption;
import org.blockyard.benches.Plots;
import org.blockyard.benches.Report;
import org.blockyard.runtime.io.QueueSetup;
import org.blockyard.runtime.io.SimulatedDisk;
import org.blockyard.runtime.io.Simulation;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code bench randomreads}: a database-like load, {@code --readers} independent owners each reading one
 * random 4 KiB block at a time over {@code --span} of the simulated disk, thinking {@code --think-us}
 * between a completion and the next read, for {@code --seconds} of virtual time. Morton found
 * anticipatory about 10% slower than deadline here: waiting for one reader's next request, which lands
 * anywhere, gives away the choice of the nearest among the others' requests.
 */
@Command(name = "randomreads", mixinStandardHelpOptions = true,
        description = "Independent random readers (a database-like load), per elevator; reports anticipatory over deadline.")
public final class RandomReadsBench implements Callable<Integer> {
    @Mixin IoBenchOptions o;

    @Option(names = "--seconds", defaultValue = "10", description = "Virtual seconds per run (default: ${DEFAULT-VALUE}).")
    int seconds;

    @Option(names = "--readers", defaultValue = "16", description = "Independent readers (default: ${DEFAULT-VALUE}).")
    int readers;

    @Option(names = "--think-us", defaultValue = "500",
            description = "Microseconds a reader thinks between a completion and its next read (default: ${DEFAULT-VALUE}).")
    long thinkMicros;

    @Option(names = "--span-percent", defaultValue = "50",
            description = "Part of the disk the reads fall in, from its start (default: ${DEFAULT-VALUE}).")
    int spanPercent;

    @Option(names = "--all", description = "Run every registered elevator, not only deadline and anticipatory.")
    boolean all;

    @Mixin PlotOption plot;

    @Override
    public Integer call() throws Exception {
        BadOption.atLeast("--seconds", seconds, 1);
        BadOption.atLeast("--readers", readers, 1);
        BadOption.atLeast("--think-us", thinkMicros, 0);
        if (spanPercent < 1 || spanPercent > 100) throw new BadOption("--span-percent", spanPercent, "must be from 1 to 100");
        java.nio.file.Path plots = plot.directory();
        List<Map<String, Object>> results = new ArrayList<>();
        Map<String, Object> out = new LinkedHashMap<>();
        try (IoBench bench = new IoBench(o)) {
            if (!bench.deviceKind.equals("sim"))
                throw new BadOption("--device", bench.deviceKind, "bench randomreads runs on the simulated disk: only sim");
            List<String> ids = all ? bench.setup.registry().ids()
                    : o.elevator != null ? List.of(o.elevator) : List.of("deadline", "anticipatory");
            boolean first = true;
            for (String id : ids) {
                QueueSetup s = bench.setup.withElevator(id).withEvents(first ? bench.setup.events() : null);
                results.add(run(bench, s, id));
                first = false;
            }
            out.put("device", bench.deviceKind);
            Double dl = readsPerSecond(results, "deadline"), as = readsPerSecond(results, "anticipatory");
            if (dl != null && as != null && dl > 0) out.put("anticipatory_over_deadline", Math.round(as / dl * 1000) / 1000.0);
            bench.putTrace(out, o);
        }
        java.io.PrintStream table = IoBench.out(o);
        Report.table(table, results, List.of("elevator", "reads_per_s", "read_mib_s", "latency_ms_mean", "latency_ms_p99",
                "seeks", "device_time_ms"));
        if (out.containsKey("anticipatory_over_deadline"))
            table.println("anticipatory / deadline: " + out.get("anticipatory_over_deadline"));
        if (plots != null)
            table.println("plot: " + Plots.latencyCdf(plots, "randomreads-latency-cdf", "randomreads: read latency (clat), "
                    + readers + " readers", "simulated ms", results, r -> (String) r.get("elevator"), "latency_cdf_ms"));
        if (o.trace != null && results.size() > 1)
            System.err.println("note: --trace " + o.trace + " holds the first elevator's run only");
        IoBench.writeJson(o, results, out);
        return 0;
    }

    private static Double readsPerSecond(List<Map<String, Object>> results, String elevator) {
        for (Map<String, Object> r : results)
            if (elevator.equals(r.get("elevator"))) return (Double) r.get("reads_per_s");
        return null;
    }

    private Map<String, Object> run(IoBench bench, QueueSetup setup, String requested) {
        SimulatedDisk disk = new SimulatedDisk(bench.settings.disk());
        Simulation sim = IoBench.simulation(setup, disk);
        long end = seconds * 1_000_000_000L;
        long blocks = disk.capacitySectors() / 8 * spanPercent / 100;
        long think = thinkMicros * 1000;
        long[] reads = {0}, ids = {0};
        List<Long> latencies = new ArrayList<>();
        org.HdrHistogram.Histogram clat = new org.HdrHistogram.Histogram(3);
        for (int r = 0; r < readers; r++) {
            long owner = r + 1;
            Random rnd = new Random(o.seed * 1_000_003L + owner);
            Runnable[] next = new Runnable[1];
            next[0] = () -> {
                if (sim.nowNanos() >= end) return;
                long sector = Math.floorMod(rnd.nextLong(), blocks) * 8;
                sim.submit(IoRequest.read(ids[0]++, sector, 8, owner), (c, e) -> {
                    if (c.completedNanos() <= end) {
                        reads[0]++;
                        latencies.add(c.completedNanos() - c.queuedNanos());
                        clat.recordValue(Math.max(0, c.completedNanos() - c.queuedNanos()));
                    }
                    sim.at(sim.nowNanos() + think, next[0]);
                });
            };
            sim.at(owner * 1000, next[0]);   // staggered by a microsecond: a fixed order of first arrivals
        }
        sim.runUntil(end);
        long[] lat = latencies.stream().mapToLong(Long::longValue).toArray();
        Arrays.sort(lat);
        Map<String, Object> m = bench.header("randomreads", requested, sim.stats().elevator());
        m.put("reads_per_s", Math.round(reads[0] / (double) seconds * 100) / 100.0);
        m.put("read_mib_s", IoBench.mibPerSecond(reads[0] * 4096, end));
        m.put("latency_ms_mean", lat.length == 0 ? 0 : Math.round(Arrays.stream(lat).average().orElse(0) / 1e4) / 100.0);
        m.put("latency_ms_p99", lat.length == 0 ? 0 : Math.round(lat[(int) Math.min(lat.length - 1, lat.length * 0.99)] / 1e4) / 100.0);
        m.put("latency_cdf_ms", Latency.cdf(clat, 1e6));
        m.put("seeks", disk.seeks());
        m.put("device_time_ms", sim.deviceBusyNanos() / 1_000_000);
        IoBench.putQueueStats(m, sim.stats());
        m.put("elevator_stats", sim.stats().elevatorStats());
        return m;
    }
}
