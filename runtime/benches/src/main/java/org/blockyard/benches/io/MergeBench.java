package org.blockyard.benches.io;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Callable;

import org.blockyard.api.io.IoRequest;
import org.blockyard.benches.BadOption;
import org.blockyard.runtime.io.BlockDevice;
import org.blockyard.runtime.io.FileDevice;
import org.blockyard.runtime.io.Simulation;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code bench merge}: one sequential write of {@code --size} bytes as contiguous submissions of
 * {@code --submit-bytes}; counts the device requests they merge into (seed 003: 1 MiB as 256 x 4 KiB goes out
 * as 8 requests of 256 sectors). With {@code --device file} it also writes the same bytes with a plain
 * FileChannel (same submission size, a file beside the image) and reports the ratio.
 */
@Command(name = "merge", mixinStandardHelpOptions = true,
        description = "Sequential write as small contiguous submissions; how they merge into device requests.")
public final class MergeBench implements Callable<Integer> {
    @Mixin IoBenchOptions o;

    @Option(names = "--size", defaultValue = "1MiB", converter = org.blockyard.benches.Sizes.Converter.class,
            description = "Bytes written (default: ${DEFAULT-VALUE}).")
    long sizeBytes;

    @Option(names = "--submit-bytes", defaultValue = "4096", converter = org.blockyard.benches.Sizes.Converter.class,
            description = "Bytes per submission (default: ${DEFAULT-VALUE}).")
    long submitBytes;

    @Option(names = "--window", defaultValue = "4096",
            description = "Submissions outstanding at once on a real device (default: ${DEFAULT-VALUE}).")
    int window;

    @Option(names = "--batch", defaultValue = "32",
            description = "Submissions handed over per message on a real device (BlockQueue.submitAll); 1 = one "
                    + "submit call each (default: ${DEFAULT-VALUE}, one 128 KiB request's worth, as a blk_plug would gather).")
    int batch;

    @Option(names = "--rounds", defaultValue = "3",
            description = "With --device file: plain and stack writes alternate this many times and the medians are "
                    + "compared, so one round's page-cache writeback does not decide the ratio (default: ${DEFAULT-VALUE}).")
    int rounds;

