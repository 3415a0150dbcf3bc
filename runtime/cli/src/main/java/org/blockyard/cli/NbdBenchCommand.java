package org.blockyard.cli;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.RandomAccessFile;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.Config;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import org.blockyard.benches.BadOption;
import org.blockyard.benches.JsonOutput;
import org.blockyard.benches.Report;
import org.blockyard.benches.Sizes;
import org.blockyard.nbd.ExportPool;
import org.blockyard.runtime.volume.Fsck;
import org.blockyard.runtime.volume.Layout;
import org.blockyard.runtime.volume.Volume;

/**
 * {@code blockyard bench nbd}: the same fio jobs ({@code --ioengine=nbd}) through {@code blockyard serve} of a
 * thin export, run as a child JVM, and through {@code nbdkit file} over a sparse file of the same size in the same
 * directory, both on loopback TCP, one job after the other on each in turn so both see the same machine. Both
 * are filled first (a 1 MiB sequential write of the whole size, reported as {@code fill}), so the measured jobs
 * overwrite and read written data on both. Reports IOPS, MiB/s, the completion latency's p50 and p99 and each
 * server process's CPU time (user + system, {@code /proc/PID/stat}) per GiB moved; the servers are stopped at
 * the end, on a failure and on Ctrl-C too, and the volume is checked (fsck) once its server has closed it.
 */
@Command(name = "nbd", mixinStandardHelpOptions = true,
        description = "fio (--ioengine=nbd) through `serve` of a thin export and through nbdkit's file plugin on a sparse file "
                + "of the same size, same jobs, same run: IOPS, MiB/s, clat p50/p99, server CPU seconds per GiB. Needs fio and nbdkit.")
public final class NbdBenchCommand implements Callable<Integer> {
    static final List<String> JOBS = List.of("randwrite", "randread", "write", "read");
    private static final String EXPORT = "bench";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern SERVING = Pattern.compile("serving .* on (nbd://\\S+)");

    @Option(names = "--size", defaultValue = "256MiB", converter = Sizes.Converter.class,
            description = "bytes of the export, of nbdkit's file and of what each job spans (default ${DEFAULT-VALUE})")
    long size;

    @Option(names = "--runtime", defaultValue = "10", description = "seconds of each job on each server (default ${DEFAULT-VALUE})")
    int runtime;

    @Option(names = "--iodepth", defaultValue = "32", description = "requests each fio job keeps in flight (default ${DEFAULT-VALUE})")
    int iodepth;

    @Option(names = "--numjobs", defaultValue = "1",
            description = "fio jobs, one NBD connection each, over equal slices of the size (default ${DEFAULT-VALUE})")
    int numjobs;

    @Option(names = "--jobs", defaultValue = "randwrite,randread,write,read", split = ",",
            description = "which jobs, in order: randwrite and randread in 4 KiB, write and read in 1 MiB (default ${DEFAULT-VALUE})")
    List<String> jobs;

    @Option(names = "--dir", paramLabel = "DIR",
            description = "where the volume image and nbdkit's file go, in a fresh directory removed at the end (default: java.io.tmpdir)")
    Path dir;

    @Option(names = "--config", paramLabel = "FILE", description = "Configuration layered over the defaults (for the volume and the server).")
    Path config;

    @Mixin
    JsonOutput json;

    /** What one fio run moved and how fast. */
    record FioResult(double iops, double mibPerS, double p50Us, double p99Us, long bytes) {}

