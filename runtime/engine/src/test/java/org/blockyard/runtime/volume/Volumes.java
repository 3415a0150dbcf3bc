package org.blockyard.runtime.volume;

import java.nio.file.Path;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

import com.typesafe.config.Config;

import org.blockyard.runtime.config.BlockyardConfig;

/** Small volumes for tests: 4 KiB blocks, groups of 4096 blocks. */
final class Volumes {
    private Volumes() {}

    static final Config CONFIG = BlockyardConfig.load();
    static final Journal.Settings FAST = new Journal.Settings(0, 256, 0.5);

    static Layout layout(int groups) {
        return Layout.make(4096, 4096L * groups, 4096, 64, 256, 0, 0);
    }

    static Path make(Path dir, int groups) {
        Path image = dir.resolve("vol.img");
        Volume.mkfs(image, layout(groups));
        return image;
    }

    static Volume open(Path image) {
        return Volume.open(image, CONFIG, FAST);
    }

    static <T> T join(CompletionStage<T> s) {
        try {
            return s.toCompletableFuture().get(30, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) throw r;
            throw new IllegalStateException(e.getCause());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** The refusal {@code s} fails with, waited for at most 30 s; an assertion error when it answers a value. */
    static org.blockyard.api.alloc.AllocationException refusal(CompletionStage<?> s) {
        try {
            Object v = s.toCompletableFuture().get(30, TimeUnit.SECONDS);
            throw new AssertionError("answered " + v + " instead of a refusal");
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof org.blockyard.api.alloc.AllocationException x) return x;
            throw new AssertionError("failed with " + e.getCause(), e.getCause());
        } catch (InterruptedException | java.util.concurrent.TimeoutException e) {
            throw new AssertionError(e);
        }
    }

    /** A child JVM on this test class path running {@code main} with {@code args}; its standard error dropped. */
    static Process child(Class<?> main, String... args) throws java.io.IOException {
        String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        java.util.List<String> cmd = new java.util.ArrayList<>(java.util.List.of(javaBin, "-cp",
                System.getProperty("java.class.path"), main.getName()));
        cmd.addAll(java.util.List.of(args));
        return new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    }

    /** The child's lines to its end; past 60 s it is killed, which ends them, and the test fails. */
    static java.util.List<String> lines(Process child) throws Exception {
        java.util.concurrent.CompletableFuture.delayedExecutor(60, TimeUnit.SECONDS).execute(child::destroyForcibly);
        try (java.io.BufferedReader r = new java.io.BufferedReader(new java.io.InputStreamReader(child.getInputStream(),
                java.nio.charset.StandardCharsets.UTF_8))) {
            java.util.List<String> out = r.lines().toList();
            org.junit.jupiter.api.Assertions.assertTrue(child.waitFor(60, TimeUnit.SECONDS), "the child process ends");
            return out;
        } finally {
            child.destroyForcibly();
        }
    }
}
