package org.blockyard.benches.io;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

import org.blockyard.api.io.IoRequest;
import org.blockyard.benches.BadOption;
import org.blockyard.benches.Report;
import org.blockyard.runtime.io.BlockDevice;
import org.blockyard.runtime.io.Simulation;
import org.blockyard.runtime.io.dio.DioSegment;
import org.blockyard.runtime.io.dio.DirectIoSplitter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code bench dio}: a direct write of an arbitrary byte range, split as seed 003 does (sector-granular head
 * and tail, page-granular middle), one submission per segment; the queue merges them up to max_sectors.
 */
@Command(name = "dio", mixinStandardHelpOptions = true,
        description = "Unaligned direct write: head, page-granular middle and tail, merged by the queue.")
public final class DioBench implements Callable<Integer> {
    @Mixin IoBenchOptions o;

    @Option(names = "--offset", defaultValue = "512", converter = org.blockyard.benches.Sizes.Converter.class, description = "Start byte (default: ${DEFAULT-VALUE}).")
    long offsetBytes;

    @Option(names = "--length", defaultValue = "1MiB", converter = org.blockyard.benches.Sizes.Converter.class, description = "Bytes (default: ${DEFAULT-VALUE}).")
    long lengthBytes;

    @Override
    public Integer call() throws Exception {
        BadOption.atLeast("--length", lengthBytes, 1);
        try (IoBench bench = new IoBench(o); BlockDevice device = bench.openDevice()) {
            long capacityBytes = device.capacitySectors() * IoRequest.SECTOR_BYTES;
            if (offsetBytes >= capacityBytes)
                throw new BadOption("--offset", offsetBytes, "lies beyond the end of the " + bench.deviceKind + " device ("
                        + Report.format(capacityBytes) + " bytes)");
            if (lengthBytes > capacityBytes - offsetBytes)
                throw new BadOption("--length", lengthBytes, "from byte " + offsetBytes + " (--offset) runs past the end of the "
                        + bench.deviceKind + " device (" + Report.format(capacityBytes) + " bytes)");
            int sectorBytes = bench.setup.limits().logicalBlockBytes();
            int pageBytes = bench.setup.limits().physicalBlockBytes();
            List<DioSegment> segs = DirectIoSplitter.split(offsetBytes, lengthBytes, sectorBytes, pageBytes);
            long heads = segs.stream().filter(s -> !s.pageGranular()).count();
            Map<String, Object> m;
            if (device.simulated()) {
                Simulation sim = IoBench.simulation(bench.setup, device);
                for (int i = 0; i < segs.size(); i++) {
                    IoRequest io = toRequest(i, segs.get(i), false);
                    sim.at(0, () -> sim.submit(io, (c, e) -> { if (e != null) throw new IllegalStateException(e); }));
                }
                sim.run();
                m = bench.header("dio", sim.stats().elevator());
                IoBench.putQueueStats(m, sim.stats());
                m.put("device_time_ms", sim.deviceBusyNanos() / 1e6);
            } else {
                IoBench.RealRun run = bench.runReal(device, q -> IoBench.submitWindowed(q, segs.size(), segs.size(),
                        i -> toRequest(i, segs.get(i), true), null));
                m = bench.header("dio", run.elevator());
                IoBench.putQueueStats(m, run.stats());
                m.put("elapsed_ms", run.elapsedNanos() / 1e6);
            }
            m.put("offset_bytes", offsetBytes);
            m.put("length_bytes", lengthBytes);
            m.put("sector_granular_segments", heads);
            m.put("page_granular_segments", segs.size() - heads);
            bench.putTrace(m, o);
            IoBench.print(IoBench.out(o), java.util.List.of(m));
            IoBench.writeJson(o, List.of(m), null);
        }
        return 0;
    }

    private static IoRequest toRequest(int id, DioSegment s, boolean payload) {
        IoRequest io = IoRequest.write(id, s.byteOffset() / IoRequest.SECTOR_BYTES, s.bytes() / IoRequest.SECTOR_BYTES, 1);
        return payload ? io.withPayload(ByteBuffer.allocate(s.bytes())) : io;
    }
}
