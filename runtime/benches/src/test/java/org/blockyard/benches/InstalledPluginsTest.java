package org.blockyard.benches;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import org.blockyard.api.io.ElevatorFactory;
import org.blockyard.benches.job.RunCommand;

/**
 * Every installed plugin can be put under load by name: the shipped ones (fifo among them) and an out-of-tree
 * bundle given with {@code --deploy}, each loaded as a host's Declarative Services loads it; an unknown name is
 * one line listing every installed one, and a plugin that throws while loading is one line naming it.
 */
class InstalledPluginsTest {
    @TempDir
    static Path dir;

    /** sstf (an elevator) and nextfit (a policy), built as their own builds would make them. */
    static Path deploy;

    private static final Duration LIMIT = Duration.ofSeconds(120);
    private static final String ELEVATORS = "noop, deadline, anticipatory, cfq, fifo";

    @BeforeAll
    static void plugins() throws Exception {
        deploy = Files.createDirectories(dir.resolve("deploy"));
        PluginJars.bundle(deploy.resolve("sstf.jar"), "org.example.sstf", PluginJars.API_IMPORTS, PluginJars.SSTF,
                PluginJars.component("org.example.sstf.SstfElevatorFactory", PluginBundle.ELEVATOR,
                        "sstf.note", "from its descriptor"));
        PluginJars.bundle(deploy.resolve("nextfit.jar"), "org.example.nextfit", PluginJars.API_IMPORTS,
                PluginJars.NEXTFIT, PluginJars.component("org.example.nextfit.NextFitPolicyFactory", PluginBundle.POLICY));
    }

    /** What a command did: its exit code and what it threw (the blockyard command line prints it in one line). */
    record Ran(int code, Exception thrown) {}

    static Ran exec(Object command, String... args) {
        return assertTimeoutPreemptively(LIMIT, () -> {
            Exception[] thrown = new Exception[1];
            PrintWriter nowhere = new PrintWriter(Writer.nullWriter());
            int code = new CommandLine(command).setOut(nowhere).setErr(nowhere)
                    .setExecutionExceptionHandler((e, cl, parsed) -> {
                        thrown[0] = e;
                        return 2;
                    }).execute(args);
            return new Ran(code, thrown[0]);
        });
    }

    /** Runs {@code command} with {@code args} and {@code --json}; answers its first result row. */
    static JsonNode firstRow(Object command, String... args) throws Exception {
        Path json = Files.createTempFile(dir, "out", ".json");
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--quiet", "--json", json.toString()));
        Ran r = exec(command, all.toArray(String[]::new));
        assertEquals(0, r.code(), () -> "exit code; it threw " + r.thrown());
        return new ObjectMapper().readTree(json.toFile()).get("results").get(0);
    }

    private static ElevatorFactory elevator(InstalledPlugins p, String id) {
        return p.elevators().stream().filter(f -> f.descriptor().id().equals(id)).findFirst().orElseThrow();
    }

    private static long counter(Object factory, String field) throws Exception {
        return ((java.util.concurrent.atomic.AtomicLong) factory.getClass().getField(field).get(null)).get();
    }

    @Test
    void aBenchRunsTheShippedFifoPluginByName() throws Exception {
        JsonNode row = firstRow(new RunCommand(), "--rw=randread", "--bs=4k", "--size=256k", "--device=sim",
                "--elevator", "fifo");
        assertEquals("fifo", row.get("elevator").asText());
        assertEquals(64, row.get("ios").asLong());
        ElevatorFactory fifo = elevator(InstalledPlugins.shipped(), "fifo");
        assertNotSame(getClass().getClassLoader(), fifo.getClass().getClassLoader(),
                "fifo is loaded from its bundle in a class loader of its own, as a host loads it");
        assertEquals("strict", String.join(",", fifo.descriptor().aliases()));
    }