    @Override
    public Integer call() throws Exception {
        BadOption.atLeast("--size", size, 1 << 20);
        BadOption.atLeast("--runtime", runtime, 1);
        BadOption.within("--iodepth", iodepth, 1, 1024);
        BadOption.within("--numjobs", numjobs, 1, 64);
        for (String j : jobs) BadOption.oneOf("--jobs", j, JOBS);
        if (size % ((long) numjobs << 20) != 0)
            throw new BadOption("--size", size, "a whole number of MiB for each of the " + numjobs + " job(s)");
        if (dir != null && !Files.isDirectory(dir)) throw new BadOption("--dir", dir, "an existing directory");
        Config c = BadOption.config(config);
        String fio = onPath("fio"), nbdkit = onPath("nbdkit");
        PrintStream out = json.tables(), progress = System.err;
        String loadBefore = loadAverage();

        Path work = Files.createTempDirectory(dir != null ? dir : Path.of(System.getProperty("java.io.tmpdir")), "blockyard-bench-nbd-");
        Servers servers = new Servers(work);
        Thread onCtrlC = new Thread(servers::stop, "bench-nbd-stop");
        Runtime.getRuntime().addShutdownHook(onCtrlC);
        List<Map<String, Object>> rows = new ArrayList<>();
        Map<String, Object> summary = new LinkedHashMap<>();
        try {
            Path image = work.resolve("vol.img"), raw = work.resolve("raw.img");
            makeVolume(image, c);
            try (RandomAccessFile f = new RandomAccessFile(raw.toFile(), "rw")) {
                f.setLength(size);
            }
            progress.println("bench nbd: volume " + image + " (export " + EXPORT + ", " + Sizes.format(size) + "), nbdkit file " + raw);
            String blockyardUri = servers.startBlockyard(image, config) + "/" + EXPORT;
            String nbdkitUri = servers.startNbdkit(nbdkit, raw);
            Map<String, String> uris = new LinkedHashMap<>();
            uris.put("blockyard", blockyardUri);
            uris.put("nbdkit", nbdkitUri);
            List<String> all = new ArrayList<>();
            all.add("fill");
            all.addAll(jobs);
            int step = 0, steps = all.size() * uris.size();
            for (String job : all) {
                for (Map.Entry<String, String> s : uris.entrySet()) {
                    long pid = servers.pid(s.getKey());
                    progress.printf(Locale.ROOT, "bench nbd: %d of %d: %s on %s (load %s)%n", ++step, steps, job, s.getKey(), loadAverage());
                    double cpu0 = cpuSeconds(pid);
                    FioResult r = fio(servers, fio, job, s.getValue(), work);
                    double cpu = cpuSeconds(pid) - cpu0;
                    Map<String, Object> row = Report.row();
                    row.put("job", job);
                    row.put("server", s.getKey());
                    row.put("iops", r.iops());
                    row.put("mib_per_s", r.mibPerS());
                    row.put("clat_p50_us", r.p50Us());
                    row.put("clat_p99_us", r.p99Us());
                    row.put("gib_moved", r.bytes() / (double) (1L << 30));
                    row.put("server_cpu_s", cpu);
                    row.put("server_cpu_s_per_gib", r.bytes() > 0 ? cpu / (r.bytes() / (double) (1L << 30)) : Double.NaN);
                    rows.add(row);
                }
            }
            int exit = servers.stopBlockyard();
            summary.put("blockyard_exit_code", exit);
            Fsck.Result check = Fsck.check(image, false);
            summary.put("fsck_clean", check.clean());
            for (String job : all) {
                Map<String, Object> b = find(rows, job, "blockyard"), k = find(rows, job, "nbdkit");
                Map<String, Object> ratio = new LinkedHashMap<>();
                ratio.put("iops", (double) b.get("iops") / (double) k.get("iops"));
                ratio.put("server_cpu_per_gib", (double) b.get("server_cpu_s_per_gib") / (double) k.get("server_cpu_s_per_gib"));
                summary.put(job + "_blockyard_vs_nbdkit", ratio);
            }
            summary.put("load_average_before", loadBefore);
            summary.put("load_average_after", loadAverage());
            Report.table(out, rows, List.of("job", "server", "iops", "mib_per_s", "clat_p50_us", "clat_p99_us", "gib_moved",
                    "server_cpu_s", "server_cpu_s_per_gib"));
            out.println();
            for (String job : all) {
                @SuppressWarnings("unchecked")
                Map<String, Object> ratio = (Map<String, Object>) summary.get(job + "_blockyard_vs_nbdkit");
                out.printf(Locale.ROOT, "%s: blockyard/nbdkit IOPS %s, CPU per GiB %s%n", job, Report.format(ratio.get("iops")),
                        Report.format(ratio.get("server_cpu_per_gib")));
            }
            out.printf("iodepth %d, numjobs %d, size %s, runtime %d s a job; load average %s before, %s after; "
                    + "serve exit code %d, fsck %s%n", iodepth, numjobs, Sizes.format(size), runtime, loadBefore, summary.get("load_average_after"),
                    exit, check.clean() ? "clean" : "NOT clean:\n" + check.report());
            json.write(spec, rows, summary);
            return check.clean() && exit == 0 ? 0 : 1;
        } finally {
            servers.stop();
            try {
                Runtime.getRuntime().removeShutdownHook(onCtrlC);
            } catch (IllegalStateException shuttingDown) {
                // Ctrl-C: the hook is running or has run
            }
        }
    }

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    private static Map<String, Object> find(List<Map<String, Object>> rows, String job, String server) {
        for (Map<String, Object> r : rows) if (job.equals(r.get("job")) && server.equals(r.get("server"))) return r;
        throw new IllegalStateException("no row for " + job + " on " + server);
    }

