package org.blockyard.runtime.bench;

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

    private Progress(Thread thread) {
        this.thread = thread;
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
                    err.printf(Locale.ROOT, "%s: %.0f s, %s%n", name, s, status.get());
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
