package org.blockyard.benches;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.HdrHistogram.Histogram;

/**
 * Call latencies in nanoseconds, recorded into HdrHistogram (3 significant digits, up to 60 s) and
 * reported in microseconds, twice: {@code raw}, as measured, and {@code corrected} for coordinated
 * omission. One recorder per load client; {@link #merge} them at the end.
 *
 * <p>Why both: a client that waits for each answer before it sends the next call (a closed loop) sends
 * nothing while it is stalled, so a 300 ms stall is one slow sample among thousands of fast ones, and the
 * raw p99.9 can stay at a few µs while every caller waited. The correction adds the calls the client would
 * have made during the stall at its expected interval (HdrHistogram's
 * {@code recordValueWithExpectedInterval}: a sample of {@code v} adds {@code v - i, v - 2i, ...} down to
 * {@code i}). The expected interval is either
 * <ul>
 * <li>the pacing the client intended ({@link #recordPaced}: an open-loop client that sends on a schedule), or</li>
 * <li>for a closed-loop client, its measured mean interval between calls, elapsed time divided by calls per
 *     slot in flight ({@link #correctClosedLoop}): what a client issuing calls at the same average rate
 *     would have seen. This is an estimate, and a conservative one under stalls, since the stalls lengthen
 *     the mean interval and so shorten the correction.</li>
 * </ul>
 * A latency that is not a client's call (the length of a pause, say) is reported with the reason it is
 * not corrected ({@link #notCorrected}), under {@code not_corrected} instead of {@code corrected}.
 */
public final class Latency {
    private static final long HIGHEST_NANOS = 60_000_000_000L;

    /** How the closed-loop correction chose its interval, as the reports state it. */
    static final String CLOSED_LOOP = "closed loop: expected interval = the client's mean interval between calls";
    static final String PACED = "paced: expected interval = the client's intended interval between calls";

    private final Histogram raw = newHistogram();
    private Histogram corrected; // null while not corrected
    private String correction;   // how it was corrected, or why not (null: not said)
    private boolean correctable = true;
    private double intervalNanosSum;
    private int intervals;

    private static Histogram newHistogram() {
        return new Histogram(HIGHEST_NANOS, 3);
    }

    private static long clamp(long nanos) {
        return Math.max(0, Math.min(nanos, HIGHEST_NANOS));
    }

    /** A sample of a closed-loop client, or of something that is not a call; see {@link #correctClosedLoop}. */
    public void record(long nanos) {
        raw.recordValue(clamp(nanos));
    }

    /**
     * A call of a client that meant to send one call every {@code intervalNanos}: recorded raw, and
     * corrected with that interval.
     */
    public void recordPaced(long nanos, long intervalNanos) {
        long v = clamp(nanos);
        raw.recordValue(v);
        if (corrected == null) corrected = newHistogram();
        corrected.recordValueWithExpectedInterval(v, Math.max(1, intervalNanos));
        if (correction == null) {
            correction = PACED;
            intervalNanosSum += intervalNanos;
            intervals++;
        }
    }

    /**
     * Corrects the samples recorded so far as one closed-loop client's: the expected interval is
     * {@code elapsedNanos * inFlight / count()}, the mean interval between calls of each of the client's
     * {@code inFlight} slots. Call once per client, before merging.
     */
    public Latency correctClosedLoop(long elapsedNanos, int inFlight) {
        if (inFlight < 1) throw new IllegalArgumentException("a client has at least one call in flight");
        long n = raw.getTotalCount();
        long interval = n == 0 ? 0 : Math.max(1, (long) ((double) elapsedNanos * inFlight / n));
        corrected = n == 0 ? newHistogram() : raw.copyCorrectedForCoordinatedOmission(interval);
        correction = CLOSED_LOOP;
        intervalNanosSum = interval;
        intervals = n == 0 ? 0 : 1;
        return this;
    }

    /** Marks these samples as not to be corrected, with the reason the reports give. */
    public Latency notCorrected(String why) {
        correctable = false;
        corrected = null;
        correction = why;
        return this;
    }

    public void merge(Latency other) {
        raw.add(other.raw);
        if (!other.correctable) notCorrected(other.correction);
        if (!correctable) return;
        if (other.corrected != null) {
            if (corrected == null) corrected = newHistogram();
            corrected.add(other.corrected);
        }
        if (correction == null) correction = other.correction;
        else if (other.correction != null && !correction.equals(other.correction))
            correction = "mixed: " + correction + "; " + other.correction;
        intervalNanosSum += other.intervalNanosSum;
        intervals += other.intervals;
    }

    public long count() {
        return raw.getTotalCount();
    }

    /** Samples in the corrected histogram: the recorded ones plus those the correction added. */
    public long correctedCount() {
        return corrected != null ? corrected.getTotalCount() : count();
    }