    @Test
    void aBenchRunsAnOutOfTreePluginGivenByDeploy() throws Exception {
        ElevatorFactory sstf = elevator(InstalledPlugins.of(List.of(deploy)), "sstf");
        long before = counter(sstf, "ISSUED");
        JsonNode row = firstRow(new RunCommand(), "--rw=randread", "--bs=4k", "--size=256k", "--device=sim",
                "--deploy", deploy.toString(), "--elevator", "shortest");
        assertEquals("shortest", row.get("elevator").asText(), "by its alias");
        assertEquals(64, row.get("ios").asLong());
        assertTrue(counter(sstf, "ISSUED") - before >= 64, "every read went through sstf's dispatch");

        assertEquals("shortest seek first (from its descriptor, limit 7)", sstf.descriptor().description(),
                "activated with its descriptor's properties through its component property type");
        ClassLoader loader = sstf.getClass().getClassLoader();
        assertSame(ElevatorFactory.class, loader.loadClass(ElevatorFactory.class.getName()), "the engine's API classes");
        assertThrows(ClassNotFoundException.class, () -> loader.loadClass(BenchPolicies.class.getName()),
                "a plugin sees what it imports, not the engine's internals");
        assertThrows(ClassNotFoundException.class, () -> getClass().getClassLoader().loadClass("org.example.sstf.SstfElevator"),
                "never on the class path");
    }

    @Test
    void swapTiobenchAndSmallfilesTakeTheDeployedPlugins() throws Exception {
        JsonNode swap = firstRow(new SwapCommand(), "--deploy", deploy.toString(), "--elevators", "noop,sstf",
                "--policies", "reservation,nextfit", "--seconds", "1", "--swaps", "10", "--writers", "1",
                "--file-size", "1MiB", "--no-warmup");
        assertEquals("sstf", swap.get("elevator").asText(), "the queue ran sstf at the end");
        assertEquals("nextfit", swap.get("policy").asText(), "the allocator ran nextfit at the end");
        assertEquals(0, swap.get("requests_lost").asLong());
        assertEquals(0, swap.get("verify_errors").asLong());

        Object nextfit = InstalledPlugins.of(List.of(deploy)).policies().stream()
                .filter(f -> f.descriptor().id().equals("nextfit")).findFirst().orElseThrow();
        long homes = counter(nextfit, "HOMES");
        JsonNode tio = firstRow(new TiobenchCommand(), "--deploy", deploy.toString(), "--policy", "nextfit",
                "--writers", "2", "--file-size", "1MiB", "--no-warmup");
        assertEquals("nextfit", tio.get("policy").asText());
        long afterTiobench = counter(nextfit, "HOMES");
        assertTrue(afterTiobench > homes, "nextfit placed tiobench's files");
        JsonNode small = firstRow(new SmallFilesCommand(), "--deploy", deploy.toString(), "--policy", "nextfit",
                "--files", "200", "--no-warmup");
        assertEquals("nextfit", small.get("policy").asText());
        assertTrue(counter(nextfit, "HOMES") - afterTiobench >= 200, "nextfit placed every small file");
    }

    @Test
    void anUnknownNameIsOneLineListingEveryInstalledOne() {
        assertRefused(exec(new RunCommand(), "--rw=read", "--size=4k", "--device=sim", "--elevator", "sstf"),
                "--elevator 'sstf': installed are " + ELEVATORS + " (a plugin of your own: --deploy DIR)");
        assertRefused(exec(new RunCommand(), "--rw=read", "--size=4k", "--device=sim", "--deploy", deploy.toString(),
                "--elevator", "scan"), "--elevator 'scan': installed are " + ELEVATORS + ", sstf (a plugin of your own: --deploy DIR)");
        assertRefused(exec(new SwapCommand(), "--elevators", "noop,sstf"),
                "--elevators 'sstf': installed are " + ELEVATORS + " (a plugin of your own: --deploy DIR)");
        assertRefused(exec(new TiobenchCommand(), "--policy", "reservation,nextfit"),
                "--policy 'nextfit': installed are reservation, mballoc, no-reservation; also global-lock, group-locks"
                        + " (a plugin of your own: --deploy DIR)");
        assertRefused(exec(new SmallFilesCommand(), "--deploy", deploy.toString(), "--policy", "bestfit"),
                "--policy 'bestfit': installed are reservation, mballoc, no-reservation, nextfit; also global-lock,"
                        + " group-locks (a plugin of your own: --deploy DIR)");
    }

