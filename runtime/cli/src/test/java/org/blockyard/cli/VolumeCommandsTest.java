package org.blockyard.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import javax.imageio.ImageIO;

import org.blockyard.runtime.config.BlockyardConfig;
import org.blockyard.runtime.volume.Volume;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** mkfs, fsck, filefrag and map as a user runs them: output, exit codes, one-line errors. */
class VolumeCommandsTest {
    @TempDir
    Path dir;

    private record Run(int code, String out, String err) {}

    private Run run(String... args) {
        PrintStream saved = System.out;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        StringWriter err = new StringWriter();
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            int code = Main.commandLine().setErr(new PrintWriter(err, true)).execute(args);
            return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString());
        } finally {
            System.setOut(saved);
        }
    }

    @Test
    void mkfsSizesTheJournalWithTheVolumeUnlessAsked() throws Exception {
        String image = dir.resolve("j.img").toString();
        Run mkfs = run("mkfs", image, "--size", "512MiB");
        assertEquals(0, mkfs.code(), mkfs.err());
        // mke2fs's 16 MiB for a volume below 1 GiB: 4,096 blocks after the 1,024-block file table.
        assertTrue(mkfs.out().contains("file table: blocks 3..1026; journal: blocks 1027..5122"), mkfs.out());
        try (Volume v = Volume.open(Path.of(image), BlockyardConfig.load())) {
            v.allocator().open("data").toCompletableFuture().join();
            v.allocator().getBlocks("data", 0, 20, true).toCompletableFuture().join();
        }
        assertEquals(0, run("fsck", image).code());
        Run asked = run("mkfs", dir.resolve("k.img").toString(), "--size", "512MiB", "--journal-blocks", "256");
        assertTrue(asked.out().contains("journal: blocks 1027..1282"), asked.out());
    }

    @Test
    void mkfsFsckFilefragAndMapOnAFreshVolume() throws Exception {
        String image = dir.resolve("v.img").toString();
        Run mkfs = run("mkfs", image, "--size", "64MiB", "--blocks-per-group", "4096", "--journal-blocks", "256",
                "--file-table-blocks", "64");
        assertEquals(0, mkfs.code(), mkfs.err());
        assertTrue(mkfs.out().contains("16384 blocks of 4096 bytes (64 MiB) in 4 groups of 4096"), mkfs.out());
        assertTrue(mkfs.out().contains("superblock backups in groups: 1, 3"), mkfs.out());

        try (Volume v = Volume.open(Path.of(image), BlockyardConfig.load())) {
            v.allocator().open("data").toCompletableFuture().join();
            v.allocator().getBlocks("data", 0, 20, true).toCompletableFuture().join();
            v.allocator().getBlocks("data", 100, 5, true).toCompletableFuture().join();
        }
        Run fsck = run("fsck", image);
        assertEquals(0, fsck.code(), fsck.out());
        assertTrue(fsck.out().contains("1 files, 0 extent owners"), fsck.out());

        Run frag = run("filefrag", image, "data");
        assertEquals(0, frag.code(), frag.err());
        assertTrue(frag.out().contains(" ext:     logical_offset:        physical_offset: length:   expected: flags:"), frag.out());
        assertTrue(frag.out().matches("(?s).*\\n   1:      100\\.\\.     104: .*unwritten,last,eof\\n.*"), frag.out());
        assertTrue(frag.out().endsWith("data: 2 extents found\n"), frag.out());

        Path png = dir.resolve("map.png");
        Run map = run("map", image, "--png", png.toString(), "--width", "256");
        assertEquals(0, map.code(), map.err());
        assertEquals(256, ImageIO.read(png.toFile()).getWidth());
        assertTrue(map.out().contains("data"), map.out());
    }

    @Test
    void mkfsWithMultiMountProtectionAndItsBadOptions() throws Exception {
        String image = dir.resolve("mmp.img").toString();
        Run mkfs = run("mkfs", image, "--size", "64MiB", "--blocks-per-group", "4096", "--journal-blocks", "256",
                "--mmp", "--mmp-interval", "100");
        assertEquals(0, mkfs.code(), mkfs.err());
        assertTrue(mkfs.out().contains("multi-mount protection: block 1283, updated every 100 ms"), mkfs.out());
        Run fsck = run("fsck", image);
        assertEquals(0, fsck.code(), fsck.err() + fsck.out());
        Run alone = run("mkfs", dir.resolve("n.img").toString(), "--size", "64MiB", "--mmp-interval", "100");
        assertEquals(2, alone.code());
        assertTrue(alone.err().startsWith("blockyard mkfs: --mmp-interval"), alone.err());
        assertTrue(alone.err().contains("needs --mmp"), alone.err());
        Run zero = run("mkfs", dir.resolve("z.img").toString(), "--size", "64MiB", "--mmp", "--mmp-interval", "0");
        assertEquals(2, zero.code());
        assertEquals(1, zero.err().lines().count(), zero.err());
    }

    @Test
    void badInputIsOneLineOnStandardErrorWithExitCodeTwo() throws Exception {
        Path junk = dir.resolve("junk.img");
        Files.write(junk, new byte[8192]);
        Run notVolume = run("fsck", junk.toString());
        assertEquals(2, notVolume.code());
        assertEquals("blockyard fsck: " + junk + " is not a Blockyard volume (no superblock magic at block 0)\n",
                notVolume.err());

        Run stride = run("mkfs", dir.resolve("s.img").toString(), "--size", "256MiB", "--stride", "1", "--stripe-width", "8");
        assertEquals(2, stride.code());
        assertTrue(stride.err().startsWith("blockyard mkfs: stride and stripe are 0 (off) or more than one block"), stride.err());

        String image = dir.resolve("v.img").toString();
        assertEquals(0, run("mkfs", image, "--size", "64MiB", "--blocks-per-group", "4096", "--journal-blocks", "256",
                "--file-table-blocks", "64").code());
        Run missing = run("filefrag", image, "nope");
        assertEquals(2, missing.code());
        assertEquals(1, missing.err().lines().count(), missing.err());
        assertTrue(missing.err().contains("no file 'nope' on this volume"), missing.err());

        // mkfs over a volume: refused in one line, the volume untouched; --force makes a new one.
        byte[] volume = Files.readAllBytes(Path.of(image));
        Run again = run("mkfs", image, "--size", "64MiB", "--blocks-per-group", "4096");
        assertEquals(2, again.code());
        assertEquals(1, again.err().lines().count(), again.err());
        assertTrue(again.err().startsWith("blockyard mkfs: " + image + " already holds a Blockyard volume"),
                again.err());
        assertTrue(again.err().contains("--force"), again.err());
        assertArrayEquals(volume, Files.readAllBytes(Path.of(image)));
        Run forced = run("mkfs", image, "--size", "64MiB", "--blocks-per-group", "4096", "--force");
        assertEquals(0, forced.code(), forced.err());
        assertEquals(0, run("fsck", image).code());
    }
}
