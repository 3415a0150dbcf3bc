package org.blockyard.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

import org.blockyard.cli.Cli;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every command fed wrong values, as a user types them (the whole command line, in this JVM): exit code 2,
 * exactly one line on standard error naming the option and the value, nothing on standard output, and no
 * stack trace.
 */
class CommandLineErrorsTest {
    @TempDir
    static Path dir;
    static Path malformed, image;

    @BeforeAll
    static void files() throws Exception {
        malformed = Files.writeString(dir.resolve("bad.conf"), "blockyard { io {\n");
        image = Files.writeString(dir.resolve("image.img"), "not a volume");
    }

    /** Runs {@code args} as {@code ./blockyard} would, with standard output and error captured, within two minutes. */
    static Cli.Run run(String... args) {
        return Cli.run(Launcher::commandLine, Duration.ofMinutes(2), args);
    }

    /** The command line, the option the message must name, and the value it must quote. */
    static Stream<Arguments> wrongValues() {
        return Stream.of(
                wrong("--policy", "foo", "bench", "tiobench", "--policy", "reservation,foo"),
                wrong("--file-size", "0", "bench", "tiobench", "--file-size", "0"),
                wrong("--file-size", "16XB", "bench", "tiobench", "--file-size", "16XB"),
                wrong("--callers", "robots", "bench", "tiobench", "--callers", "robots"),
                wrong("--writers", "x", "bench", "tiobench", "--writers", "x"),
                wrong("--runs", "0", "bench", "tiobench", "--runs", "0"),
                wrong("--batch", "0", "bench", "tiobench", "--batch", "0"),
                wrong("--config", "missing.conf", "bench", "tiobench", "--config", "missing.conf"),
                wrong("--config", "bad.conf", "bench", "tiobench", "--config", malformed.toString()),
                wrong("--nope", "--nope", "bench", "tiobench", "--nope"),
                wrong("--fill", "1.0", "bench", "smallfiles", "--fill", "1.0"),
                wrong("--policy", "foo", "bench", "smallfiles", "--policy", "foo"),
                wrong("--blocks-per-group", "100", "bench", "smallfiles", "--blocks-per-group", "100"),
                wrong("--whole-file", "with --batch", "bench", "smallfiles", "--batch", "--whole-file"),
                wrong("--allocator", "foo", "bench", "extents", "--allocator", "foo"),
                wrong("--unit", "0", "bench", "extents", "--unit", "0"),
                wrong("--high", "1.5", "bench", "extents", "--high", "1.5"),
                wrong("--calls", "0", "bench", "introspect", "--calls", "0"),
                wrong("--volume", "1 KiB", "bench", "introspect", "--volume", "1KiB", "--policy", "reservation"),
                wrong("--policy", "foo", "bench", "introspect", "--policy", "foo"),
                wrong("--policies", "foo", "bench", "swap", "--policies", "foo"),
                wrong("--elevators", "foo", "bench", "swap", "--no-bundles", "--no-warmup", "--elevators", "foo"),
                wrong("--seconds", "0.0", "bench", "swap", "--seconds", "0"),
                wrong("--allocators", "foo", "bench", "stall", "--allocators", "foo"),
                wrong("--clients", "0", "bench", "stall", "--clients", "0"),
                wrong("--progress", "-1.0", "bench", "stall", "--calls", "10", "--progress", "-1"),
                wrong("--policy", "foo", "bench", "volume", "--policy", "foo"),
                wrong("--volume", "missing.img", "bench", "volume", "--volume", "missing.img"),
                wrong("--kills", "0", "bench", "crash", "--kills", "0"),
                wrong("--submit-bytes", "100", "bench", "merge", "--submit-bytes", "100"),
                wrong("--elevator", "foo", "bench", "merge", "--elevator", "foo"),
                wrong("--device", "disk", "bench", "dio", "--device", "disk"),
                wrong("--length", "0", "bench", "dio", "--length", "0"),
                wrong("--offset", "-1", "bench", "dio", "--offset", "-1"),
                wrong("--elevator", "foo", "bench", "streaming", "--elevator", "foo"),
                wrong("--plot", "image.img", "bench", "streaming", "--plot", image.toString()),
                wrong("--plot", "image.img", "bench", "extents", "--plot", image.resolve("plots").toString()),
                wrong("--plot", "image.img", "bench", "tiobench", "--plot", image.toString()),
                wrong("--plot", "image.img", "bench", "randomreads", "--plot", image.toString()),
                wrong("--output-format", "xml", "bench", "tiobench", "--output-format", "xml"),
                wrong("--output-format", "json", "bench", "dio", "--output-format", "json", "--json", "r.json"),
                wrong("--output-format", "table", "bench", "crash", "--json", "-", "--output-format", "table"),
                wrong("--elevator", "anticipatory", "bench", "streaming", "--elevator", "anticipatory", "--builtin-only"),
                wrong("--device", "mem", "bench", "metadata", "--device", "mem"),
                wrong("--span-percent", "0", "bench", "randomreads", "--span-percent", "0"),
                wrong("--device", "mem", "bench", "randomreads", "--device", "mem"),
                wrong("--seconds", "2147483647", "bench", "randomreads", "--seconds", "2147483647"),
                wrong("--readers", "5000", "bench", "randomreads", "--readers", "5000"),
                wrong("--all", "--elevator noop", "bench", "randomreads", "--all", "--elevator", "noop"),
                wrong("--writers", "0", "demo", "--writers", "0"),
                wrong("--file-size", "0", "demo", "--file-size", "0"),
                wrong("NAME", "foo", "scheduler", "foo"),
                wrong("--config", "missing.conf", "scheduler", "--config", "missing.conf"),
                wrong("--size", "1024", "mkfs", dir.resolve("m.img").toString(), "--size", "1KiB"),
                wrong("--size", "abc", "mkfs", dir.resolve("m.img").toString(), "--size", "abc"),
                wrong("--block-size", "1000", "mkfs", dir.resolve("m.img").toString(), "--size", "64MiB", "--block-size", "1000"),
                wrong("--block-size", "4kb", "mkfs", dir.resolve("m.img").toString(), "--size", "64MiB", "--block-size", "4kb!"),
                wrong("IMAGE", "missing.img", "filefrag", "missing.img", "file"),
                wrong("IMAGE", "missing.img", "map", "missing.img", "--png", "x.png"),
                wrong("--width", "0", "map", "x.img", "--png", "x.png", "--width", "0"),
                wrong("--config", "bad.conf", "run", "--config", malformed.toString(), "--exec", "lb"));
    }

