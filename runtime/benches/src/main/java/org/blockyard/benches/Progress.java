package org.blockyard.benches;

import java.io.PrintStream;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * A status line on standard error every {@code intervalSeconds} while a benchmark runs: its name, the elapsed
 * time and what the benchmark says of its progress ({@code tiobench: 12 s, 2 of 4 runs done (50%), running
 * reservation}). Nothing with {@code --quiet}. A daemon thread, so a benchmark that fails never waits for it.
 */
public final class Progress implements AutoCloseable {
    private final Thread thread;
    /** What the running measurement says of itself ("1,234 of 20,000 files"); null when it says nothing. */
    private static volatile Supplier<String> detail;

    private Progress(Thread thread) {
        this.thread = thread;
    }

    /**
     * Lets the measurement running now add to the line (read from the progress thread, so it must be safe to
     * call from any thread; a slightly stale count is fine); null to stop.
     */
    public static void detail(Supplier<String> what) {
        detail = what;
    }

    /** Starts the line; {@code status} is asked each time; an interval of 0 or less prints nothing. */
    public static Progress start(String name, double intervalSeconds, Supplier<String> status) {
        return start(System.err, name, intervalSeconds, status);
    }

    static Progress start(PrintStream err, String name, double intervalSeconds, Supplier<String> status) {
        if (!(intervalSeconds > 0)) return new Progress(null);
        long t0 = System.nanoTime(), intervalMillis = Math.max(1, (long) (intervalSeconds * 1000));
        Thread t = new Thread(() -> {
            try {
                while (true) {
                    Thread.sleep(intervalMillis);
                    double s = (System.nanoTime() - t0) / 1e9;
                    Supplier<String> d = detail;
                    err.printf(Locale.ROOT, "%s: %.0f s, %s%s%n", name, s, status.get(), d == null ? "" : ": " + d.get());
                    err.flush();
                }
            } catch (InterruptedException stopped) {
                // close(): the benchmark is done
            }
        }, "blockyard-progress");
        t.setDaemon(true);
        t.start();
        return new Progress(t);
    }

    @Override
    public void close() {
        if (thread == null) return;
        thread.interrupt();
        try {
            thread.join(1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
