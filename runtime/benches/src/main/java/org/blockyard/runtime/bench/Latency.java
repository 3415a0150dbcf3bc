package org.blockyard.runtime.bench;

import java.util.LinkedHashMap;
import java.util.Map;

import org.HdrHistogram.Histogram;

/**
 * Call latencies in nanoseconds, recorded into HdrHistogram (3 significant digits, up to 60 s) and
 * reported in microseconds. One recorder per load client; {@link #merge} them at the end.
 */
public final class Latency {
    private final Histogram histogram = new Histogram(60_000_000_000L, 3);

    public void record(long nanos) {
        histogram.recordValue(Math.max(0, Math.min(nanos, histogram.getHighestTrackableValue())));
    }

    public void merge(Latency other) {
        histogram.add(other.histogram);
    }

    public long count() {
        return histogram.getTotalCount();
    }

    public double percentileMicros(double p) {
        return histogram.getValueAtPercentile(p) / 1000.0;
    }

    public double maxMicros() {
        return histogram.getMaxValue() / 1000.0;
    }

    /** {@code p50, p99, p999, max} in microseconds. */
    public Map<String, Double> summaryMicros() {
        Map<String, Double> m = new LinkedHashMap<>();
        m.put("p50", round(percentileMicros(50)));
        m.put("p99", round(percentileMicros(99)));
        m.put("p999", round(percentileMicros(99.9)));
        m.put("max", round(maxMicros()));
        return m;
    }

    static double round(double v) {
        return Math.round(v * 100) / 100.0;
    }
}
