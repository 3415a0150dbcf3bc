package org.blockyard.benches;

import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Bytes allocated on the heap by every thread of this JVM over a measured run (HotSpot's per-thread
 * allocation counters, the figure JFR and JMH's {@code -prof gc} report): the dispatcher's threads, which
 * live on, by difference; threads that end within the run (the global lock's thread clients) report their
 * own total as they end ({@link #threadEnds}). Includes what the JIT and the JVM's own threads allocate
 * meanwhile, which is small next to a benchmark's.
 */
final class AllocationMeter {
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    private static final LongAdder ENDED = new LongAdder();

    private final Map<Long, Long> start = new HashMap<>();
    private final long endedAtStart;

    private AllocationMeter() {
        long[] ids = THREADS.getAllThreadIds();
        long[] bytes = THREADS.getThreadAllocatedBytes(ids);
        for (int i = 0; i < ids.length; i++) if (bytes[i] >= 0) start.put(ids[i], bytes[i]);
        endedAtStart = ENDED.sum();
    }

    static AllocationMeter start() {
        return new AllocationMeter();
    }

    /** Called by a thread that started within the run as its last act. */
    static void threadEnds() {
        ENDED.add(THREADS.getCurrentThreadAllocatedBytes());
    }

    /** Bytes allocated since {@link #start}. */
    long bytes() {
        long[] ids = THREADS.getAllThreadIds();
        long[] now = THREADS.getThreadAllocatedBytes(ids);
        long sum = ENDED.sum() - endedAtStart;
        for (int i = 0; i < ids.length; i++) {
            if (now[i] < 0) continue;
            Long before = start.get(ids[i]);
            if (before != null) sum += now[i] - before;
            else sum += now[i]; // a thread born in the run that is still alive
        }
        return sum;
    }
}