    private static void assertRefused(Ran r, String message) {
        assertEquals(2, r.code());
        assertInstanceOf(BadOption.class, r.thrown(), "a wrong value: exit code 2 on the blockyard command line");
        assertEquals(message, r.thrown().getMessage());
    }

    @Test
    void aPluginThatThrowsWhileLoadingIsOneLineNamingIt() throws Exception {
        Path d = Files.createDirectories(dir.resolve("boom"));
        Path jar = PluginJars.bundle(d.resolve("boom.jar"), "org.example.boom", PluginJars.API_IMPORTS, PluginJars.BOOM,
                PluginJars.component("org.example.boom.BoomElevatorFactory", PluginBundle.ELEVATOR));
        Ran r = exec(new RunCommand(), "--rw=read", "--size=4k", "--device=sim", "--deploy", d.toString(),
                "--elevator", "boom");
        assertEquals(2, r.code());
        assertInstanceOf(IllegalArgumentException.class, r.thrown(), "a wrong plugin: exit code 2");
        assertEquals("plugin bundle org.example.boom 1.0.0 (" + jar.toAbsolutePath().normalize() + "): component "
                + "org.example.boom.BoomElevatorFactory: activate threw IllegalStateException: no disk to seek on",
                r.thrown().getMessage());
    }

    @Test
    void theHostsRulesForBundlesAndNamesHold() throws Exception {
        // A deployed revision of a shipped bundle takes its place.
        Path rev = Files.createDirectories(dir.resolve("revision"));
        Path fifo = Files.copy(PluginJars.builtFifoJar(), rev.resolve("fifo-next.jar"), StandardCopyOption.REPLACE_EXISTING);
        InstalledPlugins p = InstalledPlugins.of(List.of(rev));
        assertEquals(1, p.elevators().stream().filter(f -> f.descriptor().id().equals("fifo")).count());
        assertTrue(p.bundles().stream().anyMatch(b -> b.contains(fifo.toString())), p.bundles().toString());
        assertFalse(p.bundles().stream().anyMatch(b -> b.contains("org.blockyard.plugin.fifo") && !b.contains(fifo.toString())),
                p.bundles().toString());

        // Another bundle answering to a taken name is refused, naming both.
        Path twin = Files.createDirectories(dir.resolve("twin"));
        Files.copy(deploy.resolve("sstf.jar"), twin.resolve("a-sstf.jar"));
        PluginJars.bundle(twin.resolve("b-other.jar"), "org.example.other", PluginJars.API_IMPORTS, PluginJars.SSTF,
                PluginJars.component("org.example.sstf.SstfElevatorFactory", PluginBundle.ELEVATOR));
        var clash = assertThrows(IllegalArgumentException.class, () -> InstalledPlugins.of(List.of(twin)));
        assertTrue(clash.getMessage().startsWith("plugin bundle org.example.other 1.0.0 (")
                && clash.getMessage().endsWith("io scheduler 'sstf' refused: 'sstf' is already provided by plugin bundle"
                + " org.example.sstf 1.0.0 (" + twin.resolve("a-sstf.jar") + ")"), clash.getMessage());

        // An API version the engine does not export does not resolve, as in a host.
        Path old = Files.createDirectories(dir.resolve("old"));
        PluginJars.bundle(old.resolve("sstf.jar"), "org.example.sstf", "org.blockyard.api.io;version=\"[9.0,10)\","
                + "org.blockyard.api.plugin", PluginJars.SSTF,
                PluginJars.component("org.example.sstf.SstfElevatorFactory", PluginBundle.ELEVATOR));
        var unresolved = assertThrows(IllegalArgumentException.class, () -> InstalledPlugins.of(List.of(old)));
        assertTrue(unresolved.getMessage().contains(": cannot resolve its import of org.blockyard.api.io version [9.0,10):"
                + " the engine exports org.blockyard.api.io 0.5.0"), unresolved.getMessage());

        // A folder that is not there, or holds no jar, is a wrong --deploy.
        assertEquals("--deploy '" + dir.resolve("missing") + "': must be a folder of plugin jars (or one jar)",
                assertThrows(BadOption.class, () -> InstalledPlugins.of(List.of(dir.resolve("missing")))).getMessage());
    }
}
