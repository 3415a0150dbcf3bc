package org.blockyard.runtime.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * kill -9 for real: a child JVM allocates, truncates and takes extents on a volume and reports each
 * acknowledgement; the test kills it with destroyForcibly() in the middle, reopens the volume (recovery), and
 * checks every acknowledged allocation and free against the recovered files, then runs fsck.
 */
class ChildJvmCrashTest {
    @TempDir
    Path dir;

    @Test
    void everyAcknowledgedChangeSurvivesAKilledProcessAndFsckIsClean() throws Exception {
        Path image = Volumes.make(dir, 4);
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process child = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                CrashChild.class.getName(), image.toString())
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        // Per file: logical block -> physical block as acknowledged; the call in flight per file or owner.
        Map<String, TreeMap<Long, Long>> files = new HashMap<>();
        Map<String, List<Long>> owners = new HashMap<>();
        Map<String, String[]> inFlight = new HashMap<>();
        int acks = 0;
        // A child that stops printing must not hang the build: past the deadline it is killed, which ends the stream.
        CompletableFuture.delayedExecutor(90, TimeUnit.SECONDS).execute(() -> child.destroyForcibly());
        try (java.io.InputStream out = child.getInputStream()) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            StringBuilder pending = new StringBuilder();
            byte[] buf = new byte[8192];
            boolean killed = false;
            // Read until 300 acknowledgements, kill the child, then read what it wrote before it died: it
            // keeps running until the kill, and its last lines count too. Only whole lines: the last one
            // may be cut by the kill.
            for (int n; (n = out.read(buf)) > 0; ) {
                pending.append(new String(buf, 0, n, StandardCharsets.ISO_8859_1));
                int nl;
                while ((nl = pending.indexOf("\n")) >= 0) {
                    String line = pending.substring(0, nl);
                    pending.delete(0, nl + 1);
                    if (take(line, files, owners, inFlight)) acks++;
                }
                if (!killed && (acks >= 300 || System.nanoTime() > deadline)) {
                    // SIGKILL from outside: Process.destroyForcibly would also close the pipe we still read.
                    int rc = new ProcessBuilder("kill", "-KILL", Long.toString(child.pid())).start().waitFor();
                    if (rc != 0) child.destroyForcibly(); // no kill command: lose the last lines, not the test
                    killed = true;
                }
            }
            child.destroyForcibly();
            assertTrue(child.waitFor(30, TimeUnit.SECONDS));
        }
        assertTrue(acks >= 300, "the child acknowledged only " + acks + " calls");

        try (Volume v = Volumes.open(image)) {
            assertTrue(!v.recovery().wasClean());
        }
        Metadata m = Volume.inspect(image);
        for (Map.Entry<String, TreeMap<Long, Long>> e : files.entrySet()) {
            TreeMap<Long, Long> got = blocks(m.entry(e.getKey()));
            TreeMap<Long, Long> want = e.getValue();
            String[] flight = inFlight.get(e.getKey());
            for (Map.Entry<Long, Long> b : want.entrySet()) {
                boolean mayBeGone = flight != null && flight[1].equals("TRUNC") && b.getKey() >= Long.parseLong(flight[3]);
                if (!mayBeGone)
                    assertEquals(b.getValue(), got.get(b.getKey()), e.getKey() + " logical " + b.getKey() + " lost");
            }
            for (Map.Entry<Long, Long> b : got.entrySet()) {
                boolean mayBeNew = flight != null && flight[1].equals("MAP") && b.getKey() >= Long.parseLong(flight[3]);
                if (!mayBeNew)
                    assertEquals(want.get(b.getKey()), b.getValue(), e.getKey() + " logical " + b.getKey()
                            + " is mapped though its free was acknowledged");
            }
        }
        for (Map.Entry<String, List<Long>> e : owners.entrySet()) {
            TreeMap<Long, Long> got = blocks(m.owner(e.getKey()));
            for (long b : e.getValue()) assertTrue(got.containsKey(b), e.getKey() + " lost block " + b);
        }
        Fsck.Result r = Fsck.check(image, false);
        assertTrue(r.clean(), r::report);
    }

    private static TreeMap<Long, Long> blocks(Metadata.Entry e) {
        TreeMap<Long, Long> out = new TreeMap<>();
        if (e == null) return out;
        for (ExtentMap.Run r : e.map.runs())
            for (long i = 0; i < r.blocks(); i++) out.put(r.logical() + i, r.physical() + i);
        return out;
    }

    /** One line of the child's: a call sent ({@code GO}) or acknowledged; answers whether it was an acknowledgement. */
    private static boolean take(String line, Map<String, TreeMap<Long, Long>> files, Map<String, List<Long>> owners,
                                Map<String, String[]> inFlight) {
        String[] f = line.split(" ");
        if (f[0].equals("GO")) {
            inFlight.put(f[2], f);
            return false;
        }
        inFlight.remove(f[2]);
        switch (f[1]) {
            case "MAP" -> {
                TreeMap<Long, Long> m = files.computeIfAbsent(f[2], k -> new TreeMap<>());
                long l = Long.parseLong(f[3]), p = Long.parseLong(f[4]), n = Long.parseLong(f[5]);
                for (long i = 0; i < n; i++) m.put(l + i, p + i);
            }
            case "TRUNC" -> files.computeIfAbsent(f[2], k -> new TreeMap<>()).tailMap(Long.parseLong(f[3]), true).clear();
            case "EXT" -> {
                long s = Long.parseLong(f[3]), n = Long.parseLong(f[4]);
                for (long i = 0; i < n; i++) owners.computeIfAbsent(f[2], k -> new java.util.ArrayList<>()).add(s + i);
            }
            default -> throw new AssertionError(line);
        }
        return true;
    }
}