    public boolean isCorrected() {
        return corrected != null;
    }

    public double percentileMicros(double p) {
        return raw.getValueAtPercentile(p) / 1000.0;
    }

    /** The raw samples' mean. */
    public double meanMicros() {
        return raw.getMean() / 1000.0;
    }

    public double maxMicros() {
        return raw.getMaxValue() / 1000.0;
    }

    /** A corrected percentile; the raw one where nothing was corrected. */
    public double correctedPercentileMicros(double p) {
        return (corrected != null ? corrected : raw).getValueAtPercentile(p) / 1000.0;
    }

    /**
     * {@code raw: {p50, p90, p99, p999, p9999, max}} in microseconds, then either {@code corrected} (same keys),
     * {@code calls_added} (the calls the correction added: those the stalls held back),
     * {@code expected_interval_us} (mean over the merged clients) and {@code correction} (how), or
     * {@code not_corrected} (why not).
     */
    public Map<String, Object> summaryMicros() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("raw", percentiles(raw));
        if (corrected != null) {
            m.put("corrected", percentiles(corrected));
            m.put("calls_added", corrected.getTotalCount() - raw.getTotalCount());
            m.put("expected_interval_us", intervals == 0 ? 0.0 : round(intervalNanosSum / intervals / 1000.0));
            m.put("correction", correction);
        } else {
            m.put("not_corrected", correction != null ? correction : "no client pacing known");
        }
        return m;
    }

    /**
     * The raw samples corrected as a client that meant to call every {@code intervalNanos}, whatever it
     * managed: {@code {expected_interval_us, p50, p90, p99, p999, max, calls_added}}. Two loads corrected
     * with the same interval are compared at the same offered rate; each one's own mean interval
     * ({@link #correctClosedLoop}) corrects a faster client more harshly for the same stall.
     */
    public Map<String, Object> correctedAtMicros(long intervalNanos) {
        if (intervalNanos < 1) throw new IllegalArgumentException("expected interval must be at least 1 ns");
        Histogram h = raw.copyCorrectedForCoordinatedOmission(intervalNanos);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("expected_interval_us", round(intervalNanos / 1000.0));
        m.putAll(percentiles(h));
        m.put("calls_added", h.getTotalCount() - raw.getTotalCount());
        return m;
    }

    private static Map<String, Object> percentiles(Histogram h) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("p50", round(h.getValueAtPercentile(50) / 1000.0));
        m.put("p90", round(h.getValueAtPercentile(90) / 1000.0));
        m.put("p99", round(h.getValueAtPercentile(99) / 1000.0));
        m.put("p999", round(h.getValueAtPercentile(99.9) / 1000.0));
        m.put("p9999", round(h.getValueAtPercentile(99.99) / 1000.0));
        m.put("max", round(h.getMaxValue() / 1000.0));
        return m;
    }

    /** Where a CDF is sampled: the body every 5 percent, then the tail to the maximum (100). */
    static final double[] CDF_PERCENTILES = {0, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60, 65, 70, 75, 80, 85, 90,
            95, 97.5, 99, 99.5, 99.9, 99.95, 99.99, 99.999, 100};

    /** The raw samples' distribution in microseconds, as {@link #cdf} gives it. */
    public List<List<Double>> cdfMicros() {
        return cdf(raw, 1000);
    }

    /** The raw samples' distribution in units of {@code nanosPerUnit} ({@code 1e6}: milliseconds). */
    public List<List<Double>> cdf(double nanosPerUnit) {
        return cdf(raw, nanosPerUnit);
    }

    /**
     * The distribution of {@code h} as {@code [percentile, value]} pairs at {@link #CDF_PERCENTILES}
     * (percentile 0 is the minimum, 100 the maximum), values divided by {@code nanosPerUnit}: what a latency
     * CDF is drawn from.
     */
    public static List<List<Double>> cdf(Histogram h, double nanosPerUnit) {
        List<List<Double>> out = new java.util.ArrayList<>();
        for (double p : CDF_PERCENTILES) {
            long v = p == 0 ? h.getMinValue() : p == 100 ? h.getMaxValue() : h.getValueAtPercentile(p);
            out.add(List.of(p, round(v / nanosPerUnit)));
        }
        return out;
    }

    /**
     * Table columns for a summary stored under {@code key}: raw p50, p99, p99.9 and max, then corrected
     * p99 and p99.9 (a cell shows "-" where the summary is not corrected).
     */
    public static List<String> columns(String key) {
        return List.of(key + ".raw.p50", key + ".raw.p99", key + ".raw.p999", key + ".raw.max",
                key + ".corrected.p99", key + ".corrected.p999");
    }

    /** Two decimals, as the reports give times and rates. */
    public static double round(double v) {
        return Math.round(v * 100) / 100.0;
    }
}
