package org.blockyard.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** A size refused is quoted as the user wrote it ({@code '4GiB'}, not {@code '4294967296'}), by the job runner and every bench. */
class SizesAsWrittenTest {
    @TempDir
    static Path dir;

    static Stream<Arguments> refusedSizes() {
        return Stream.of(
                sizes("--size '4GiB'", "4294967296", "bench", "run", "--rw=read", "--size=4GiB"),
                sizes("--volume_size '64TiB'", "70368744177664", "bench", "run", "--ioengine=extents", "--size=64k", "--volume_size=64TiB"),
                sizes("--file-size '100k'", "102400", "bench", "swap", "--file-size", "100k"),
                sizes("--file-size '0k'", null, "bench", "tiobench", "--file-size", "0k"),
                sizes("--file-size '0KiB'", null, "demo", "--file-size", "0KiB"),
                sizes("--unit '3000'", null, "bench", "extents", "--unit", "4k,3000"),
                sizes("--volume-size '64MiB'", "67108864", "bench", "crash", "--volume-size", "64MiB"),
                sizes("--volume '1KiB'", null, "bench", "introspect", "--volume", "64GiB,1KiB", "--policy", "reservation"),
                sizes("--size '3GiB'", "3221225472", "bench", "merge", "--size", "3GiB"),
                sizes("--submit-bytes '1000b'", null, "bench", "merge", "--submit-bytes", "1000b"),
                sizes("--sample-size '1MiB'", "1048576", "bench", "replay", "--make-sample", dir.resolve("s").toString(),
                        "--sample-size", "1MiB"),
                sizes("--size '1KiB'", null, "mkfs", dir.resolve("m.img").toString(), "--size", "1KiB"),
                sizes("--block-size '3k'", "3072", "mkfs", dir.resolve("m.img").toString(), "--size", "64MiB", "--block-size", "3k"));
    }

    private static Arguments sizes(String quoted, String notBytes, String... args) {
        return Arguments.of(List.of(args), quoted, notBytes);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refusedSizes")
    void aRefusedSizeIsQuotedAsWritten(List<String> args, String quoted, String notBytes) {
        String line = Cli.refused(Cli.run(args.toArray(String[]::new)), Main.USAGE, quoted);
        if (notBytes != null) assertFalse(line.contains("'" + notBytes + "'"), "not quoted in bytes: " + line);
    }

    /** The simulated disk: its size in the message, in the words of docs/jobs.md; device_size does not apply to it. */
    @Test
    void theSimulatedDisksSizeIsItsOwn() throws IOException {
        Path file = Files.writeString(dir.resolve("big.conf"), "global { device = sim }\njobs = [ { name = a, size = 4GiB } ]\n");
        Cli.refused(Cli.run("bench", "run", file.toString()), Main.USAGE, "big.conf:2: a.size '4GiB'",
                "beyond the end of the sim device: 2,019,578,880 bytes (3,944,490 sectors, blockyard.io.disk.capacity-sectors)");
        Cli.refused(Cli.run("bench", "run", "--rw=read", "--size=4k", "--device_size=8GiB"), Main.USAGE,
                "--device_size '8GiB'", "the simulated disk's size is fixed");
        Path mem = Files.writeString(dir.resolve("mem.conf"), """
                global { device = mem, device_size = 64MiB, device_size = 1MiB }
                jobs = [ { name = a, size = 4k } ]
                """);
        Cli.refused(Cli.run("bench", "run", mem.toString(), "--size=2MiB"), Main.USAGE, "--size '2MiB'",
                "beyond the end of the mem device: 1MiB (device_size)");
        // --device=sim over a file's mem device: the file's device_size is left unused, not an error.
        Cli.Run sim = Cli.run("bench", "run", mem.toString(), "--device=sim", "--quiet", "--json", dir.resolve("r.json").toString());
        assertEquals(0, sim.code(), sim.err());
    }
}