    @Override
    public Integer call() throws Exception {
        BadOption.atLeast("--rounds", rounds, 1);
        BadOption.atLeast("--window", window, 1);
        if (batch < 1 || batch > window) throw new BadOption("--batch", batch, "must be from 1 to --window (" + window + ")");
        if (submitBytes < IoRequest.SECTOR_BYTES || submitBytes % IoRequest.SECTOR_BYTES != 0 || submitBytes > Integer.MAX_VALUE)
            throw new BadOption("--submit-bytes", submitBytes, "must be a multiple of 512 bytes, at least 512, below 2 GiB");
        if (sizeBytes < submitBytes || sizeBytes % submitBytes != 0 || sizeBytes / submitBytes > Integer.MAX_VALUE)
            throw new BadOption("--size", sizeBytes, "must be a multiple of --submit-bytes (" + submitBytes + ")");
        int count = Math.toIntExact(sizeBytes / submitBytes);
        int sectorsEach = (int) (submitBytes / IoRequest.SECTOR_BYTES);
        try (IoBench bench = new IoBench(o); BlockDevice device = bench.openDevice()) {
            long capacity = device.capacitySectors();
            long span = sizeBytes / IoRequest.SECTOR_BYTES;
            if (span > capacity)
                throw new BadOption("--size", sizeBytes, "exceeds the device (" + capacity * 512 + " bytes)");
            long slots = (capacity - span) / 256 + 1;
            long start = Math.floorMod(new Random(o.seed).nextLong(), slots) * 256;
            Map<String, Object> m;
            if (device.simulated()) {
                Simulation sim = IoBench.simulation(bench.setup, device);
                for (int i = 0; i < count; i++) {
                    IoRequest io = IoRequest.write(i, start + (long) i * sectorsEach, sectorsEach, 1);
                    sim.at(0, () -> sim.submit(io, (c, e) -> { if (e != null) throw new IllegalStateException(e); }));
                }
                sim.run();
                m = bench.header("merge", sim.stats().elevator());
                m.put("bytes", sizeBytes);
                IoBench.putQueueStats(m, sim.stats());
                m.put("device_time_ms", sim.deviceBusyNanos() / 1e6);
                m.put("stack_mib_s", IoBench.mibPerSecond(sizeBytes, sim.nowNanos()));
            } else {
                ArrayBlockingQueue<ByteBuffer> pool = new ArrayBlockingQueue<>(window);
                for (int i = 0; i < window; i++) {
                    ByteBuffer b = ByteBuffer.allocateDirect((int) submitBytes);
                    while (b.hasRemaining()) b.put((byte) (i + b.position()));
                    pool.add(b.flip());
                }
                Path plainFile = device instanceof FileDevice ? bench.settings.filePath().resolveSibling(
                        bench.settings.filePath().getFileName() + ".plain") : null;
                int n = plainFile == null ? 1 : rounds;
                double[] plainRates = new double[n], stackRates = new double[n];
                IoBench.RealRun run = null;
                for (int round = 0; round < n; round++) {
                    if (plainFile != null)
                        plainRates[round] = IoBench.mibPerSecond(sizeBytes, plainWrite(plainFile, sizeBytes, (int) submitBytes));
                    ByteBuffer[] inUse = new ByteBuffer[count];
                    // The queue actor closes its device when it stops: each round opens it again.
                    BlockDevice roundDevice = round == 0 ? device : bench.openDevice();
                    run = bench.runReal(roundDevice, q -> IoBench.submitWindowed(q, count, window, batch, i -> {
                        ByteBuffer b;
                        try {
                            b = pool.take();
                        } catch (InterruptedException e) {
                            throw new IllegalStateException(e);
                        }
                        inUse[i] = b;
                        return IoRequest.write(i, start + (long) i * sectorsEach, sectorsEach, 1).withPayload(b.duplicate());
                    }, c -> pool.add(inUse[(int) c.id()])));
                    stackRates[round] = IoBench.mibPerSecond(sizeBytes, run.elapsedNanos());
                }
                m = bench.header("merge", run.elevator());
                m.put("bytes", sizeBytes);
                IoBench.putQueueStats(m, run.stats());
                m.put("batch", batch);
                m.put("elapsed_ms", run.elapsedNanos() / 1e6);
                double stack = median(stackRates);
                m.put("stack_mib_s", stack);
                if (plainFile != null) {
                    double plain = median(plainRates);
                    m.put("rounds", n);
                    m.put("stack_mib_s_rounds", round2(stackRates));
                    m.put("plain_mib_s_rounds", round2(plainRates));
                    m.put("plain_mib_s", plain);
                    m.put("plain_write_bytes", submitBytes);
                    m.put("ratio_vs_plain", Math.round(stack / plain * 1000) / 1000.0);
                    m.put("o_direct", ((FileDevice) device).direct());
                }
            }
            bench.putTrace(m, o);
            IoBench.print(IoBench.out(o), java.util.List.of(m));
            IoBench.writeJson(o, java.util.List.of(m), null);
        }
        return 0;
    }

    static double median(double[] v) {
        double[] c = v.clone();
        java.util.Arrays.sort(c);
        return c.length % 2 == 1 ? c[c.length / 2] : (c[c.length / 2 - 1] + c[c.length / 2]) / 2;
    }

    static java.util.List<Double> round2(double[] v) {
        java.util.List<Double> out = new java.util.ArrayList<>();
        for (double d : v) out.add(Math.round(d * 100) / 100.0);
        return out;
    }

    /** Writes {@code bytes} with positional FileChannel writes of {@code writeBytes}; answers the time taken. */
    static long plainWrite(Path file, long bytes, int writeBytes) throws IOException {
        ByteBuffer b = ByteBuffer.allocateDirect(writeBytes);
        while (b.hasRemaining()) b.put((byte) b.position());
        b.flip();
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            long t0 = System.nanoTime();
            for (long pos = 0; pos < bytes; pos += writeBytes) {
                ByteBuffer d = b.duplicate();
                long p = pos;
                while (d.hasRemaining()) p += ch.write(d, p);
            }
            return System.nanoTime() - t0;
        } finally {
            Files.deleteIfExists(file);
        }
    }
}
