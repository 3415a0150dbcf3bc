package org.blockyard.runtime.volume;

import static org.blockyard.runtime.volume.Volumes.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.blockyard.api.alloc.AllocationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Multi-mount protection ({@link Mmp}): another host is played by a thread that writes the MMP block as a
 * holder would, through a descriptor of its own, and, where this machine can make them, by a second JVM that
 * reaches the same image through another loop device (two device nodes of one disk: neither host's lock sees
 * the other, as on shared storage).
 */
class MmpTest {
    static final int INTERVAL = 100;

    @TempDir
    Path dir;

    private Path make() {
        Path image = dir.resolve("mmp.img");
        Volume.mkfs(image, Layout.make(4096, 4096L * 4, 4096, 64, 256, 0, 0, true), false, INTERVAL);
        return image;
    }

    private static Superblock superblock(Path image) throws IOException {
        try (FileChannel ch = FileChannel.open(image, StandardOpenOption.READ)) {
            return Superblock.decode(Volume.read(ch, 0, Superblock.BYTES), 0, image.toString());
        }
    }

    private static Mmp.Record record(Path image) throws IOException {
        Superblock sb = superblock(image);
        long block = sb.layout().mmpBlock();
        try (FileChannel ch = FileChannel.open(image, StandardOpenOption.READ)) {
            return Mmp.decode(Volume.read(ch, block * 4096, 4096), sb.uuidBytes(), block);
        }
    }

    private static void writeRecord(Path image, Mmp.Record r) throws IOException {
        Superblock sb = superblock(image);
        long block = sb.layout().mmpBlock();
        try (FileChannel ch = FileChannel.open(image, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(Mmp.encode(r, sb.uuidBytes(), block, 4096)), block * 4096);
            ch.force(false);
        }
    }

    /** Another host that holds the volume: bumps the block's number every interval until stopped. */
    private Thread otherHost(Path image, AtomicBoolean stop) {
        Thread t = new Thread(() -> {
            for (long seq = 1000; !stop.get(); seq++) {
                try {
                    writeRecord(image, new Mmp.Record(seq, System.currentTimeMillis(), INTERVAL, "other-host pid 7"));
                    Thread.sleep(INTERVAL);
                } catch (IOException | InterruptedException e) {
                    return;
                }
            }
        }, "other-host");
        t.setDaemon(true);
        t.start();
        return t;
    }

