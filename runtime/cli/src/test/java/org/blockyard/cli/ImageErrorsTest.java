package org.blockyard.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Paths that are no volume image, an image that cannot be opened, a file system that fills up: each is one line
 * on standard error, no stack trace, exit code 2 for what was refused and 8 for an I/O that failed on the way,
 * and no command waits for a FIFO's writer.
 */
class ImageErrorsTest {
    @TempDir
    Path dir;

    private record Run(int code, String out, String err) {}

    /** Runs {@code args} as {@code ./blockyard} would, within 30 s. */
    private static Run run(String... args) {
        return assertTimeoutPreemptively(Duration.ofSeconds(30), () -> run(Main.commandLine(), args),
                () -> String.join(" ", args) + " did not return within 30 s");
    }

    private static Run run(CommandLine cmd, String... args) {
        PrintStream saved = System.out;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        StringWriter err = new StringWriter();
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            int code = cmd.setErr(new PrintWriter(err, true)).execute(args);
            return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString());
        } finally {
            System.setOut(saved);
        }
    }

    private static void oneLine(Run r, int code, String line) {
        assertEquals(line + "\n", r.err(), "standard error");
        assertEquals(code, r.code(), r.err());
    }

    @Test
    void aFifoIsRefusedAtOnceByFsckFilefragMapAndMkfs() throws Exception {
        Path fifo = dir.resolve("fifo");
        Process p = new ProcessBuilder("mkfifo", fifo.toString()).inheritIO().start();
        assertTrue(p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0, "mkfifo");
        String is = fifo + " is a FIFO, not a volume image (a file or a block device)";
        oneLine(run("fsck", fifo.toString()), 2, "blockyard fsck: " + is);
        oneLine(run("fsck", "--repair", fifo.toString()), 2, "blockyard fsck: " + is);
        oneLine(run("filefrag", fifo.toString(), "f"), 2, "blockyard filefrag: " + is);
        oneLine(run("map", fifo.toString(), "--png", dir.resolve("m.png").toString()), 2, "blockyard map: " + is);
        oneLine(run("mkfs", fifo.toString(), "--size", "64MiB", "--blocks-per-group", "4096"), 2, "blockyard mkfs: " + is);
    }

    @Test
    void aDirectoryAndDevNullAreRefused() {
        Path d = dir.resolve("d");
        assertTrue(d.toFile().mkdir());
        oneLine(run("fsck", d.toString()), 2, "blockyard fsck: " + d + " is a directory, not a volume image (a file or a block device)");
        oneLine(run("filefrag", d.toString(), "f"), 2, "blockyard filefrag: " + d + " is a directory, not a volume image (a file or a block device)");
        oneLine(run("mkfs", d.toString(), "--size", "64MiB", "--blocks-per-group", "4096"), 2, "blockyard mkfs: " + d + " is a directory, not a volume image (a file or a block device)");
        Assumptions.assumeTrue(Files.exists(Path.of("/dev/null")));
        oneLine(run("fsck", "/dev/null"), 2, "blockyard fsck: /dev/null is a character device, not a volume image (a file or a block device)");
        oneLine(run("filefrag", "/dev/null", "f"), 2, "blockyard filefrag: /dev/null is a character device, not a volume image (a file or a block device)");
    }

    @Test
    void anUnreadableImageIsOneLineSayingWhy() throws Exception {
        Path image = dir.resolve("v.img");
        assertEquals(0, run("mkfs", image.toString(), "--size", "64MiB", "--blocks-per-group", "4096",
                "--journal-blocks", "256", "--file-table-blocks", "64").code());
        Files.setPosixFilePermissions(image, PosixFilePermissions.fromString("---------"));
        try {
            Assumptions.assumeFalse(Files.isReadable(image), "this user reads anything (root): nothing to refuse");
            oneLine(run("fsck", image.toString()), 2, "blockyard fsck: cannot open " + image + ": permission denied");
            oneLine(run("filefrag", image.toString(), "f"), 2, "blockyard filefrag: cannot open " + image + ": permission denied");
        } finally {
            Files.setPosixFilePermissions(image, PosixFilePermissions.fromString("rw-------"));
        }
    }

    @CommandLine.Command(name = "fill")
    static final class Fills implements Callable<Integer> {
        @Override
        public Integer call() {
            throw new UncheckedIOException("write vol.img", new IOException("No space left on device"));
        }
    }

    @Test
    void anIoErrorOnTheWayIsOneLineAndExitCodeEight() {
        Run r = run(Main.configure(new CommandLine(new Fills())));
        oneLine(r, Main.IO_ERROR, "fill: write vol.img: no space left on device");
    }

    /** mkfs on a file system with less room than the volume's metadata: a tmpfs of 512 KiB (needs root). */
    @Test
    void mkfsOnAFullFileSystemIsOneLineAndExitCodeEight() throws Exception {
        Path mnt = Files.createDirectory(dir.resolve("small"));
        Process mount = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", mnt.toString())
                .redirectErrorStream(true).start();
        boolean mounted = mount.waitFor(30, TimeUnit.SECONDS) && mount.exitValue() == 0;
        Assumptions.assumeTrue(mounted, "no tmpfs mount here (needs root): " + new String(mount.getInputStream().readAllBytes()));
        try {
            Path image = mnt.resolve("v.img");
            Run r = run("mkfs", image.toString(), "--size", "64MiB", "--blocks-per-group", "4096", "--journal-blocks",
                    "256", "--file-table-blocks", "64");
            assertEquals(Main.IO_ERROR, r.code(), r.err());
            assertEquals(1, r.err().lines().count(), r.err());
            assertTrue(r.err().startsWith("blockyard mkfs: ") && r.err().contains(image + ": no space left on device"), r.err());
            assertFalse(r.err().contains("internal error"), r.err());
            assertFalse(r.out().contains("Made a Blockyard volume"), r.out());
        } finally {
            Process umount = new ProcessBuilder("umount", mnt.toString()).inheritIO().start();
            umount.waitFor(30, TimeUnit.SECONDS);
        }
    }
}
