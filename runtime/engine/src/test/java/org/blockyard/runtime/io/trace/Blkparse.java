package org.blockyard.runtime.io.trace;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Assumptions;

/** Runs the real blkparse and btt (Debian package blktrace) and reads what they print. */
final class Blkparse {
    private Blkparse() {}

    /** One event line of blkparse's default output: {@code "%D %2c %8s %5T.%9t %5p %2a %3d "} then the tail. */
    record Line(int major, int minor, int cpu, long sequence, String time, int pid, String action, String rwbs,
                String tail) {}

    private static final Pattern EVENT = Pattern.compile(
            "^\\s*(\\d+),(\\d+)\\s+(\\d+)\\s+(\\d+)\\s+(\\d+\\.\\d{9})\\s+(\\d+)\\s+(\\S+)\\s+(\\S+)\\s+(.*)$");
    private static final Pattern BTT_ROW = Pattern.compile(
            "^(\\S+)\\s+\\d+\\.\\d+\\s+\\d+\\.\\d+\\s+\\d+\\.\\d+\\s+(\\d+)\\s*$");

    static boolean available() {
        return onPath("blkparse");
    }

    static boolean bttAvailable() {
        return onPath("btt");
    }

    /** Fails on CI (environment variable CI set), where the tools must be installed; skips elsewhere. */
    static void requireTools() {
        boolean present = available() && bttAvailable();
        if (!present && System.getenv("CI") != null)
            fail("blkparse/btt not on PATH, but CI is set: install Debian's blktrace package (.ci/run does)");
        Assumptions.assumeTrue(present, "blkparse/btt not on PATH; install the blktrace package to run this test");
    }

    /** Counts per action letter of what blkparse prints for {@code traceFile}. */
    static Map<Character, Long> actionCounts(Path traceFile) throws IOException {
        Map<Character, Long> counts = new TreeMap<>();
        for (Line l : lines(traceFile)) counts.merge(l.action().charAt(0), 1L, Long::sum);
        return counts;
    }

    /** The event lines blkparse prints for one trace file of any name (read through a pipe). */
    static List<Line> lines(Path traceFile) throws IOException {
        return parseEvents(run(traceFile.getParent(), traceFile, "blkparse", "-i", "-"));
    }

    /** blkparse in file mode: {@code blkparse -i dir/device}, reading device.blktrace.0, .1, ... */
    static String fileMode(Path dir, String device) throws IOException {
        return run(dir, null, "blkparse", "-i", dir.resolve(device).toString());
    }

    static List<Line> parseEvents(String output) {
        List<Line> lines = new ArrayList<>();
        for (String s : output.split("\n")) {
            Matcher m = EVENT.matcher(s);
            if (!m.matches()) continue;
            lines.add(new Line(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)),
                    Integer.parseInt(m.group(3)), Long.parseLong(m.group(4)), m.group(5),
                    Integer.parseInt(m.group(6)), m.group(7), m.group(8), m.group(9)));
        }
        return lines;
    }

    /**
     * btt's "All Devices" table: the N column per latency (Q2Q, Q2M, I2D, M2D, D2C, Q2C, ...).
     * btt reads one binary file, so blkparse first merges the trace into one ({@code -d}).
     */
    static Map<String, Long> bttCounts(Path traceFile, Path workDir) throws IOException {
        Path bin = workDir.resolve("btt-input.bin");
        run(workDir, traceFile, "blkparse", "-i", "-", "-O", "-d", bin.toString());
        String out = run(workDir, null, "btt", "-i", bin.toString());
        Map<String, Long> n = new TreeMap<>();
        boolean inAll = false;
        for (String s : out.split("\n")) {
            if (s.startsWith("=")) {
                inAll = s.contains("All Devices");
                continue;
            }
            if (!inAll) continue;
            Matcher m = BTT_ROW.matcher(s);
            if (m.matches()) n.put(m.group(1), Long.parseLong(m.group(2)));
        }
        return n;
    }

    private static String run(Path workDir, Path stdin, String... command) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command).directory(workDir.toFile());
        Path err = Files.createTempFile(workDir, "stderr", ".txt");
        pb.redirectError(err.toFile());
        if (stdin != null) pb.redirectInput(stdin.toFile());
        Process p = pb.start();
        byte[] out = p.getInputStream().readAllBytes();
        try {
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                fail(String.join(" ", command) + " did not finish");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while running " + command[0], e);
        }
        String stderr = Files.readString(err, StandardCharsets.UTF_8);
        Files.delete(err);
        if (p.exitValue() != 0)
            fail(String.join(" ", command) + " exited with " + p.exitValue() + ": " + stderr);
        if (!stderr.isBlank()) fail(String.join(" ", command) + " complained: " + stderr);
        return new String(out, StandardCharsets.UTF_8);
    }

    private static boolean onPath(String tool) {
        String path = System.getenv("PATH");
        if (path == null) return false;
        for (String dir : path.split(File.pathSeparator)) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, tool))) return true;
        }
        return false;
    }
}