    private static Arguments wrong(String option, String value, String... args) {
        return Arguments.of(List.of(args), option, value);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("wrongValues")
    void aWrongValueIsOneLineNamingTheOptionAndExitCodeTwo(List<String> args, String option, String value) {
        Cli.Run r = run(args.toArray(String[]::new));
        assertEquals(2, r.code(), "exit code; stderr: " + r.err());
        List<String> lines = r.err().lines().toList();
        assertEquals(1, lines.size(), "one line on standard error:\n" + r.err());
        String line = lines.get(0);
        assertTrue(line.startsWith("blockyard "), line);
        assertTrue(line.contains(option), "names " + option + ": " + line);
        assertTrue(line.contains(value), "quotes " + value + ": " + line);
        assertFalse(line.contains("Exception") || line.contains("\tat "), "no stack trace: " + line);
        assertEquals("", r.out(), "nothing on standard output");
    }

    @Test
    void debugAddsTheStackTrace() {
        Cli.Run r = run("bench", "tiobench", "--debug", "--policy", "foo");
        assertEquals(2, r.code());
        assertTrue(r.err().lines().count() > 3 && r.err().contains("\tat "), r.err());
    }

    @Test
    void everyCommandAndSubcommandPrintsItsVersion() {
        for (List<String> cmd : List.of(List.<String>of(), List.of("bench"), List.of("bench", "tiobench"), List.of("bench", "swap"),
                List.of("bench", "dio"), List.of("demo"), List.of("scheduler"), List.of("mkfs"), List.of("run"))) {
            for (String flag : List.of("-V", "--version")) {
                List<String> args = new java.util.ArrayList<>(cmd);
                args.add(flag);
                Cli.Run r = run(args.toArray(String[]::new));
                assertEquals(0, r.code(), String.join(" ", args));
                assertTrue(r.out().startsWith("Blockyard "), String.join(" ", args) + ": " + r.out());
            }
        }
    }

    @Test
    void theLinuxNamesOfTheElevatorsAreAliases() {
        Cli.Run none = run("scheduler", "none");
        assertEquals(0, none.code(), none.err());
        assertTrue(none.out().contains("none (noop) is available; nothing was changed"), none.out());
        Cli.Run mq = run("scheduler", "mq-deadline");
        assertTrue(mq.out().contains("mq-deadline (deadline) is available"), mq.out());
    }

    @Test
    void aBlockSizeIsASizeLikeAnyOther() {
        Cli.Run r = run("mkfs", dir.resolve("k.img").toString(), "--size", "64Mi", "--block-size", "4KiB",
                "--blocks-per-group", "4096", "--journal-blocks", "256", "--file-table-blocks", "64");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("16384 blocks of 4096 bytes"), r.out());
    }

    @Test
    void zeroIsAValidOffset() {
        Cli.Run r = run("bench", "dio", "--offset", "0", "--length", "64KiB");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("sector_granular_segments"), r.out());
    }
}
