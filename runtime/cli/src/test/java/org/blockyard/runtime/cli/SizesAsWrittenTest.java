package org.blockyard.runtime.cli;

import static org.junit.jupiter.api.Assertions.assertFalse;

import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** A size refused is quoted as the user wrote it ({@code '3GiB'}, not {@code '3221225472'}), by every bench. */
class SizesAsWrittenTest {
    @TempDir
    static Path dir;

    static Stream<Arguments> refusedSizes() {
        return Stream.of(
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
}
