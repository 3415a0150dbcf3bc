package org.blockyard.host;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.blockyard.benches.BadOption;
import org.blockyard.benches.job.EngineRun;

/**
 * {@code blockyard:bench}: a workload file run in the host, against its engine and the plugins it runs, in
 * the background of the shell. At most one run at a time, on a thread of its own; every command answers at
 * once. When the run ends its report (the tables of {@code bench run}) goes to the console of the session
 * that started it, unless a {@code blockyard:bench wait} took it. {@link #close} (the host's) stops a run
 * and waits for it, so the engine never closes under clones still sending.
 */
final class ShellBench implements AutoCloseable {
    /** How long close and a refused start wait for a stopped run to finish what it has in flight. */
    static final Duration STOP_LIMIT = Duration.ofSeconds(60);

    /** One run: its job, its thread, and its end (report or failure) once it ended. */
    private static final class Run {
        final EngineRun job;
        final Thread thread;
        final PrintStream console;
        volatile boolean ended, waited;
        volatile Throwable failure;
        volatile String report;

        Run(EngineRun job, PrintStream console, Runnable body, int n) {
            this.job = job;
            this.console = console;
            this.thread = new Thread(body, "blockyard-bench-" + n);
            this.thread.setDaemon(true);
        }
    }

    private volatile String device = "host";
    private volatile String readOnly;
    private volatile Duration stall = Duration.ofSeconds(60);
    private Run current, last;
    private int runs;
    private boolean closed;

    /** The engine's device kind for the report, and how long a run waits without an answer before it fails. */
    void engine(String deviceKind, Duration submitTimeout) {
        this.device = deviceKind;
        this.stall = submitTimeout;
    }

    /** Only read jobs of the queue may run, for {@code reason} (a durable volume under the host). */
    void readOnly(String deviceKind, String reason) {
        this.device = deviceKind;
        this.readOnly = reason;
    }

    /**
     * Checks the workload of {@code file} with {@code options} ({@code --KEY=VALUE}, as {@code bench run} takes
     * them) and starts it. Refused, with a one-line message and nothing started: a run already going, a file
     * or key that is wrong, a job the engine would refuse.
     */
    synchronized List<String> start(Host host, Path file, List<String> options, PrintStream console) {
        if (closed) throw new IllegalStateException("the host is shutting down");
        if (current != null && !current.ended)
            throw new IllegalArgumentException("a bench is running (" + current.job.describe()
                    + "); blockyard:bench stop ends it, blockyard:bench wait waits for it");
        Map<String, String> keys = new LinkedHashMap<>();
        for (String k : options) {
            int eq = k.indexOf('=');
            if (!k.startsWith("--") || eq < 3)
                throw new BadOption(k, k, "a job key is given as --KEY=VALUE, such as --runtime=2s (docs/jobs.md)");
            keys.put(k.substring(2, eq).toLowerCase(Locale.ROOT), k.substring(eq + 1));
        }
        EngineRun job = EngineRun.prepare(file, keys, new EngineRun.Target(host.queue(), host.store().allocator(), device,
                readOnly, stall));
        Run[] self = new Run[1];
        Run run = new Run(job, console, () -> body(self[0]), ++runs);
        self[0] = run;
        current = run;
        run.thread.start();
        List<String> lines = new java.util.ArrayList<>(job.notes());
        lines.add("bench started: " + job.describe() + ". blockyard:stats shows its submissions, blockyard:bench stop"
                + " ends it; its report prints here when it ends");
        return lines;
    }

    private void body(Run run) {
        try {
            run.job.run();
            java.io.ByteArrayOutputStream buf = new java.io.ByteArrayOutputStream();
            try (PrintStream out = new PrintStream(buf, true, java.nio.charset.StandardCharsets.UTF_8)) {
                run.job.print(out);
            }
            run.report = "bench " + run.job.describe() + (run.job.stopped() ? ", stopped" : ", done") + ":\n\n"
                    + buf.toString(java.nio.charset.StandardCharsets.UTF_8);
        } catch (Throwable t) {
            run.failure = t;
            run.report = "bench " + run.job.describe() + " failed: " + message(t);
        } finally {
            boolean print;
            synchronized (this) {
                run.ended = true;
                last = run;
                print = !run.waited;
                notifyAll();
            }
            if (print) {
                run.console.println();
                run.console.print(run.report.endsWith("\n") ? run.report : run.report + "\n");
                run.console.flush();
            }
        }
    }

    private static String message(Throwable t) {
        while (t.getCause() != null && (t instanceof java.util.concurrent.CompletionException
                || t instanceof java.util.concurrent.ExecutionException)) t = t.getCause();
        return t.getMessage() != null ? t.getMessage() : t.toString();
    }

    /** Has the running bench's clones start nothing new; it ends once what is in flight is answered. */
    synchronized String stop() {
        if (current == null || current.ended) return "no bench is running";
        current.job.stop();
        return "stopping the bench (" + current.job.describe() + "): nothing new is sent, what is in flight is"
                + " answered, then its report prints";
    }

    /** Waits for the running bench to end (it has its own deadlines) and answers its report, or the last one. */
    String await() throws InterruptedException {
        Run run;
        synchronized (this) {
            run = current != null ? current : last;
            if (run == null) return "no bench has run; blockyard:bench JOBFILE starts one";
            run.waited = true;
            while (!run.ended) wait(1000);
        }
        if (run.failure != null) throw new IllegalStateException(run.report);
        return run.report;
    }

    /** One line on the running bench, for {@code blockyard:stats}; null when none runs. */
    synchronized String status() {
        if (current == null || current.ended) return null;
        return "bench: " + current.job.describe() + ", " + current.job.status()
                + (current.job.stopped() ? " (stopping)" : "");
    }

    /** What {@code blockyard:bench} alone says: the running bench's line, else the last report. */
    synchronized String describe() {
        String s = status();
        if (s != null) return s;
        if (last == null) return "no bench has run; blockyard:bench JOBFILE starts one";
        return "no bench is running; the last one's report:\n" + last.report;
    }

    /** Stops a running bench and waits for it (at most {@link #STOP_LIMIT}); no bench starts after. */
    @Override
    public void close() {
        Run run;
        synchronized (this) {
            closed = true;
            run = current;
            if (run == null || run.ended) return;
            run.job.stop();
        }
        try {
            run.thread.join(TimeUnit.SECONDS.toMillis(STOP_LIMIT.toSeconds()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
