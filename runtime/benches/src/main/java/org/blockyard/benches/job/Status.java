package org.blockyard.benches.job;

import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

import org.blockyard.benches.Report;

/**
 * What the status line says while a workload runs ({@code run: 12 s, deadline (1 of 4): 42%, ETA 6 s,
 * 812 IOPS 3.2 MiB/s, 1,204 calls/s}): the run's share done, the time left at that pace, and the rates since
 * the previous line, each on its clones' clock (virtual on the simulated disk). A group is as far as its
 * slowest clone. Asked from the progress thread only; the clones' figures it reads are atomic or volatile.
 */
final class Status implements Supplier<String> {
    private final long startNanos = System.nanoTime();
    private final int groups;
    private volatile int group;
    private volatile String elevator = "starting";
    private volatile List<JobStats> clones = List.of();
    /** Per clone at the previous line: ops, bytes, clock. */
    private final Map<JobStats, long[]> last = new IdentityHashMap<>();

    Status(int groups) {
        this.groups = groups;
    }

    void group(int index, String elevator, List<JobStats> clones) {
        this.clones = List.copyOf(clones);
        this.elevator = elevator;
        this.group = index;
    }

    @Override
    public String get() {
        List<JobStats> now = clones;
        double f = now.isEmpty() ? 0 : 1;
        for (JobStats s : now) f = Math.min(f, s.fraction());
        double p = (group + f) / groups;
        double elapsed = (System.nanoTime() - startNanos) / 1e9;
        StringBuilder sb = new StringBuilder(elevator).append(" (").append(group + 1).append(" of ").append(groups)
                .append("): ").append(Math.round(p * 100)).append('%');
        if (p > 0.001) sb.append(", ETA ").append(Report.format(Math.round(elapsed * (1 - p) / p))).append(" s");
        long qOps = 0, qBytes = 0, qClock = 0, aOps = 0, aClock = 0;
        for (JobStats s : now) {
            long[] cur = {s.ops.get(), s.bytes.get(), s.clockNanos};
            long[] prev = last.getOrDefault(s, new long[] {0, 0, s.startNanos});
            last.put(s, cur);
            if (s.job.engine() == JobSpec.Engine.QUEUE) {
                qOps += cur[0] - prev[0];
                qBytes += cur[1] - prev[1];
                qClock = Math.max(qClock, cur[2] - prev[2]);
            } else {
                aOps += cur[0] - prev[0];
                aClock = Math.max(aClock, cur[2] - prev[2]);
            }
        }
        if (qClock > 0)
            sb.append(", ").append(Report.format(qOps / (qClock / 1e9))).append(" IOPS ")
                    .append(String.format(Locale.ROOT, "%.1f", qBytes / 1048576.0 / (qClock / 1e9))).append(" MiB/s");
        if (aClock > 0) sb.append(", ").append(Report.format(aOps / (aClock / 1e9))).append(" calls/s");
        return sb.toString();
    }
}
