package org.blockyard.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import org.blockyard.cli.Usage;
import org.junit.jupiter.api.Test;

/**
 * The README's usage block is the commands' own synopses ({@link Usage}). When a command changes, run this
 * test with {@code -Dreadme.update=true} to write the new block into the README, and read the diff.
 */
class ReadmeUsageTest {
    static final String START = "<!-- usage: generated from the commands' help by ReadmeUsageTest -->\n```\n";
    static final String END = "```\n";

    @Test
    void theReadmeUsageBlockIsTheCommandsSynopses() throws Exception {
        Path readme = Path.of("../../README.md");
        String text = Files.readString(readme);
        int from = text.indexOf(START);
        assertTrue(from >= 0, "the README has a usage block starting with " + START);
        from += START.length();
        int to = text.indexOf(END, from);
        String expected = Usage.synopses(Launcher.commandLine());
        if (Boolean.getBoolean("readme.update")) {
            Files.writeString(readme, text.substring(0, from) + expected + text.substring(to));
            return;
        }
        assertEquals(expected, text.substring(from, to),
                "README usage differs from the commands' help; rerun this test with -Dreadme.update=true");
    }
}