    /** A volume of twice the export (at least two groups) with the one export, closed again. */
    private void makeVolume(Path image, Config c) {
        int bs = c.getInt("blockyard.volume.block-size"), bpg = c.getInt("blockyard.volume.blocks-per-group");
        int table = c.getInt("blockyard.volume.file-table-blocks");
        long blocks = Math.max(2L * bpg, (2 * size / bs + bpg - 1) / bpg * bpg);
        int journal = Layout.defaultJournalBlocks(bs, blocks, bpg, table, c.getInt("blockyard.volume.journal-blocks"));
        Volume.mkfs(image, Layout.make(bs, blocks, bpg, table, journal, 0, 0), false);
        try (ExportPool pool = ExportPool.open(image, c)) {
            pool.create(EXPORT, size);
        }
    }

    /** One fio run, its JSON read back; {@code fill} is a whole sequential write of 1 MiB blocks, not timed. */
    FioResult fio(Servers servers, String fio, String job, String uri, Path work) throws Exception {
        long slice = size / numjobs;
        Path report = work.resolve("fio-" + job + ".json");
        List<String> cmd = new ArrayList<>(List.of(fio, "--name=" + job, "--ioengine=nbd", "--uri=" + uri,
                "--iodepth=" + iodepth, "--numjobs=" + numjobs, "--size=" + slice, "--offset_increment=" + slice,
                "--randrepeat=0", "--norandommap", "--group_reporting", "--output-format=json", "--output=" + report));
        switch (job) {
            case "fill" -> cmd.addAll(List.of("--rw=write", "--bs=1m"));
            case "randwrite", "randread" -> cmd.addAll(List.of("--rw=" + job, "--bs=4k"));
            default -> cmd.addAll(List.of("--rw=" + job, "--bs=1m"));
        }
        if (!job.equals("fill")) cmd.addAll(List.of("--time_based", "--runtime=" + runtime));
        Process p = servers.client(new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(work.resolve("fio-" + job + ".log").toFile()));
        long limit = job.equals("fill") ? 600 : runtime + 120L;
        try {
            if (!p.waitFor(limit, TimeUnit.SECONDS)) throw new IllegalStateException("fio " + job + " did not end within " + limit + " s");
        } finally {
            if (p.isAlive()) {
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
            }
        }
        if (servers.stopped()) throw new IllegalStateException("stopped by a signal: both servers stopped, " + work + " removed");
        if (p.exitValue() != 0)
            throw new IllegalStateException("fio " + job + " on " + uri + " failed (exit " + p.exitValue() + "): "
                    + lastLine(work.resolve("fio-" + job + ".log")));
        return parseFio(Files.readString(report));
    }

    /** The figures of fio's JSON (one group, {@code --group_reporting}): both directions summed, the busier one's latency. */
    static FioResult parseFio(String text) throws IOException {
        int brace = text.indexOf('{'); // fio may print notices before the document
        JsonNode job = JSON.readTree(text.substring(Math.max(0, brace))).path("jobs").path(0);
        JsonNode read = job.path("read"), write = job.path("write");
        if (read.isMissingNode() || write.isMissingNode()) throw new IOException("fio's JSON has no job figures");
        long bytes = read.path("io_bytes").asLong() + write.path("io_bytes").asLong();
        double iops = read.path("iops").asDouble() + write.path("iops").asDouble();
        double bw = read.path("bw_bytes").asDouble() + write.path("bw_bytes").asDouble();
        JsonNode busy = read.path("io_bytes").asLong() >= write.path("io_bytes").asLong() ? read : write;
        JsonNode pct = busy.path("clat_ns").path("percentile");
        return new FioResult(iops, bw / (1 << 20), pct.path("50.000000").asDouble() / 1000, pct.path("99.000000").asDouble() / 1000, bytes);
    }

