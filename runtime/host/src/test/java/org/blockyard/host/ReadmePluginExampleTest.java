package org.blockyard.host;

import static org.blockyard.host.HostFixture.await;
import static org.blockyard.host.HostFixture.drop;
import static org.blockyard.host.HostFixture.pluginBundle;
import static org.blockyard.host.HostFixture.shell;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.blockyard.api.io.IoRequest;

/**
 * The README's "Writing a plugin" example, as written: its Java block is compiled against the API, packed as a
 * bundle with the component the example declares, dropped into a running host's deploy folder, selected by
 * name, and runs I/O.
 */
class ReadmePluginExampleTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path tmp;

    private Host host;

    @AfterEach
    void closeHost() throws InterruptedException {
        if (host != null) host.close();
        HostFixture.assertNoThreadsLeft();
    }

    /** The first Java block after the heading "### Writing a plugin". */
    private static String example() throws Exception {
        String readme = Files.readString(Path.of("..", "..", "README.md"));
        int at = readme.indexOf("### Writing a plugin");
        assertTrue(at >= 0, "the README has a 'Writing a plugin' section");
        Matcher m = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL).matcher(readme);
        assertTrue(m.find(at), "the section has a Java example");
        return m.group(1);
    }

    @Test
    void theReadmePluginExampleCompilesRunsAsABundleAndServesIo() throws Exception {
        String source = example();
        Matcher pkg = Pattern.compile("package ([\\w.]+);").matcher(source);
        Matcher cls = Pattern.compile("public final class (\\w+)").matcher(source);
        assertTrue(pkg.find() && cls.find(), "the example names its package and class");
        String component = pkg.group(1) + "." + cls.group(1);
        Path src = tmp.resolve("src").resolve(component.replace('.', '/') + ".java");
        Files.createDirectories(src.getParent());
        Files.writeString(src, source);
        Path classes = Files.createDirectories(tmp.resolve("classes"));

        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();
        int rc = javac.run(null, null, diagnostics, "-d", classes.toString(), "-classpath",
                System.getProperty("java.class.path"), src.toString());
        assertEquals(0, rc, "the README example compiles: " + diagnostics.toString(StandardCharsets.UTF_8));

        host = HostFixture.start(tmp, tmp.resolve("no-plugins"), null);
        drop(pluginBundle(tmp.resolve("lifo.jar"), classes, component, "org.blockyard.api.io.ElevatorFactory",
                        "blockyard.elevator.id", "lifo",
                        "org.blockyard.api.io;version=\"[0.3,1)\",org.blockyard.api.plugin;version=\"[0.1,1)\""),
                tmp.resolve("deploy"), "lifo.jar");
        await("lifo in the listing", WAIT, () -> schedulers().equals("noop [deadline] lifo"));
        assertEquals("noop deadline [lifo]", shell(host, "blockyard:scheduler lifo").lines().findFirst().orElseThrow());

        Map<Long, Integer> completions = new ConcurrentHashMap<>();
        List<CompletableFuture<?>> all = new ArrayList<>();
        List<IoRequest> batch = new ArrayList<>();
        for (long id = 1; id <= 256; id++)
            batch.add(IoRequest.write(id, (id * 7919 % 10_000) * 8, 8, 1).withPayload(ByteBuffer.allocate(4096)));
        int k = 0;
        for (var stage : host.store().queue().submitAll(batch)) {
            long rid = batch.get(k++).id();
            all.add(stage.toCompletableFuture().thenRun(() -> completions.merge(rid, 1, Integer::sum)));
        }
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        assertEquals(256, completions.size(), "every request through the example elevator completed");
        assertTrue(completions.values().stream().allMatch(n -> n == 1));
        assertEquals("noop deadline [lifo]", schedulers(), "the example elevator still runs");
        assertTrue(shell(host, "blockyard:tunables lifo").contains("max_held"), "its tunable is listed");
    }

    private String schedulers() {
        return HostFixture.shellQuietly(host, "blockyard:scheduler").lines().findFirst().orElse("").trim();
    }
}
