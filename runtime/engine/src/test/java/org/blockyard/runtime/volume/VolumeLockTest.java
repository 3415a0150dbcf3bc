package org.blockyard.runtime.volume;

import static org.blockyard.runtime.volume.Volumes.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Stream;

import org.blockyard.api.alloc.BlockRun;
import org.blockyard.runtime.io.BlockDevice;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The lock of an open volume against other processes holds for the volume's whole life: a refused second open,
 * mkfs, inspect, journal look or fsck in the same process does not drop it (an fcntl lock goes with ANY close
 * of a descriptor of the file in the process), nor does the volume's own close before its last write. The
 * other process is a child JVM ({@link LockProbe}).
 */
class VolumeLockTest {
    @TempDir
    Path dir;

    /** What the same process tries, and is refused, while the volume is open. */
    static Stream<Arguments> refusals() {
        return Stream.of(
                refusal("a second open", image -> Volumes.open(image).close()),
                refusal("mkfs --force", image -> Volume.mkfs(image, Volumes.layout(4), true)),
                refusal("inspect", Volume::inspect),
                refusal("the journal's transactions", Volume::journalTransactions),
                refusal("fsck", image -> Fsck.check(image, false)),
                refusal("fsck --repair", image -> Fsck.check(image, true)));
    }

    private static Arguments refusal(String what, Consumer<Path> call) {
        return Arguments.of(what, call);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refusals")
    void aRefusalInTheSameProcessLeavesTheVolumeLockedAgainstAnotherProcess(String what, Consumer<Path> refused)
            throws Exception {
        Path image = Volumes.make(dir, 4);
        BlockRun kept;
        try (Volume v = Volumes.open(image)) {
            join(v.allocator().open("acked"));
            kept = join(v.allocator().getBlocks("acked", 0, 40, true));
            assertThrows(VolumeException.InUse.class, () -> refused.accept(image), what + " of an open volume");

            List<String> said = probe(image, "once");
            assertEquals(List.of("REPAIR INUSE", "OPEN INUSE"), said,
                    "after a refused " + what + " in this process, another process repaired or opened the live volume");

            BlockRun more = join(v.allocator().getBlocks("acked", 40, 10, true));
            assertEquals(10, more.blocks(), "the volume goes on");
        }
        try (Volume v = Volumes.open(image)) {
            assertTrue(v.recovery().wasClean(), "closed cleanly, nobody wrote under it");
            join(v.allocator().open("acked"));
            BlockRun back = join(v.allocator().getBlocks("acked", 0, 40, false));
            assertEquals(kept.physicalStart(), back.physicalStart());
            assertEquals(40, back.blocks());
        }
        Fsck.Result r = Fsck.check(image, false);
        assertTrue(r.clean(), r::report);
    }

    /**
     * A second process polls open while the volume closes; the close is held up for a while right after its
     * block device closed (the point where the device's own descriptor used to be closed, dropping the lock),
     * before the close's last writes. The second process must not get the volume before those writes: when
     * it does get it, the volume it finds is clean, its journal empty.
     */
    @Test
    void aClosingVolumeStaysLockedUntilItsLastWrite() throws Exception {
        Path image = Volumes.make(dir, 4);
        Volume v = Volume.openOnDevice(image, Volumes.CONFIG, Volumes.FAST, PausingClose::new);
        Process child = null;
        try {
            for (int f = 0; f < 8; f++) { // changes in every group: the close has checkpoints to write
                join(v.allocator().open("f" + f));
                join(v.allocator().getBlocks("f" + f, 0, 100 + f, true));
            }
            child = start(image, "poll", "60");
            BlockingQueue<String> lines = lines(child);
            assertEquals("REFUSED", lines.poll(60, TimeUnit.SECONDS), "the open volume refuses the second process");
            v.close();
            String got = lines.poll(60, TimeUnit.SECONDS);
            assertEquals("GOT clean=true replayed=0 refusedFirst=true", got,
                    "the second process opened the volume before the close's last write");
            assertTrue(child.waitFor(60, TimeUnit.SECONDS), "the second process ends");
        } finally {
            v.abandon(); // when an assertion failed before the close; nothing once closed
            if (child != null) child.destroyForcibly();
        }
        Fsck.Result r = Fsck.check(image, false);
        assertTrue(r.clean(), r::report);
    }

    /** Closes the real device, then waits before the volume's close goes on to its last writes. */
    private static final class PausingClose implements BlockDevice {
        private final BlockDevice device;

        PausingClose(BlockDevice device) {
            this.device = device;
        }

        @Override public String kind() { return device.kind(); }
        @Override public long capacitySectors() { return device.capacitySectors(); }

        @Override
        public long perform(org.blockyard.api.io.IoOp op, long sector, int sectors, List<java.nio.ByteBuffer> payloads)
                throws IOException {
            return device.perform(op, sector, sectors, payloads);
        }

        @Override
        public void close() throws IOException {
            device.close();
            try {
                Thread.sleep(1500); // the second process polls all along
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Test
    void readOnlyLooksShareTheImageAndKeepAVolumeOut() throws Exception {
        Path image = Volumes.make(dir, 2);
        try (ImageLock first = ImageLock.shared(image); ImageLock second = ImageLock.shared(image)) {
            assertTrue(first.channel() == second.channel(), "one channel, one lock: no look closes another's");
            assertTrue(Volume.inspect(image) != null, "a third look runs beside them");
            assertTrue(Fsck.check(image, false).clean());
            assertThrows(VolumeException.InUse.class, () -> Volumes.open(image));
            assertThrows(VolumeException.InUse.class, () -> Fsck.check(image, true));
            first.close();
            assertThrows(VolumeException.InUse.class, () -> Volumes.open(image), "one look is still on");
            assertEquals(List.of("REPAIR INUSE", "OPEN INUSE"), probe(image, "once"),
                    "the look's shared lock keeps another process's repair and open out");
        }
        assertFalse(ImageLock.held(image), "the last look gave the image back");
        assertEquals(List.of("REPAIR DONE", "OPEN DONE"), probe(image, "once"));
        Volumes.open(image).close();
    }

    // ---- the second process ---------------------------------------------------------------------------

    private static Process start(Path image, String... args) throws IOException {
        List<String> all = new java.util.ArrayList<>(List.of(args[0], image.toString()));
        all.addAll(List.of(args).subList(1, args.length));
        return Volumes.child(LockProbe.class, all.toArray(String[]::new));
    }

    /** The child's lines as they come (a thread reads them; the queue never blocks the test past its poll). */
    private static BlockingQueue<String> lines(Process child) {
        BlockingQueue<String> q = new LinkedBlockingQueue<>();
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) q.add(line);
            } catch (IOException ignored) {
                // the child is gone
            }
        }, "lock-probe-output");
        t.setDaemon(true);
        t.start();
        return q;
    }

    /** Runs the child to its end and answers its lines; past 60 s it is killed, which ends them. */
    private static List<String> probe(Path image, String... args) throws Exception {
        return Volumes.lines(start(image, args));
    }
}