    /** User plus system CPU seconds of process {@code pid} so far (fields 14 and 15 of /proc/PID/stat, in clock ticks). */
    static double cpuSeconds(long pid) throws IOException {
        String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" "); // f[0] is field 3, the state
        return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / (double) clockTicks();
    }

    private static long ticks;

    private static synchronized long clockTicks() {
        if (ticks == 0) {
            ticks = 100; // Linux's USER_HZ on every architecture but a few; asked below
            try {
                Process p = new ProcessBuilder("getconf", "CLK_TCK").redirectErrorStream(true).start();
                String v = new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
                if (p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0) ticks = Long.parseLong(v);
            } catch (IOException | InterruptedException | NumberFormatException e) {
                // keep USER_HZ
            }
        }
        return ticks;
    }

    static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split(" ");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException e) {
            return "unknown";
        }
    }

    private static String onPath(String tool) {
        for (String d : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
            if (!d.isEmpty() && Files.isExecutable(Path.of(d, tool))) return Path.of(d, tool).toString();
        throw new IllegalArgumentException(tool + " is not installed (not on the PATH); bench nbd runs fio and nbdkit");
    }

    private static String lastLine(Path log) {
        try {
            List<String> lines = Files.readAllLines(log);
            return lines.isEmpty() ? "(no output)" : lines.get(lines.size() - 1);
        } catch (IOException e) {
            return "(no output)";
        }
    }

    /** The two server processes and the work directory, stopped and removed once, whoever asks first. */
    private static final class Servers {
        private final Path work;
        private Process blockyard, nbdkit, client;
        private boolean stopped;

        synchronized boolean stopped() {
            return stopped;
        }

        /** Starts fio, which {@link #stop} ends too (a Ctrl-C sent to this process alone). */
        synchronized Process client(ProcessBuilder fio) throws IOException {
            if (stopped) throw new IllegalStateException("stopped");
            return client = fio.start();
        }

        Servers(Path work) {
            this.work = work;
        }

        synchronized long pid(String which) {
            return (which.equals("blockyard") ? blockyard : nbdkit).pid();
        }

        /** {@code serve} in a child JVM on a free loopback port; its URI (without export) once it listens. */
        String startBlockyard(Path image, Path config) throws Exception {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            List<String> cmd = new ArrayList<>(List.of(java));
            String opts = System.getenv("BLOCKYARD_JAVA_OPTS");
            cmd.addAll(List.of((opts == null || opts.isBlank() ? "-Xmx2g -XX:+UseG1GC" : opts.trim()).split("\\s+")));
            cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), Main.class.getName(), "serve", "--volume",
                    image.toString(), "--listen", "127.0.0.1:0"));
            if (config != null) cmd.addAll(List.of("--config", config.toString()));
            Process p;
            synchronized (this) {
                if (stopped) throw new IllegalStateException("stopped");
                p = blockyard = new ProcessBuilder(cmd).redirectOutput(work.resolve("serve.out").toFile()).start();
            }
            LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
            Thread pump = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getErrorStream(), StandardCharsets.UTF_8))) {
                    for (String line; (line = r.readLine()) != null; ) lines.add(line);
                } catch (IOException ended) {
                    // the server is gone
                }
                lines.add("");
            }, "bench-nbd-serve-stderr");
            pump.setDaemon(true);
            pump.start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            StringBuilder said = new StringBuilder();
            while (System.nanoTime() < deadline) {
                String line = lines.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
                if (line == null) break;
                if (line.isEmpty() && !p.isAlive()) break;
                said.append(line).append('\n');
                Matcher m = SERVING.matcher(line);
                if (m.find()) return m.group(1);
            }
            throw new IllegalStateException("blockyard serve did not start listening: " + said.toString().trim());
        }

        /** nbdkit's file plugin over {@code raw} on a free loopback port; its URI once it accepts connections. */
        String startNbdkit(String nbdkitPath, Path raw) throws Exception {
            int port;
            try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
                port = s.getLocalPort();
            }
            Process p;
            synchronized (this) {
                if (stopped) throw new IllegalStateException("stopped");
                p = nbdkit = new ProcessBuilder(nbdkitPath, "-f", "--exit-with-parent", "-i", "127.0.0.1", "-p",
                        Integer.toString(port), "file", "file=" + raw).redirectErrorStream(true)
                        .redirectOutput(work.resolve("nbdkit.log").toFile()).start();
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (System.nanoTime() < deadline && p.isAlive()) {
                try (Socket s = new Socket()) {
                    s.connect(new InetSocketAddress("127.0.0.1", port), 1000);
                    return "nbd://127.0.0.1:" + port;
                } catch (IOException notYet) {
                    Thread.sleep(50);
                }
            }
            throw new IllegalStateException("nbdkit did not start listening on port " + port + ": " + lastLine(work.resolve("nbdkit.log")));
        }

        /** SIGTERM to {@code serve}, which answers what is in flight and closes the volume; its exit code. */
        int stopBlockyard() throws InterruptedException {
            Process p;
            synchronized (this) {
                p = blockyard;
            }
            p.destroy();
            if (!p.waitFor(150, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("blockyard serve did not stop within 150 s of SIGTERM");
            }
            return p.exitValue();
        }

        /** Both servers stopped (SIGTERM, then SIGKILL after a while) and the work directory removed. */
        void stop() {
            synchronized (this) {
                if (stopped) return;
                stopped = true;
            }
            if (client != null) client.destroyForcibly();
            for (Process p : new Process[] {blockyard, nbdkit}) if (p != null) p.destroy();
            for (Process p : new Process[] {blockyard, nbdkit}) {
                if (p == null) continue;
                try {
                    if (!p.waitFor(150, TimeUnit.SECONDS)) p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    p.destroyForcibly();
                    Thread.currentThread().interrupt();
                }
            }
            try (Stream<Path> all = Files.walk(work)) {
                all.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            } catch (IOException ignored) {
                // a temporary directory left behind
            }
        }
    }
}
