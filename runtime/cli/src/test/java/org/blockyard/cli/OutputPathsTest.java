package org.blockyard.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every command that writes something (an image, a picture, JSON, a trace, plots, a sample) pointed at a path it
 * cannot write, and the offsets and durations that cannot be: one line saying what is wrong and exit code 2,
 * before anything runs. A full file system under an output is one line naming the path and "no space left on
 * device", exit code 8 (an I/O that failed, not a wrong value), and leaves no partial file.
 */
class OutputPathsTest {
    @TempDir
    static Path dir;
    static Path image, folder, file, missing;

    @BeforeAll
    static void files() throws IOException {
        image = dir.resolve("v.img");
        Cli.Run mkfs = Cli.run("mkfs", image.toString(), "--size", "64MiB", "--blocks-per-group", "4096", "--journal-blocks",
                "256", "--file-table-blocks", "64");
        assertEquals(0, mkfs.code(), mkfs.err());
        folder = Files.createDirectory(dir.resolve("folder"));
        file = Files.writeString(dir.resolve("plain.txt"), "a file");
        missing = dir.resolve("missing");
    }

    private static final String[] JOB = {"bench", "run", "--rw=read", "--size=4k"};
    private static final String[] MKFS = {"--size", "64MiB", "--blocks-per-group", "4096"};

    static Stream<Arguments> wrongPaths() {
        String png = image.toString();
        return Stream.of(
                wrong(List.of("--png", "no such directory: " + missing), "map", png, "--png", missing.resolve("x.png")),
                wrong(List.of("--png '" + folder + "'", "is a directory"), "map", png, "--png", folder),
                wrong(List.of("--png", "not a directory: " + file), "map", png, "--png", file.resolve("x.png")),
                wrong(List.of("--json", "no such directory: " + missing), "bench", "dio", "--json", missing.resolve("r.json")),
                wrong(List.of("--json '" + folder + "'", "is a directory"), "bench", "dio", "--json", folder),
                wrong(List.of("--json", "is a directory"), "bench", "swap", "--seconds", "1", "--json", folder),
                wrong(List.of("--json", "is a directory"), "bench", "tiobench", "--json", folder),
                wrong(List.of("--trace '" + folder + "'", "is a directory"), "bench", "dio", "--trace", folder),
                wrong(List.of("--trace", "no such directory"), "bench", "merge", "--trace", missing.resolve("t.blktrace")),
                wrong(List.of("--json", "is a directory"), job("--json", folder)),
                wrong(List.of("--trace", "no such directory"), job("--trace", missing.resolve("t"))),
                wrong(List.of("--filename", "is a directory"), job("--device=file", "--filename=" + folder, "--device_size=1MiB")),
                wrong(List.of("--filename", "no such directory"), job("--device=file", "--filename=" + missing.resolve("f.img"),
                        "--device_size=1MiB")),
                wrong(List.of("--plot '" + file + "'", "is a file"), "bench", "streaming", "--seconds", "1", "--plot", file),
                wrong(List.of("--plot", "cannot be made a directory"), "bench", "randomreads", "--seconds", "1", "--plot",
                        file.resolve("plots")),
                wrong(List.of("--make-sample", "cannot be made a directory"), "bench", "replay", "--make-sample", file.resolve("s")),
                wrong(List.of("cannot open " + missing.resolve("v.img"), "no such file or directory"),
                        mkfs(missing.resolve("v.img"))),
                // Offsets and lengths beyond the device, a negative offset, a duration that cannot be held.
                wrong(List.of("--offset '100GiB'", "beyond the end of the sim device"), "bench", "dio", "--offset", "100GiB"),
                wrong(List.of("--offset", "'-1'"), "bench", "dio", "--offset", "-1"),
                wrong(List.of("--length '1MiB'", "runs past the end of the sim device"), "bench", "dio", "--offset", "2019578368",
                        "--length", "1MiB"),
                wrong(List.of("--offset '4GiB'", "beyond the end of the sim device"), job("--offset=4GiB")),
                wrong(List.of("--offset '-4k'"), job("--offset=-4k")),
                wrong(List.of("--offset_increment '1GiB'", "beyond the end of the sim device"), job("--numjobs=4",
                        "--offset_increment=1GiB")),
                wrong(List.of("--seconds '2147483647'", "from 1 to 3600"), "bench", "streaming", "--seconds", "2147483647"));
    }

    private static Object[] job(Object... more) {
        List<Object> a = new ArrayList<>(List.of((Object[]) JOB));
        a.addAll(List.of(more));
        return a.toArray();
    }

    private static Object[] mkfs(Path at) {
        List<Object> a = new ArrayList<>(List.of("mkfs", at));
        a.addAll(List.of((Object[]) MKFS));
        return a.toArray();
    }

