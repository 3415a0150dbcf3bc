package org.blockyard.runtime.volume;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What is not an image is refused before it is opened, by every entry that opens one, within a deadline (a
 * FIFO's open blocks until a writer comes): a FIFO, a directory, a character device; an image that cannot be
 * opened is one line naming it and why.
 */
class ImageKindTest {
    @TempDir
    Path dir;

    /** Every entry that opens an image, by name. */
    private static Map<String, Consumer<Path>> entries() {
        Map<String, Consumer<Path>> m = new LinkedHashMap<>();
        m.put("open", p -> Volumes.open(p).close());
        m.put("fsck", p -> Fsck.check(p, false));
        m.put("fsck --repair", p -> Fsck.check(p, true));
        m.put("inspect", Volume::inspect);
        m.put("journalTransactions", Volume::journalTransactions);
        m.put("mkfs", p -> Volume.mkfs(p, Volumes.layout(2), true));
        return m;
    }

    /** What {@code call} threw on {@code image}, within 10 s; a call that hangs fails the test. */
    private static Throwable thrownWithin(String what, Path image, Consumer<Path> call) throws Exception {
        CompletableFuture<Throwable> f = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                call.accept(image);
                f.complete(null);
            } catch (Throwable e) {
                f.complete(e);
            }
        }, "image-kind-" + what);
        t.setDaemon(true);
        t.start();
        try {
            Throwable e = f.get(10, TimeUnit.SECONDS);
            if (e == null) fail(what + " of " + image + " succeeded");
            return e;
        } catch (TimeoutException e) {
            if (Files.exists(image) && !Files.isDirectory(image)) // a FIFO's reader waits for a writer: give it one
                new ProcessBuilder("timeout", "5", "sh", "-c", "exec 3>\"$0\"", image.toString()).start();
            return fail(what + " of " + image + " did not return within 10 s");
        } catch (ExecutionException e) {
            throw new AssertionError(e);
        }
    }

    /** Each entry refused with NotAnImage, its message naming the image and its kind (all reported at once). */
    private static void refusedAs(String kind, Path image) {
        assertAll(entries().entrySet().stream().map(e -> () -> {
            Throwable t = thrownWithin(e.getKey(), image, e.getValue());
            assertInstanceOf(VolumeException.NotAnImage.class, t, e.getKey() + ": " + t);
            assertEquals(image + " is " + kind + ", not a volume image (a file or a block device)", t.getMessage(),
                    e.getKey());
        }));
    }

    @Test
    void aFifoIsRefusedWithoutWaitingForAWriter() throws Exception {
        Path fifo = dir.resolve("fifo");
        Process p = new ProcessBuilder("mkfifo", fifo.toString()).inheritIO().start();
        assertTrue(p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0, "mkfifo");
        refusedAs("a FIFO", fifo);
    }

    @Test
    void aDirectoryIsRefused() throws Exception {
        Path d = Files.createDirectory(dir.resolve("d"));
        refusedAs("a directory", d);
        try (var list = Files.list(d)) {
            assertEquals(0, list.count(), "mkfs made nothing in it");
        }
    }

    @Test
    void aCharacterDeviceIsRefused() throws Exception {
        Path devNull = Path.of("/dev/null");
        Assumptions.assumeTrue(Files.exists(devNull), "no /dev/null here");
        refusedAs("a character device", devNull);
    }

    @Test
    void anImageThatCannotBeReadIsOneLineNamingIt() throws Exception {
        Path image = Volumes.make(dir, 2);
        Files.setPosixFilePermissions(image, PosixFilePermissions.fromString("---------"));
        try {
            Assumptions.assumeFalse(Files.isReadable(image), "this user reads anything (root): nothing to refuse");
            for (Map.Entry<String, Consumer<Path>> e : entries().entrySet()) {
                Throwable t = thrownWithin(e.getKey(), image, e.getValue());
                assertInstanceOf(VolumeException.CannotOpen.class, t, e.getKey() + ": " + t);
                assertEquals("cannot open " + image + ": permission denied", t.getMessage(), e.getKey());
            }
            assertFalse(ImageLock.held(image), "no hold left behind");
        } finally {
            Files.setPosixFilePermissions(image, PosixFilePermissions.fromString("rw-------"));
        }
    }

    @Test
    void aMissingImageIsNamed() throws Exception {
        Path missing = dir.resolve("missing.img");
        entries().forEach((what, call) -> {
            if (what.equals("mkfs")) return; // mkfs makes it
            try {
                Throwable t = thrownWithin(what, missing, call);
                assertInstanceOf(IllegalArgumentException.class, t, what + ": " + t);
                assertEquals("no such image: " + missing, t.getMessage(), what);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        assertFalse(Files.exists(missing), "nothing made it");
    }
}
