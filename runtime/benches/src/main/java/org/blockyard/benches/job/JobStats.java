package org.blockyard.benches.job;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;

import org.blockyard.benches.Latency;
import org.blockyard.benches.Report;

/**
 * What one clone of a job counted. Two kinds of figures: live ones ({@link #ops}, {@link #bytes},
 * {@link #clockNanos}), which the status line reads from its own thread, and the measured ones, counted only
 * from {@code measureFromNanos} (the end of the ramp) on, written by the clone alone and read once it is done.
 * Times are on the clone's clock: the virtual one on the simulated disk, {@code System.nanoTime()} from the
 * run's start otherwise.
 */
final class JobStats {
    final JobSpec job;
    final int clone;
    final long startNanos, measureFromNanos, stopAtNanos;

    final AtomicLong ops = new AtomicLong(), bytes = new AtomicLong();
    /** Calls sent (submissions, allocations), live: beside {@link #ops}, what is still unanswered. */
    final AtomicLong sentCalls = new AtomicLong();
    volatile long clockNanos;
    volatile boolean finished;
    /** Set from any thread: the clone starts no new call; what it has in flight is answered, then it ends. */
    private volatile boolean stopped;

    // Measured after the ramp: calls (submissions, getBlocks calls, allocations), their bytes, by direction.
    long measuredOps, measuredBytes, reads, writes, readBytes, writeBytes;
    /** queue: hand-over to the queue and back (not on the simulated disk); queue to completion; files, extents: the call. */
    final Latency slat = new Latency(), clat = new Latency();
    /** Submissions that travelled in a larger device request (merged with others), and those requests' sectors. */
    long merged, requestSectors;
    /** Submissions (calls) outstanding: the most, and their sum over every submission for the mean. */
    long depthMax, depthSum;
    /** Engine-specific counts (files opened, truncates, extents, NoSpace answers), by their JSON names. */
    final Map<String, Long> counts = new TreeMap<>();
    long finishNanos = -1;

    JobStats(JobSpec job, int clone, long startNanos) {
        this.job = job;
        this.clone = clone;
        this.startNanos = startNanos;
        this.measureFromNanos = startNanos + job.rampNanos();
        this.stopAtNanos = job.runtimeNanos() == 0 ? Long.MAX_VALUE : startNanos + job.rampNanos() + job.runtimeNanos();
        this.clockNanos = startNanos;
    }

    /** Whether the clone may start another call at {@code now}: it was not stopped, its time and its bytes are not used up. */
    boolean more(long now, long issuedBytes) {
        return !stopped && now - stopAtNanos < 0 && issuedBytes < job.bytesPerClone();
    }

    /** Ends the clone early: it starts no new call (a files clone no new file), and ends once its calls are answered. */
    void stop() {
        stopped = true;
    }

    /** A call sent ({@code outstanding} now in flight, this one included). */
    void sent(long outstanding) {
        sentCalls.incrementAndGet();
        depthMax = Math.max(depthMax, outstanding);
        depthSum += outstanding;
    }

    /** A call answered at {@code now}: live counts always, measured ones after the ramp; answers whether measured. */
    boolean answered(long now, long calls, long callBytes) {
        ops.addAndGet(calls);
        bytes.addAndGet(callBytes);
        clockNanos = now;
        if (now - measureFromNanos < 0) return false;
        measuredOps += calls;
        measuredBytes += callBytes;
        return true;
    }

    void count(String what, long n) {
        counts.merge(what, n, Long::sum);
    }

    void finish(long now) {
        finishNanos = now;
        clockNanos = now;
        finished = true;
    }

    /** How far the clone is, 0 to 1: the larger of its time and its bytes used up. */
    double fraction() {
        if (finished) return 1;
        double f = 0;
        if (stopAtNanos != Long.MAX_VALUE) f = (double) (clockNanos - startNanos) / (stopAtNanos - startNanos);
        long target = job.bytesPerClone();
        if (target != Long.MAX_VALUE) f = Math.max(f, (double) bytes.get() / target);
        return Math.max(0, Math.min(1, f));
    }

    /** The measured stretch: from the end of the ramp to the clone's end. */
    long windowNanos() {
        return Math.max(0, finishNanos - measureFromNanos);
    }

