package org.blockyard.host;

import static org.blockyard.host.HostFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.felix.service.command.CommandSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code blockyard:bench} in a real host: a job file runs in the background of the shell against the host's
 * queue and allocator, each command answers at once, {@code blockyard:stats} shows the run's submissions
 * while it runs, {@code stop} ends it with every submission answered, and its report is bench run's.
 */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ShellBenchTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    /** A command of the shell answers at once: well under this, even on two busy cores. */
    private static final Duration AT_ONCE = Duration.ofSeconds(5);

    @TempDir
    Path tmp;

    private Host host;
    private CommandSession session;
    private final ByteArrayOutputStream console = new ByteArrayOutputStream();

    @AfterEach
    void closeHost() throws InterruptedException {
        if (session != null) session.close();
        if (host != null) host.close();
        HostFixture.assertNoThreadsLeft();
    }

    private void start() throws Exception {
        host = HostFixture.start(tmp, Host.builtPlugins(), null);
        PrintStream ps = new PrintStream(console, true, StandardCharsets.UTF_8);
        session = host.session(new ByteArrayInputStream(new byte[0]), ps, ps);
    }

    /** Runs {@code line} in the one session, as a console does; answers what it printed, and checks it answered at once. */
    private String run(String line) throws Exception {
        int from = all().length();
        long t0 = System.nanoTime();
        session.execute(line);
        long took = System.nanoTime() - t0;
        assertTrue(took < AT_ONCE.toNanos(), line + " took " + took / 1_000_000 + " ms");
        return console.toString(StandardCharsets.UTF_8).substring(from);
    }

    private String all() {
        return console.toString(StandardCharsets.UTF_8);
    }

    private static long submissionsSent(String statsLine) {
        Matcher m = Pattern.compile("submissions: ([0-9,]+) sent").matcher(statsLine);
        assertTrue(m.find(), statsLine);
        return Long.parseLong(m.group(1).replace(",", ""));
    }

    private Path jobs(String text) throws Exception {
        return Files.writeString(tmp.resolve("load.conf"), text);
    }

    @Test
    void aJobFileRunsInTheBackgroundStatsShowsItsSubmissionsAndStopEndsItWithEveryOneAnswered() throws Exception {
        start();
        Path file = jobs("""
                global { runtime = 60s, time_based = true }
                jobs = [
                  { name = reads, rw = randread, bs = 4k, numjobs = 2, size = 256MiB, thinktime = 100us }
                  { name = writes, rw = write, bs = 64k, iodepth = 8, offset = 256MiB, size = 64MiB }
                  { name = files, ioengine = files, bs = 64k, iodepth = 2, size = 1MiB }
                  { name = extents, ioengine = extents, bs = 64k, iodepth = 2, fill_high = 0.01 }
                ]
                """);
        assertTrue(run("blockyard:scheduler fifo").startsWith("noop deadline anticipatory cfq [fifo]"), all());
        String started = run("blockyard:bench " + file);
        assertTrue(started.contains("bench started: load.conf: 4 jobs, 5 clones"), started);
        assertTrue(started.contains("load.conf: reads.thinktime: below the host's scheduler tick"), started);

        // While it runs: stats shows its submissions growing; a second run is refused.
        await("the bench's submissions in blockyard:stats", WAIT, () -> {
            String s = HostFixture.shellQuietly(host, "blockyard:stats");
            return s.contains("bench: load.conf") && submissionsSent(s.substring(s.indexOf("bench: "))) > 1000;
        });
        String stats = run("blockyard:stats");
        assertTrue(stats.contains("queue: scheduler fifo;"), stats);
        long first = submissionsSent(stats.substring(stats.indexOf("bench: ")));
        Exception twice = assertThrows(Exception.class, () -> session.execute("blockyard:bench " + file));
        assertTrue(twice.getMessage().contains("a bench is running"), twice.getMessage());
        await("more submissions", WAIT, () -> {
            String s = HostFixture.shellQuietly(host, "blockyard:stats");
            return s.contains("bench: ") && submissionsSent(s.substring(s.indexOf("bench: "))) > first;
        });
        assertTrue(run("blockyard:bench").startsWith("bench: load.conf"));

        // Stop: the report comes to this console, every submission answered, and the engine is as it was.
        assertTrue(run("blockyard:bench stop").startsWith("stopping the bench (load.conf"));
        await("the report", WAIT, () -> all().contains("submissions: ") && all().contains("stopped early"));
        String report = all().substring(all().indexOf("bench load.conf: 4 jobs, 5 clones, stopped:"));
        assertTrue(report.contains("elevator fifo, device mem"), report);
        for (String job : new String[] {"reads", "writes", "files", "extents"}) assertTrue(report.contains(job), report);
        assertTrue(report.contains("queue: "), report);
        Matcher m = Pattern.compile("submissions: ([0-9,]+) sent, ([0-9,]+) answered \\(every one\\); stopped early")
                .matcher(report);
        assertTrue(m.find(), report);
        assertTrue(Long.parseLong(m.group(1).replace(",", "")) > first);
        assertEquals(host.store().allocator().geometry().dataBlocks(),
                (long) host.store().allocator().freeBlocks().toCompletableFuture().get(),
                "every file the run wrote was deleted and every extent given back");
        assertTrue(run("blockyard:stats").indexOf("bench: ") < 0, "no bench line once it ended");
        assertTrue(run("blockyard:bench").contains("the last one's report"));
        assertEquals("no bench is running", run("blockyard:bench stop").trim());
    }

    @Test
    void waitTakesTheReportAndWhatTheEngineWouldRefuseIsRefusedBeforeAnythingRuns() throws Exception {
        start();
        Exception missing = assertThrows(Exception.class, () -> session.execute("blockyard:bench " + tmp.resolve("none.conf")));
        assertTrue(missing.getMessage().contains("no such readable file"), missing.getMessage());
        Path beyond = jobs("jobs = [ { name = far, rw = read, bs = 4k, size = 4MiB, offset = 2GiB } ]");
        Exception far = assertThrows(Exception.class, () -> session.execute("blockyard:bench " + beyond));
        assertTrue(far.getMessage().contains("far.offset '2GiB': the region starts beyond the end of the host's mem device"),
                far.getMessage());
        Exception key = assertThrows(Exception.class, () -> session.execute("blockyard:bench " + beyond + " --bs"));
        assertTrue(key.getMessage().contains("--KEY=VALUE"), key.getMessage());

        // A file's device and elevator are the host's: said, not used. Options replace keys, as in bench run.
        Path small = jobs("""
                global { device = sim, elevator = [noop, cfq] }
                jobs = [ { name = one, rw = write, bs = 4k, size = 4MiB, iodepth = 4 } ]
                """);
        String started = run("blockyard:bench " + small + " --size=2MiB");
        assertTrue(started.contains("load.conf: device, elevator: not used; the jobs run on the host's engine"), started);
        String report = run("blockyard:bench wait");
        assertTrue(report.contains("elevator deadline, device mem"), report);
        assertTrue(report.contains("submissions: 512 sent, 512 answered (every one)"), report);
        assertTrue(!all().substring(all().indexOf(report) + report.length()).contains("submissions: "),
                "a report taken by wait is not printed again");

        // On a durable volume only reads run.
        host.bench().readOnly("volume", "the host runs on a durable volume");
        Exception ro = assertThrows(Exception.class, () -> session.execute("blockyard:bench " + small));
        assertTrue(ro.getMessage().contains("only read jobs may run here: the host runs on a durable volume"), ro.getMessage());
    }

    @Test
    void closingTheHostStopsARunningBench() throws Exception {
        start();
        Path file = jobs("jobs = [ { name = r, rw = randread, bs = 4k, size = 64MiB, runtime = 10m, time_based = true } ]");
        run("blockyard:bench " + file);
        await("submissions", WAIT, () -> host.bench().status() != null && submissionsSent(host.bench().status()) > 100);
        long t0 = System.nanoTime();
        session.close();
        session = null;
        host.close();
        assertTrue(System.nanoTime() - t0 < WAIT.toNanos(), "the host closed without waiting for the run's 10 minutes");
        host = null;
    }
}