    @Test
    void aCleanVolumeOpensAfterOneWatchIsHeldWhileOpenAndClosesClean() throws Exception {
        Path image = make();
        assertTrue(record(image).clean(), "mkfs writes the block clean");
        assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
            long t0 = System.nanoTime();
            Volume v = Volumes.open(image);
            long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(tookMs >= Mmp.waitMillis(INTERVAL), "an open watches the block once: " + tookMs + " ms");
            Mmp.Record first = record(image);
            assertFalse(first.clean());
            assertTrue(first.holder().contains("pid " + ProcessHandle.current().pid()), first.holder());
            Thread.sleep(INTERVAL * 4L);
            assertTrue(record(image).seq() != first.seq(), "the holder updates its block");
            v.close();
        });
        assertTrue(record(image).clean(), "a close lets go");
        Volumes.open(image).close(); // and the next open takes it again
    }

    @Test
    void aLiveHolderElsewhereRefusesTheOpenAndFsckAndNothingIsWritten() throws Exception {
        Path image = make();
        Superblock before = superblock(image);
        AtomicBoolean stop = new AtomicBoolean();
        Thread other = otherHost(image, stop);
        try {
            assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
                VolumeException.InUse e = assertThrows(VolumeException.InUse.class, () -> Volumes.open(image));
                assertTrue(e.getMessage().contains("other-host pid 7"), e.getMessage());
                assertThrows(VolumeException.InUse.class, () -> Fsck.check(image, false));
                assertThrows(VolumeException.InUse.class, () -> Fsck.check(image, true));
            });
            assertEquals(before, superblock(image), "nothing was written: the superblock is as it was");
            assertTrue(record(image).holder().startsWith("other-host"), "the other host's block is left alone");
        } finally {
            stop.set(true);
            other.join(5000);
        }
    }

    @Test
    void aRacerThatWroteAfterThisOpenHasTheVolume() throws Exception {
        Path image = make();
        AtomicBoolean stop = new AtomicBoolean();
        java.util.concurrent.CompletableFuture<Volume> opening =
                java.util.concurrent.CompletableFuture.supplyAsync(() -> Volumes.open(image));
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (record(image).clean() && System.nanoTime() < deadline) Thread.sleep(5);
            assertFalse(record(image).clean(), "the open wrote its number and watches it");
            Thread other = otherHost(image, stop); // a racer that also found it clean, and wrote after
            Throwable e = assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> opening.get(30, TimeUnit.SECONDS)).getCause();
            assertTrue(e instanceof VolumeException.InUse && e.getMessage().contains("while this open waited"), "" + e);
            stop.set(true);
            other.join(5000);
        } finally {
            stop.set(true);
            if (!opening.isCompletedExceptionally()) opening.thenAccept(Volume::close);
        }
    }

    @Test
    void aHolderThatStoppedUpdatingIsTakenOver() throws Exception {
        Path image = make();
        writeRecord(image, new Mmp.Record(77, System.currentTimeMillis(), INTERVAL, "crashed-host pid 9"));
        assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
            Volume v = Volumes.open(image);
            assertTrue(record(image).holder().contains("pid " + ProcessHandle.current().pid()));
            v.close();
        });
        assertTrue(record(image).clean());
    }

    @Test
    void anotherHostTakingTheVolumeFencesThisOne() throws Exception {
        Path image = make();
        Volume v = Volumes.open(image);
        join(v.allocator().allocate("o", 8, 1, 0, -1));
        writeRecord(image, new Mmp.Record(424242, System.currentTimeMillis(), INTERVAL, "intruder pid 3"));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        Throwable refused = null;
        while (refused == null && System.nanoTime() < deadline) {
            try {
                v.allocator().allocate("o", 8, 1, 0, -1).toCompletableFuture().get(10, TimeUnit.SECONDS);
                Thread.sleep(INTERVAL / 2);
            } catch (java.util.concurrent.ExecutionException e) {
                refused = e.getCause();
            }
        }
        assertTrue(refused instanceof AllocationException, "a call after the takeover fails: " + refused);
        assertTrue(refused.getMessage().contains("intruder pid 3"), refused.getMessage());
        VolumeException.InUse closed = assertThrows(VolumeException.InUse.class, v::close);
        assertTrue(closed.getMessage().contains("intruder"), closed.getMessage());
        assertEquals(424242, record(image).seq(), "the new holder's block is not written over");
        assertFalse(superblock(image).clean(), "the volume wrote nothing more: its superblock stays as the open left it");
    }

    @Test
    void aDamagedBlockIsRefusedByOpenReportedByFsckAndRepaired() throws Exception {
        Path image = make();
        long block = superblock(image).layout().mmpBlock();
        try (FileChannel ch = FileChannel.open(image, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(new byte[4096]), block * 4096);
        }
        VolumeException.Corrupt e = assertThrows(VolumeException.Corrupt.class, () -> Volumes.open(image));
        assertEquals(VolumeException.Structure.MMP, e.structure());
        Fsck.Result check = Fsck.check(image, false);
        assertTrue(check.problems().stream().anyMatch(p -> p.kind() == Fsck.Kind.MMP), check.problems().toString());
        Fsck.check(image, true);
        assertTrue(Fsck.check(image, false).clean());
        assertTrue(record(image).clean());
        Volumes.open(image).close();
    }

    @Test
    void aVolumeWithoutMmpOpensWithoutWaiting() {
        Path image = Volumes.make(dir, 4);
        long t0 = System.nanoTime();
        Volumes.open(image).close();
        assertTrue(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) < Mmp.waitMillis(INTERVAL) * 10);
        assertFalse(superblockQuiet(image).mmp());
    }

    private static Superblock superblockQuiet(Path image) {
        try {
            return superblock(image);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    // ---- two hosts: two JVMs, two loop devices of one image ------------------------------------------

    @Test
    void twoHostsRacingToOpenThroughTwoDevicesOfOneDiskGetItOnce() throws Exception {
        Path image = make();
        String a = losetup(image), b = a == null ? null : losetup(image);
        try {
            assumeTrue(a != null && b != null, "loop devices are not available here (they need root)");
            String at = Long.toString(System.currentTimeMillis() + 6000); // both JVMs up by then: they read at once
            List<Process> racers = List.of(probe("take", a, "500", at), probe("take", b, "500", at));
            List<List<String>> out = new ArrayList<>();
            for (Process p : racers) out.add(lines(p));
            List<String> firsts = out.stream().map(l -> l.isEmpty() ? "" : l.get(0)).toList();
            assertEquals(1, firsts.stream().filter(s -> s.equals("OPENED")).count(), "exactly one opens: " + out);
            assertEquals(1, firsts.stream().filter(s -> s.startsWith("INUSE")).count(), "the other is refused: " + out);
            assertTrue(out.stream().anyMatch(l -> l.contains("CLOSED")), "the winner closes: " + out);
            List<String> look = lines(probe("look", b));
            assertEquals(List.of("FILES race"), look, "the other device sees what the winner wrote");
            assertTrue(Fsck.check(image, false).clean());
        } finally {
            if (a != null) run("losetup", "-d", a);
            if (b != null) run("losetup", "-d", b);
        }
    }

    private static String losetup(Path image) {
        try {
            Process p = new ProcessBuilder("losetup", "-f", "--show", image.toString()).redirectErrorStream(true).start();
            String dev = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0 || !dev.startsWith("/dev/")) return null;
            return dev;
        } catch (IOException | InterruptedException e) {
            return null;
        }
    }

    private static void run(String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        p.waitFor(30, TimeUnit.SECONDS);
    }

    private static Process probe(String... args) throws IOException {
        return Volumes.child(MmpProbe.class, args);
    }

    private static List<String> lines(Process child) throws Exception {
        return Volumes.lines(child);
    }
}
