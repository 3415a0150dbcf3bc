package org.blockyard.host;

import static org.blockyard.host.HostFixture.await;
import static org.blockyard.host.HostFixture.drop;
import static org.blockyard.host.HostFixture.rewrite;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarInputStream;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.felix.service.command.CommandSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.osgi.framework.Bundle;

/**
 * What a plugin author does, end to end: {@code mvn archetype:generate} makes an elevator and a policy plugin
 * out of the tree, each with a version of its own; {@code mvn verify} builds them against this reactor's
 * artifacts (the API and the testkit by their version range: a plugin at 1.0.0 must not ask for API 1.0.0)
 * and runs their contract tests; the jars go into a real host's deploy folder, are selected, and carry a
 * {@code blockyard:bench} run started from the shell while each is updated and then uninstalled under it.
 * Nothing is lost (every submission answered), each plugin is selected again after its update, and the run
 * leaves the volume as it found it.
 *
 * <p>The Maven builds run with the Maven of this build, on a repository of their own that
 * {@code invoker:install} filled with this reactor's artifacts, mirroring this build's local repository for
 * everything else: no network. Each has a deadline; so has every wait.
 */
@Timeout(value = 15, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ArchetypePluginIT {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final Duration GENERATE = Duration.ofMinutes(3), BUILD = Duration.ofMinutes(8);

    @TempDir
    Path tmp;

    private Host host;
    private CommandSession session;
    private final ByteArrayOutputStream console = new ByteArrayOutputStream();

    @AfterEach
    void closeHost() throws InterruptedException {
        if (session != null) session.close();
        if (host != null) host.close();
        HostFixture.assertNoThreadsLeft();
    }

    private static String property(String key) {
        String v = System.getProperty(key);
        assumeTrue(v != null && !v.isBlank(), key + " is set by the host module's failsafe configuration");
        return v;
    }

    /** Runs Maven in {@code dir} with {@code args}, on the test's repository; fails with its log's end past {@code limit}. */
    private void maven(Path dir, Duration limit, String... args) throws Exception {
        Path home = Path.of(property("blockyard.it.maven"));
        Path mvn = home.resolve("bin").resolve(System.getProperty("os.name").startsWith("Windows") ? "mvn.cmd" : "mvn");
        Path settings = tmp.resolve("settings.xml");
        if (!Files.exists(settings))
            Files.writeString(settings, """
                    <settings>
                      <mirrors>
                        <mirror><id>outer-build</id><mirrorOf>*</mirrorOf><url>%s</url></mirror>
                      </mirrors>
                    </settings>
                    """.formatted(Path.of(property("blockyard.it.mirror")).toUri()));
        List<String> command = new ArrayList<>(List.of(mvn.toString(), "-B", "--no-transfer-progress", "-s",
                settings.toString(), "-Dmaven.repo.local=" + Path.of(property("blockyard.it.repo")).toAbsolutePath()));
        command.addAll(List.of(args));
        Path log = Files.createTempFile(tmp, "mvn", ".log");
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile()).start();
        if (!p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            p.waitFor(30, TimeUnit.SECONDS);
            throw new AssertionError("mvn " + String.join(" ", args) + " ran past " + limit.toMinutes() + " min:\n" + tail(log));
        }
        assertEquals(0, p.exitValue(), () -> "mvn " + String.join(" ", args) + " failed:\n" + tail(log));
    }

    private static String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 60), lines.size()));
        } catch (IOException e) {
            return "(the log " + log + " cannot be read: " + e + ")";
        }
    }

    private void generate(String artifactId, String version, String... properties) throws Exception {
        List<String> args = new ArrayList<>(List.of("org.apache.maven.plugins:maven-archetype-plugin:"
                + property("blockyard.it.archetype-plugin") + ":generate", "-DarchetypeGroupId=org.blockyard",
                "-DarchetypeArtifactId=org.blockyard.archetype.plugin", "-DarchetypeVersion=" + property("blockyard.it.version"),
                "-DgroupId=org.example", "-DartifactId=" + artifactId, "-Dversion=" + version));
        for (String p : properties) args.add("-D" + p);
        maven(tmp, GENERATE, args.toArray(String[]::new));
    }

    private static Path jar(Path module) throws IOException {
        try (var s = Files.list(module.resolve("target"))) {
            return s.filter(p -> p.getFileName().toString().endsWith(".jar")).findFirst().orElseThrow();
        }
    }

    private static String manifest(Path jar, String header) throws IOException {
        try (InputStream in = Files.newInputStream(jar); JarInputStream j = new JarInputStream(in)) {
            return j.getManifest().getMainAttributes().getValue(header);
        }
    }

    private static int testsRun(Path module) throws IOException {
        int tests = 0;
        try (var s = Files.list(module.resolve("target/surefire-reports"))) {
            for (Path r : s.filter(p -> p.getFileName().toString().endsWith(".xml")).toList()) {
                Matcher m = Pattern.compile("<testsuite[^>]* tests=\"(\\d+)\"[^>]* failures=\"0\"").matcher(Files.readString(r));
                if (m.find()) tests += Integer.parseInt(m.group(1));
            }
        }
        return tests;
    }

    private Bundle bundle(String symbolicName) {
        for (Bundle b : host.framework().getBundleContext().getBundles())
            if (symbolicName.equals(b.getSymbolicName())) return b;
        return null;
    }

    private String scheduler() {
        return HostFixture.shellQuietly(host, "blockyard:scheduler").trim();
    }

    private String policy() {
        return HostFixture.shellQuietly(host, "blockyard:policy").trim();
    }

    private String all() {
        return console.toString(StandardCharsets.UTF_8);
    }

    /** Submissions the running bench has sent, as blockyard:stats shows them. */
    private long sent() {
        String stats = HostFixture.shellQuietly(host, "blockyard:stats");
        Matcher m = Pattern.compile("bench: .*submissions: ([0-9,]+) sent").matcher(stats);
        assertTrue(m.find(), stats);
        return Long.parseLong(m.group(1).replace(",", ""));
    }

    private void moreSubmissions(String what) throws InterruptedException {
        long now = sent();
        await(what, WAIT, () -> sent() > now + 200);
    }

    @Test
    void aGeneratedElevatorAndPolicyBuildOutOfTheTreeAndRunInAHostUnderLoadThroughAnUpdateAndAnUninstall() throws Exception {
        // Generate: an elevator at 1.0.0, a policy at 2.3.0 (versions of their own, far from Blockyard's).
        // The elevator's classes are named by default (ArrivalElevator...), the policy's as given.
        generate("org.example.plugin.arrival", "1.0.0", "pluginId=arrival");
        generate("org.example.plugin.fixedwindow", "2.3.0", "kind=policy", "pluginId=fixed-window", "className=FixedWindowPolicy");
        Path elevator = tmp.resolve("org.example.plugin.arrival"), policy = tmp.resolve("org.example.plugin.fixedwindow");
        String pom = Files.readString(elevator.resolve("pom.xml"));
        assertTrue(!pom.contains("<parent>") && pom.contains("<version>${blockyard.version}</version>")
                && pom.contains("<blockyard.version>[" + property("blockyard.it.version") + ","), pom);

        // Build both in one reactor: compile against the API, run the testkit's contract suites, make bundles.
        Files.writeString(tmp.resolve("pom.xml"), """
                <project xmlns="http://maven.apache.org/POM/4.0.0">
                  <modelVersion>4.0.0</modelVersion>
                  <groupId>org.example</groupId><artifactId>plugins</artifactId><version>1</version>
                  <packaging>pom</packaging>
                  <modules><module>org.example.plugin.arrival</module><module>org.example.plugin.fixedwindow</module></modules>
                </project>
                """);
        maven(tmp, BUILD, "verify");
        assertEquals(9, testsRun(elevator), "the elevator contract's tests ran and passed");
        assertEquals(4, testsRun(policy), "the policy contract's tests ran and passed, with the defaults and windows off");
        Path elevatorJar = jar(elevator), policyJar = jar(policy);
        assertEquals("org.example.plugin.arrival", manifest(elevatorJar, "Bundle-SymbolicName"));
        assertTrue(manifest(elevatorJar, "Service-Component").contains("org.example.plugin.arrival.ArrivalElevatorFactory"));
        assertEquals("1.0.0", manifest(elevatorJar, "Bundle-Version"));
        assertTrue(manifest(elevatorJar, "Import-Package").contains("org.blockyard.api.io"));
        assertTrue(manifest(policyJar, "Service-Component").contains("FixedWindowPolicyFactory"));

        // Deploy into a real host; select both.
        host = HostFixture.start(tmp.resolve("host"), tmp.resolve("no-plugins"), null);
        Path deploy = tmp.resolve("host/deploy");
        drop(elevatorJar, deploy, "arrival.jar");
        drop(policyJar, deploy, "fixed-window.jar");
        await("both plugins offered", WAIT, () -> scheduler().contains("arrival") && policy().contains("fixed-window"));
        PrintStream ps = new PrintStream(console, true, StandardCharsets.UTF_8);
        session = host.session(new ByteArrayInputStream(new byte[0]), ps, ps);
        session.execute("blockyard:scheduler arrival");
        session.execute("blockyard:policy fixed-window");
        assertEquals("noop deadline [arrival]", scheduler());
        assertTrue(policy().contains("[fixed-window]"), policy());
        String tunables = HostFixture.shellQuietly(host, "blockyard:tunables fixed-window");
        assertTrue(tunables.contains("window_blocks") && tunables.contains("blocks") && tunables.contains("wider keeps"), tunables);

        // Load from the shell: readers and a writer through the queue, writers of files through the allocator.
        Path jobs = Files.writeString(tmp.resolve("load.conf"), """
                global { runtime = 10m, time_based = true }
                jobs = [
                  { name = reads, rw = randread, bs = 4k, numjobs = 2, size = 256MiB, thinktime = 100us }
                  { name = writes, rw = write, bs = 64k, iodepth = 8, offset = 256MiB, size = 64MiB }
                  { name = files, ioengine = files, bs = 64k, iodepth = 2, numjobs = 2, size = 1MiB }
                ]
                """);
        long t0 = System.nanoTime();
        session.execute("blockyard:bench " + jobs);
        assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(5), "blockyard:bench answers at once");
        assertTrue(all().contains("bench started: load.conf: 3 jobs, 5 clones"), all());
        await("the bench under arrival", WAIT, () -> sent() > 500);

        // Update both under the load: the same bundles one version up, written over the jars.
        drop(rewrite(elevatorJar, tmp.resolve("arrival-next.jar"), "Bundle-Version", "1.0.1"), deploy, "arrival.jar");
        drop(rewrite(policyJar, tmp.resolve("fixed-window-next.jar"), "Bundle-Version", "2.3.1"), deploy, "fixed-window.jar");
        await("both bundles updated", WAIT, () -> bundle("org.example.plugin.arrival") != null
                && bundle("org.example.plugin.arrival").getVersion().toString().equals("1.0.1")
                && bundle("org.example.plugin.fixedwindow") != null
                && bundle("org.example.plugin.fixedwindow").getVersion().toString().equals("2.3.1"));
        await("arrival selected again after its update", WAIT, () -> scheduler().equals("noop deadline [arrival]"));
        await("fixed-window selected again after its update", WAIT, () -> policy().contains("[fixed-window]"));
        moreSubmissions("the bench under the updated plugins");

        // Uninstall both under the load: the built-in defaults take over.
        Files.delete(deploy.resolve("arrival.jar"));
        Files.delete(deploy.resolve("fixed-window.jar"));
        await("both plugins gone", WAIT, () -> scheduler().equals("noop [deadline]") && !policy().contains("fixed-window"));
        moreSubmissions("the bench under the defaults");

        // Stop: every submission answered, and the run left the volume as it found it.
        session.execute("blockyard:bench stop");
        await("the report", WAIT, () -> all().contains("stopped early"));
        String report = all().substring(all().indexOf("bench load.conf: 3 jobs, 5 clones, stopped:"));
        assertTrue(report.contains("elevator arrival, deadline at the end, device mem"), report);
        Matcher m = Pattern.compile("submissions: ([0-9,]+) sent, ([0-9,]+) answered \\(every one\\); stopped early").matcher(report);
        assertTrue(m.find(), report);
        assertTrue(Long.parseLong(m.group(1).replace(",", "")) > 1000, report);
        assertEquals(host.store().allocator().geometry().dataBlocks(),
                (long) host.store().allocator().freeBlocks().toCompletableFuture().get(30, TimeUnit.SECONDS));
        assertTrue(host.noticeLines().stream().anyMatch(l -> l.contains("arrival went away")),
                () -> String.join("\n", host.noticeLines()));
    }
}