    private static Arguments wrong(List<String> parts, Object... args) {
        return Arguments.of(Stream.of(args).map(String::valueOf).toList(), parts);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("wrongPaths")
    void aPathOrOffsetThatCannotBeIsOneLineAndExitCodeTwo(List<String> args, List<String> parts) {
        Cli.Run r = Cli.run(args.toArray(String[]::new));
        Cli.refused(r, Main.USAGE, parts.toArray(String[]::new));
        assertEquals("", r.out(), "refused before anything ran: nothing on standard output");
    }

    @Test
    void aDirectoryNamedAsThePictureIsLeftAsItWas() throws IOException {
        Path d = Files.createDirectory(dir.resolve("keep"));
        Cli.refused(Cli.run("map", image.toString(), "--png", d.toString()), Main.USAGE, "is a directory");
        assertTrue(Files.isDirectory(d), "ImageIO deletes what is at its path before writing: not here");
    }

    /** /sys and /proc take no new files, whoever asks (root too). */
    @Test
    void aPseudoFileSystemIsRefusedWithTheSystemsReason() {
        Assumptions.assumeTrue(Files.isDirectory(Path.of("/sys/kernel")) && Files.isDirectory(Path.of("/proc/self")),
                "no /sys and /proc here");
        Cli.refused(Cli.run("map", image.toString(), "--png", "/sys/x.png"), Main.USAGE, "--png '/sys/x.png': cannot be written");
        Cli.refused(Cli.run("map", image.toString(), "--png", "/proc/x.png"), Main.USAGE, "--png '/proc/x.png': cannot be written");
        Cli.refused(Cli.run("bench", "dio", "--json", "/sys/r.json"), Main.USAGE, "--json '/sys/r.json': cannot be written");
        Cli.refused(Cli.run("bench", "dio", "--trace", "/sys/t"), Main.USAGE, "--trace '/sys/t': cannot be written");
        Cli.refused(Cli.run(JOB[0], JOB[1], JOB[2], JOB[3], "--json", "/proc/r.json"), Main.USAGE, "--json '/proc/r.json'");
        Cli.refused(Cli.run("bench", "extents", "--plot", "/sys/plots"), Main.USAGE, "--plot '/sys/plots': cannot be made a directory");
        Cli.refused(Cli.run(mkfsArgs(Path.of("/sys/v.img"))), Main.USAGE, "cannot open /sys/v.img");
    }

    private static String[] mkfsArgs(Path at) {
        return Stream.of(mkfs(at)).map(String::valueOf).toArray(String[]::new);
    }

    /** /dev/full: every write fails with ENOSPC, as on a full file system (and the node must stay as it is). */
    @Test
    void aFullDeviceUnderAnOutputIsOneLineNamingItAndExitCodeEight() {
        Path full = Path.of("/dev/full");
        Assumptions.assumeTrue(Files.exists(full) && !Files.isRegularFile(full), "no /dev/full here");
        String why = "/dev/full: no space left on device";
        // Not map --png: ImageIO, which map used to hand the path to, deletes what is there first, a device node too.
        Cli.refused(Cli.run("bench", "dio", "--json", full.toString()), Main.IO_ERROR, why);
        Cli.refused(Cli.run(JOB[0], JOB[1], JOB[2], JOB[3], "--quiet", "--json", full.toString()), Main.IO_ERROR, why);
        Cli.refused(Cli.run("bench", "dio", "--trace", full.toString()), Main.IO_ERROR, why);
        assertFalse(Files.isRegularFile(full), "/dev/full is still the device");
    }

    /** A tmpfs filled to the last byte (mounting needs root): real files, which a failed write must not leave behind. */
    @Test
    void aFullFileSystemLeavesNoPartialOutput() throws Exception {
        Path mnt = Files.createDirectory(dir.resolve("small"));
        Process mount = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", mnt.toString())
                .redirectErrorStream(true).start();
        boolean mounted = mount.waitFor(30, TimeUnit.SECONDS) && mount.exitValue() == 0;
        Assumptions.assumeTrue(mounted, "no tmpfs mount here (needs root): " + new String(mount.getInputStream().readAllBytes()));
        try {
            try (OutputStream fill = Files.newOutputStream(mnt.resolve("fill"))) {
                byte[] block = new byte[4096];
                for (int i = 0; i < 1024; i++) fill.write(block); // 4 MiB into 256 KiB: ENOSPC on the way
            } catch (IOException expected) {
                // full
            }
            Path json = mnt.resolve("r.json"), png = mnt.resolve("m.png"), plots = mnt.resolve("plots");
            Cli.refused(Cli.run("bench", "dio", "--json", json.toString()), Main.IO_ERROR, json + ": no space left on device");
            assertFalse(Files.exists(json), "no partial JSON");
            Cli.refused(Cli.run("map", image.toString(), "--png", png.toString()), Main.IO_ERROR, png + ": no space left on device");
            assertFalse(Files.exists(png), "no partial picture");
            Cli.refused(Cli.run("bench", "streaming", "--seconds", "1", "--plot", plots.toString()), Main.IO_ERROR,
                    plots.toString(), "no space left on device");
            try (Stream<Path> left = Files.list(plots)) {
                assertEquals(List.of(), left.toList(), "no partial plot");
            }
        } finally {
            Process umount = new ProcessBuilder("umount", mnt.toString()).inheritIO().start();
            umount.waitFor(30, TimeUnit.SECONDS);
        }
    }
}
