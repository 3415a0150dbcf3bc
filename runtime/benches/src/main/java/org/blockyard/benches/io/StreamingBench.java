package org.blockyard.benches.io;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Callable;

import org.blockyard.api.io.IoRequest;
import org.blockyard.benches.BadOption;
import org.blockyard.benches.Latency;
import org.blockyard.benches.PlotOption;
import org.blockyard.benches.Plots;
import org.blockyard.runtime.io.SimulatedDisk;
import org.blockyard.runtime.io.Simulation;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code bench streaming}: one streaming reader (dependent 128 KiB reads, one at a time, as {@code cat} with
 * read-ahead) and one streaming writer (4 KiB asynchronous writes, up to {@code --writer-window} outstanding,
 * as write-back) far apart on the simulated disk, for {@code --seconds} of virtual time. The classic case for
 * deadline over noop: with a FIFO every read waits behind the queued writes.
 */
@Command(name = "streaming", mixinStandardHelpOptions = true,
        description = "A streaming reader against a streaming writer on the simulated disk, per elevator.")
public final class StreamingBench implements Callable<Integer> {
    @Mixin IoBenchOptions o;

    @Option(names = "--seconds", defaultValue = "10",
            description = "Virtual seconds of load, 1 to " + MAX_SECONDS + " (default: ${DEFAULT-VALUE}).")
    int seconds;

    /** An hour of virtual time: the figures are kept second by second, and both streams end at the disk's end. */
    static final int MAX_SECONDS = 3600;

    @Option(names = "--writer-window", defaultValue = "256",
            description = "Writes the writer keeps outstanding (default: ${DEFAULT-VALUE}).")
    int writerWindow;

    @Option(names = "--all", description = "Also run every other registered elevator and list them all.")
    boolean all;

    @Mixin PlotOption plot;

    private static final int READ_SECTORS = 256, WRITE_SECTORS = 8;

    @Override
    public Integer call() throws Exception {
        BadOption.within("--seconds", seconds, 1, MAX_SECONDS);
        BadOption.atLeast("--writer-window", writerWindow, 1);
        java.nio.file.Path plots = plot.directory();
        List<Map<String, Object>> runs = new ArrayList<>();
        Map<String, Object> first;
        try (IoBench bench = new IoBench(o)) {
            if (!bench.deviceKind.equals("sim"))
                throw new BadOption("--device", bench.deviceKind, "bench streaming measures seeks and device time on the "
                        + "simulated disk: only sim");
            first = run(bench, bench.setup);
            runs.add(first);
            bench.putTrace(first, o);
            if (all) {
                for (String id : bench.setup.registry().ids()) {
                    if (id.equals(first.get("elevator"))) continue;
                    runs.add(run(bench, bench.setup.withElevator(id).withEvents(null)));
                }
            }
        }
        IoBench.print(IoBench.out(o), runs);
        if (plots != null) plot(plots, runs);
        if (o.trace != null && runs.size() > 1)
            System.err.println("note: --trace " + o.trace + " holds the first elevator's run only");
        IoBench.writeJson(o, runs, null);
        return 0;
    }