    /**
     * One job's row, its clones merged: throughput over the longest clone's window (the clones run side by
     * side), latencies corrected as closed-loop clients of {@code iodepth} calls in flight (a clone sends its
     * next call when one is answered, or a think time after). The job's latencies are merged {@code into} a
     * total too, when it is given.
     */
    static Map<String, Object> row(JobSpec job, List<JobStats> clones, boolean slatMeasured, Latency into) {
        Map<String, Object> r = Report.row();
        r.put("job", job.name());
        r.put("ioengine", job.engine().id());
        if (job.engine() == JobSpec.Engine.QUEUE) r.put("rw", job.rw().id);
        r.put("bs", job.bs().toString());
        r.put("iodepth", job.iodepth());
        r.put("numjobs", job.numjobs());
        long window = 0, ops = 0, bytes = 0, reads = 0, writes = 0, readBytes = 0, writeBytes = 0, merged = 0,
                requestSectors = 0, depthMax = 0, depthSum = 0;
        Latency slat = new Latency(), clat = new Latency();
        Map<String, Long> counts = new TreeMap<>();
        for (JobStats s : clones) {
            window = Math.max(window, s.windowNanos());
            ops += s.measuredOps;
            bytes += s.measuredBytes;
            reads += s.reads;
            writes += s.writes;
            readBytes += s.readBytes;
            writeBytes += s.writeBytes;
            merged += s.merged;
            requestSectors += s.requestSectors;
            depthMax = Math.max(depthMax, s.depthMax);
            depthSum += s.depthSum;
            s.counts.forEach((k, v) -> counts.merge(k, v, Long::sum));
            clat.merge(s.clat.correctClosedLoop(s.windowNanos(), job.iodepth()));
            if (slatMeasured) slat.merge(s.slat.notCorrected("a hand-over, not a call: nothing waits on it alone"));
        }
        if (into != null) into.merge(clat);
        double seconds = window / 1e9;
        r.put("runtime_s", Latency.round(seconds));
        boolean queue = job.engine() == JobSpec.Engine.QUEUE;
        r.put(queue ? "ios" : "calls", ops);
        r.put(queue ? "iops" : "calls_per_s", seconds > 0 ? ops / seconds : 0.0);
        r.put("bytes", bytes);
        r.put("mib_s", seconds > 0 ? bytes / 1048576.0 / seconds : 0.0);
        if (queue) {
            r.put("reads", reads);
            r.put("writes", writes);
            r.put("read_bytes", readBytes);
            r.put("write_bytes", writeBytes);
            if (slatMeasured) r.put("slat_us", slat.summaryMicros());
            r.put("clat_us", clat.summaryMicros());
            r.put("request_bytes_mean", ops == 0 ? 0.0 : (double) bytes / ops);
            r.put("device_request_bytes_mean", ops == 0 ? 0.0 : requestSectors * 512.0 / ops);
            r.put("merged", merged);
        } else {
            r.put("lat_us", clat.summaryMicros());
        }
        if (depthMax > 0) { // the files engine's calls are its LoadClient's, which keeps iodepth in flight
            r.put("depth_max", depthMax);
            long sent = clones.stream().mapToLong(s -> s.ops.get()).sum();
            r.put("depth_mean", sent == 0 ? 0.0 : Math.round((double) depthSum / sent * 100) / 100.0);
        }
        List<String> known = switch (job.engine()) {
            case QUEUE -> List.<String>of();
            case FILES -> List.of("files_opened", "files_closed", "extents", "extent_bytes", "truncates", "truncated_bytes", "enospc");
            case EXTENTS -> List.of("releases", "released_bytes", "split_allocations", "split_extents", "short_allocations", "enospc");
        };
        for (String k : known) r.put(k, counts.getOrDefault(k, 0L));
        if (job.engine() == JobSpec.Engine.EXTENTS) {
            long split = counts.getOrDefault("split_allocations", 0L);
            r.put("split_pct", ops == 0 ? 0.0 : 100.0 * split / ops);
            r.put("extents_per_split", split == 0 ? 0.0 : (double) counts.getOrDefault("split_extents", 0L) / split);
        }
        if (job.engine() == JobSpec.Engine.FILES) {
            long opened = counts.getOrDefault("files_opened", 0L);
            r.put("extents_per_file", opened == 0 ? 0.0 : (double) counts.getOrDefault("extents", 0L) / opened);
        }
        return r;
    }

    /**
     * A group's rows, as {@code bench run} reports them: one per job of {@code jobs}, then {@code total} (given
     * the queue jobs' I/O figures when there are any), each passed through {@code label}.
     */
    static List<Map<String, Object>> rows(List<JobSpec> jobs, List<JobStats> all, boolean slat,
                                          Map<String, Object> total, UnaryOperator<Map<String, Object>> label) {
        List<Map<String, Object>> rows = new ArrayList<>();
        Latency clat = new Latency();
        long ios = 0, bytes = 0, window = 0;
        boolean queueJobs = false;
        List<List<JobStats>> byJob = byJob(jobs, all);
        for (int i = 0; i < byJob.size(); i++) {
            JobSpec j = jobs.get(i);
            boolean queue = j.engine() == JobSpec.Engine.QUEUE;
            Map<String, Object> r = row(j, byJob.get(i), slat && queue, queue ? clat : null);
            if (queue) {
                queueJobs = true;
                ios += (Long) r.get("ios");
                bytes += (Long) r.get("bytes");
                for (JobStats s : byJob.get(i)) window = Math.max(window, s.windowNanos());
            }
            rows.add(label.apply(r));
        }
        if (queueJobs) {
            double seconds = window / 1e9;
            total.put("ios", ios);
            total.put("iops", seconds > 0 ? ios / seconds : 0.0);
            total.put("bytes", bytes);
            total.put("mib_s", seconds > 0 ? bytes / 1048576.0 / seconds : 0.0);
            total.put("clat_us", clat.summaryMicros());
        }
        rows.add(label.apply(total));
        return rows;
    }

    /** The clones of every job, by job, in the order the jobs were given. */
    static List<List<JobStats>> byJob(List<JobSpec> jobs, List<JobStats> all) {
        List<List<JobStats>> out = new ArrayList<>();
        for (JobSpec j : jobs) out.add(all.stream().filter(s -> s.job == j).toList());
        return out;
    }
}
