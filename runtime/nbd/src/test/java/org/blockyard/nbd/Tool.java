package org.blockyard.nbd;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A real client run as a child process with a deadline; a test that needs an absent tool is skipped. */
final class Tool {
    record Result(int exit, String out) {
        @Override
        public String toString() {
            return "exit " + exit + ":\n" + out;
        }
    }

    private Tool() {}

    /** Skips the test unless {@code name} is on the PATH; with {@code CI} set (where .ci/run installs it), fails. */
    static void assumeInstalled(String name) {
        boolean found = false;
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, name))) found = true;
        if (!found && System.getenv("CI") != null)
            throw new AssertionError(name + " is not installed, and CI is set: .ci/run installs it");
        assumeTrue(found, name + " is not installed");
    }

    /** Runs {@code command}, standard error merged into the output, killed after {@code seconds}. */
    static Result run(long seconds, List<String> command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        p.getOutputStream().close();
        StringBuilder out = new StringBuilder();
        Thread pump = new Thread(() -> {
            try {
                out.append(new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
            } catch (IOException ignored) {
                // the process died; what was read is kept
            }
        });
        pump.start();
        if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
            pump.join(10_000);
            throw new AssertionError(String.join(" ", command) + " did not end within " + seconds + " s:\n" + out);
        }
        pump.join(10_000);
        return new Result(p.exitValue(), out.toString());
    }

    static Result run(long seconds, String... command) throws IOException, InterruptedException {
        return run(seconds, List.of(command));
    }
}