    private Map<String, Object> run(IoBench bench, org.blockyard.runtime.io.QueueSetup setup) {
        SimulatedDisk disk = new SimulatedDisk(bench.settings.disk());
        Simulation sim = IoBench.simulation(setup, disk);
        long end = seconds * 1_000_000_000L;
        Random rnd = new Random(o.seed);
        long cap = disk.capacitySectors();
        long readerStart = Math.floorMod(rnd.nextLong(), cap / 8) / 8 * 8;
        long writerStart = cap / 2 + Math.floorMod(rnd.nextLong(), cap / 8) / 8 * 8;
        long[] read = {0}, written = {0};
        long[] readBySecond = new long[seconds], writtenBySecond = new long[seconds];
        long[] readPos = {readerStart}, writePos = {writerStart};
        long[] ids = {0};
        // fio's clat on the simulated clock: submission to completion, per direction (what btt's Q2C sums up).
        org.HdrHistogram.Histogram readClat = new org.HdrHistogram.Histogram(3), writeClat = new org.HdrHistogram.Histogram(3);
        Runnable[] reader = new Runnable[1];
        reader[0] = () -> {
            if (sim.nowNanos() >= end || readPos[0] + READ_SECTORS > cap) return;
            IoRequest io = IoRequest.read(ids[0]++, readPos[0], READ_SECTORS, 1);
            readPos[0] += READ_SECTORS;
            sim.submit(io, (c, e) -> {
                if (c.completedNanos() <= end) {
                    read[0] += (long) io.sectors() * IoRequest.SECTOR_BYTES;
                    readBySecond[second(c.completedNanos())] += (long) io.sectors() * IoRequest.SECTOR_BYTES;
                    readClat.recordValue(Math.max(0, c.completedNanos() - c.queuedNanos()));
                }
                reader[0].run();
            });
        };
        Runnable[] writer = new Runnable[1];
        writer[0] = () -> {
            if (sim.nowNanos() >= end || writePos[0] + WRITE_SECTORS > cap) return;
            IoRequest io = IoRequest.write(ids[0]++, writePos[0], WRITE_SECTORS, 2);
            writePos[0] += WRITE_SECTORS;
            sim.submit(io, (c, e) -> {
                if (c.completedNanos() <= end) {
                    written[0] += (long) io.sectors() * IoRequest.SECTOR_BYTES;
                    writtenBySecond[second(c.completedNanos())] += (long) io.sectors() * IoRequest.SECTOR_BYTES;
                    writeClat.recordValue(Math.max(0, c.completedNanos() - c.queuedNanos()));
                }
                writer[0].run();
            });
        };
        sim.at(0, () -> {
            for (int i = 0; i < writerWindow; i++) writer[0].run();
            reader[0].run();
        });
        sim.runUntil(end);
        Map<String, Object> m = bench.header("streaming", setup.requestedElevator(), sim.stats().elevator());
        m.put("seconds", seconds);
        m.put("read_mib_s", IoBench.mibPerSecond(read[0], end));
        m.put("write_mib_s", IoBench.mibPerSecond(written[0], end));
        m.put("read_clat_ms", clat(readClat));
        m.put("write_clat_ms", clat(writeClat));
        m.put("read_clat_cdf_ms", Latency.cdf(readClat, 1e6));
        m.put("read_mib_s_by_second", mibPerSecond(readBySecond));
        m.put("write_mib_s_by_second", mibPerSecond(writtenBySecond));
        m.put("seeks", disk.seeks());
        m.put("device_time_ms", sim.deviceBusyNanos() / 1_000_000);
        IoBench.putQueueStats(m, sim.stats());
        return m;
    }

    /** The second of the run a completion at {@code nanos} (at most the end) falls in. */
    private int second(long nanos) {
        return (int) Math.min(seconds - 1, nanos / 1_000_000_000L);
    }

    private static List<Double> mibPerSecond(long[] bytesBySecond) {
        List<Double> out = new ArrayList<>();
        for (long b : bytesBySecond) out.add(IoBench.mibPerSecond(b, 1_000_000_000L));
        return out;
    }

    /** The reader's clat CDF and both streams' throughput per second, one line per elevator. */
    private void plot(java.nio.file.Path dir, List<Map<String, Object>> runs) throws java.io.IOException {
        java.util.function.Function<Map<String, Object>, String> elevator = r -> (String) r.get("elevator");
        java.io.PrintStream out = IoBench.out(o);
        out.println("plot: " + Plots.latencyCdf(dir, "streaming-read-clat-cdf", "streaming: the reader's completion latency (clat)",
                "simulated ms", runs, elevator, "read_clat_cdf_ms"));
        out.println("plot: " + Plots.overTime(dir, "streaming-read-mib-s", "streaming: the reader's throughput, second by second",
                "virtual second", "read MiB/s", runs, elevator, "read_mib_s_by_second", 1, 1, false));
        out.println("plot: " + Plots.overTime(dir, "streaming-write-mib-s", "streaming: the writer's throughput, second by second",
                "virtual second", "write MiB/s", runs, elevator, "write_mib_s_by_second", 1, 1, false));
    }

    /** p50, p90, p99, p99.9 and max in milliseconds of simulated time (not corrected: the clients are paced by the disk). */
    static Map<String, Object> clat(org.HdrHistogram.Histogram h) {
        Map<String, Object> out = new java.util.LinkedHashMap<>();
        for (double p : new double[] {50, 90, 99, 99.9})
            out.put("p" + (p == 99.9 ? "999" : Integer.toString((int) p)), Math.round(h.getValueAtPercentile(p) / 1e4) / 100.0);
        out.put("max", Math.round(h.getMaxValue() / 1e4) / 100.0);
        return out;
    }
}
