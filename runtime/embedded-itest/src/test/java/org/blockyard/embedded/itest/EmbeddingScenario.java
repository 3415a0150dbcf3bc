package org.blockyard.embedded.itest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Dictionary;
import java.util.HashMap;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Collectors;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;
import org.osgi.framework.launch.Framework;
import org.osgi.framework.launch.FrameworkFactory;
import org.osgi.framework.wiring.BundleWire;
import org.osgi.framework.wiring.BundleWiring;

/**
 * One framework from its factory class, with the bundles an embedder installs: SLF4J 1.7 (API and the simple
 * binding), the OSGi promise and function bundles and the DS API that Felix SCR needs, SCR, ConfigAdmin,
 * the Blockyard API bundle and the embedded bundle; then a consumer bundle built here.
 *
 * <p>The consumer imports the API from the API bundle and calls the services with typed code, so a pass
 * shows that the services are registered under the API bundle's classes. The test itself talks to the
 * consumer only through {@link Callable} (a JDK type) and to the framework only through org.osgi.framework,
 * which is all this test class path holds besides JUnit: no Blockyard, Akka, SCR or ConfigAdmin classes (the
 * consumer's classes are read as files and loaded by the framework only).
 */
abstract class EmbeddingScenario {
    static final String PID = "org.blockyard.embedded";
    static final String ALLOCATOR = "org.blockyard.api.alloc.BlockAllocator";
    static final String QUEUE = "org.blockyard.api.io.BlockQueue";
    /** Akka names its threads after the actor system, "blockyard". */
    static final String AKKA_THREAD_PREFIX = "blockyard-";
    static final int CYCLES = 20;
    /** Framework threads that may start lazily during the cycles (event dispatch, SCR, ConfigAdmin). */
    static final int THREAD_SLACK = 3;
    static final long WAIT_MILLIS = 60_000;

    @TempDir Path dir;
    private Framework framework;

    /** The framework's FrameworkFactory class (both frameworks register one for the ServiceLoader). */
    abstract String factoryClass();

    /** Properties this framework needs beyond storage. */
    Map<String, String> frameworkProperties() {
        return Map.of();
    }

    @AfterEach
    void stopFramework() throws Exception {
        if (framework != null) {
            framework.stop();
            framework.waitForStop(WAIT_MILLIS);
        }
    }

    /** The configuration of a 64 MiB volume in groups of 8192 blocks running {@code elevator}. */
    private static Hashtable<String, Object> smallVolume(String elevator) {
        Hashtable<String, Object> config = new Hashtable<>();
        config.put("volume.size", "64MiB");
        config.put("blocks.per.group", 8192);
        config.put("elevator", elevator);
        return config;
    }

    /** A fresh framework, started, with the bundles an embedder needs besides the embedded one, started. */
    private BundleContext startFrameworkWithInfrastructure() throws Exception {
        Map<String, String> props = new HashMap<>(frameworkProperties());
        props.put("org.osgi.framework.storage", dir.resolve("cache").toString());
        props.put("org.osgi.framework.storage.clean", "onFirstInit");
        FrameworkFactory factory = (FrameworkFactory) Class.forName(factoryClass()).getConstructor().newInstance();
        framework = factory.newFramework(props);
        framework.start();
        BundleContext ctx = framework.getBundleContext();
        System.out.printf("%s %s%n", framework.getSymbolicName(), framework.getVersion());

        List<Bundle> infra = new ArrayList<>();
        for (String name : List.of("slf4j-api", "slf4j-simple", "org.osgi.util.function", "org.osgi.util.promise",
                "org.osgi.service.component", "org.apache.felix.scr", "org.apache.felix.configadmin", "org.blockyard.api"))
            infra.add(install(ctx, name));
        for (Bundle b : infra) if (b.getHeaders().get("Fragment-Host") == null) b.start();
        return ctx;
    }

    /** The framework's context and the bundles a scenario installs beside the infrastructure, none started. */
    private record Installed(BundleContext ctx, Bundle embedded, Bundle consumer, Bundle plugin) {}

    private Installed installAll() throws Exception {
        BundleContext ctx = startFrameworkWithInfrastructure();
        return new Installed(ctx, install(ctx, "org.blockyard.embedded"), ctx.installBundle("consumer", consumerBundle()),
                ctx.installBundle("plugin", pluginBundle("1.0.0")));
    }

    @Test
    void allocatorAndQueueAreServicesThatComeAndGoWithTheBundleLeavingNoThreads() throws Exception {
        Installed installed = installAll();
        BundleContext ctx = installed.ctx();
        Bundle embedded = installed.embedded(), consumer = installed.consumer(), plugin = installed.plugin();

        // A configuration before the first start: the component must read it through ConfigAdmin.
        Hashtable<String, Object> config = smallVolume("noop");
        updateConfiguration(ctx, config);

        int before = settledThreadCount();
        java.util.Set<String> namesBefore = threadNames();
        System.out.printf("threads before the embedded bundle starts: %d%n", before);

        embedded.start();
        consumer.start();
        String report = consume(ctx);
        System.out.println("consumer: " + report);
        assertTrue(report.contains("blocks=16384 blockBytes=4096"), report);
        assertTrue(report.contains("elevator=noop"), report);

        checkWiring(embedded);
        long serviceId = (Long) waitForService(ctx, ALLOCATOR).getProperty("service.id");

        // A change of elevator alone is applied in place: the services stay.
        config.put("elevator", "deadline");
        updateConfiguration(ctx, config);
        String switched = waitForReport(ctx, "elevator=deadline");
        System.out.println("after the configuration change: " + switched);
        assertEquals(serviceId, (Long) waitForService(ctx, ALLOCATOR).getProperty("service.id"));

        // An elevator plugin arriving while the bundle runs can be selected; the selection stays across restarts
        // (the component binds the plugin before it starts the store again).
        plugin.start();
        config.put("elevator", "fifo-test");
        updateConfiguration(ctx, config);
        System.out.println("with the plugin: " + waitForReport(ctx, "elevator=fifo-test"));

        List<Integer> stopped = new ArrayList<>();
        for (int cycle = 1; cycle <= CYCLES; cycle++) {
            embedded.stop();
            assertNull(ctx.getAllServiceReferences(ALLOCATOR, null), "BlockAllocator after stop, cycle " + cycle);
            assertNull(ctx.getAllServiceReferences(QUEUE, null), "BlockQueue after stop, cycle " + cycle);
            int n = settledThreadCount();
            stopped.add(n);
            embedded.start();
            assertNotNull(waitForService(ctx, ALLOCATOR), "BlockAllocator back, cycle " + cycle);
            assertNotNull(waitForService(ctx, QUEUE), "BlockQueue back, cycle " + cycle);
            String r = consume(ctx);
            assertTrue(r.contains("blocks=16384") && r.contains("elevator=fifo-test"), r);
        }

        // The plugin going away while its elevator is active: the queue falls back to the default.
        plugin.stop();
        System.out.println("plugin stopped: " + waitForReport(ctx, "elevator=deadline"));

        embedded.stop();
        int after = settledThreadCount();
        System.out.printf("threads with the embedded bundle stopped, cycles 1..%d: %s; after the last: %d "
                + "(before: %d, slack %d)%n", CYCLES, stopped, after, before, THREAD_SLACK);
        java.util.Set<String> added = threadNames();
        added.removeAll(namesBefore);
        System.out.println("threads not there before the first start: " + added);
        assertTrue(Math.abs(after - before) <= THREAD_SLACK, "threads before " + before + ", after " + after);
        for (int n : stopped) assertTrue(Math.abs(n - before) <= THREAD_SLACK, "threads " + stopped + " vs " + before);
    }

    /**
     * The configured elevator is a plugin: while its bundle is away (stopped, or between the two halves of an
     * update) the queue runs the default, and when it comes back it is selected again, with the tunable the
     * configuration gives it. A changed tunable is applied in place: the running elevator is rebuilt with it and
     * the services stay.
     */
    @Test
    void aPluginThatComesBackIsSelectedAgainAndATunableSetThroughConfigAdminTakesEffect() throws Exception {
        Installed installed = installAll();
        BundleContext ctx = installed.ctx();
        Bundle embedded = installed.embedded(), consumer = installed.consumer(), plugin = installed.plugin();
        Hashtable<String, Object> config = smallVolume("fifo-test");
        config.put("elevator.fifo-test.tag", 7L);
        updateConfiguration(ctx, config);
        embedded.start();
        consumer.start();
        System.out.println("before the plugin: " + waitForReport(ctx, "elevator=deadline"));

        plugin.start();
        System.out.println("the plugin arrived: " + waitForReport(ctx, "elevator=fifo-test", "tag=7"));
        long serviceId = (Long) waitForService(ctx, ALLOCATOR).getProperty("service.id");

        config.put("elevator.fifo-test.tag", "9");
        updateConfiguration(ctx, config);
        System.out.println("the tunable changed: " + waitForReport(ctx, "elevator=fifo-test", "tag=9"));
        assertEquals(serviceId, (Long) waitForService(ctx, ALLOCATOR).getProperty("service.id"), "applied in place");

        plugin.stop();
        System.out.println("the plugin stopped: " + waitForReport(ctx, "elevator=deadline"));
        plugin.start();
        System.out.println("the plugin restarted: " + waitForReport(ctx, "elevator=fifo-test", "tag=9"));

        plugin.update(pluginBundle("1.0.1"));
        assertEquals("1.0.1", plugin.getVersion().toString());
        System.out.println("the plugin updated: " + waitForReport(ctx, "elevator=fifo-test", "tag=9"));

        config.remove("elevator.fifo-test.tag");
        updateConfiguration(ctx, config);
        System.out.println("the tunable no longer configured: " + waitForReport(ctx, "elevator=fifo-test", "tag=1"));
        assertEquals(serviceId, (Long) waitForService(ctx, ALLOCATOR).getProperty("service.id"), "the same volume");
    }

    /**
     * A configuration that cannot be is one line in the log, without a stack trace, and no volume: the
     * component does not activate, and starts once the configuration is fixed. (64 MiB in the default groups
     * of 32768 blocks is no volume either: less than one group.)
     */
    @Test
    void aVolumeSizeThatIsNoSizeIsOneLoggedLineAndNoVolumeUntilItIsFixed() throws Exception {
        BundleContext ctx = startFrameworkWithInfrastructure();
        Bundle embedded = install(ctx, "org.blockyard.embedded");
        Hashtable<String, Object> config = new Hashtable<>();
        config.put("volume.size", "lots");
        updateConfiguration(ctx, config);
        oneLineAndNoVolume(ctx, "volume.size 'lots' is not a size", embedded::start);

        config.put("volume.size", "64MiB");
        oneLineAndNoVolume(ctx, "is no volume: a volume needs at least one whole group", () -> updateConfiguration(ctx, config));

        config.put("blocks.per.group", 8192);
        updateConfiguration(ctx, config);
        assertNotNull(waitForService(ctx, ALLOCATOR), "the volume once the configuration is fixed");
        assertEquals(16384L, waitForService(ctx, ALLOCATOR).getProperty("blockyard.volume.blocks"));
    }

    private interface Step {
        void run() throws Exception;
    }

    /** Runs {@code step}, after which exactly one line of the log says {@code expected}, no stack trace, no volume. */
    private static void oneLineAndNoVolume(BundleContext ctx, String expected, Step step) throws Exception {
        PrintStream err = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(new TeeStream(err, captured), true, StandardCharsets.UTF_8));
        try {
            step.run();
            waitForLine(captured, expected);
            Thread.sleep(500); // what else would be said about it comes with it
        } finally {
            System.setErr(err);
        }
        List<String> said = captured.toString(StandardCharsets.UTF_8).lines().collect(Collectors.toList());
        List<String> aboutIt = said.stream().filter(l -> l.contains("volume.size")).collect(Collectors.toList());
        assertEquals(1, aboutIt.size(), () -> "one line about it: " + said);
        assertTrue(aboutIt.get(0).contains(expected), aboutIt.get(0));
        assertTrue(said.stream().noneMatch(l -> l.startsWith("\tat ") || l.contains("Exception")),
                () -> "no stack trace: " + said);
        assertNull(ctx.getAllServiceReferences(ALLOCATOR, null), "no volume with that configuration");
    }

    /** Waits until a line of {@code captured} contains {@code text}. */
    private static void waitForLine(ByteArrayOutputStream captured, String text) throws InterruptedException {
        long deadline = System.currentTimeMillis() + WAIT_MILLIS;
        while (System.currentTimeMillis() < deadline) {
            if (captured.toString(StandardCharsets.UTF_8).lines().anyMatch(l -> l.contains(text))) return;
            Thread.sleep(20);
        }
        throw new AssertionError("no line with " + text + " in " + captured.toString(StandardCharsets.UTF_8));
    }

    /** Writes to both streams. */
    private static final class TeeStream extends java.io.OutputStream {
        private final java.io.OutputStream a, b;

        TeeStream(java.io.OutputStream a, java.io.OutputStream b) {
            this.a = a;
            this.b = b;
        }

        @Override
        public synchronized void write(int c) throws IOException {
            a.write(c);
            b.write(c);
        }

        @Override
        public synchronized void write(byte[] buf, int off, int len) throws IOException {
            a.write(buf, off, len);
            b.write(buf, off, len);
        }

        @Override
        public void flush() throws IOException {
            a.flush();
        }
    }

    private Bundle install(BundleContext ctx, String name) throws Exception {
        String path = System.getProperty("bundle." + name);
        assertNotNull(path, "system property bundle." + name);
        return ctx.installBundle(Path.of(path).toUri().toString());
    }

    private static String consume(BundleContext ctx) throws Exception {
        ServiceReference<?>[] refs = null;
        long deadline = System.currentTimeMillis() + WAIT_MILLIS;
        while (refs == null && System.currentTimeMillis() < deadline) {
            refs = ctx.getServiceReferences(Callable.class.getName(), "(blockyard.consumer=true)");
            if (refs == null) Thread.sleep(10);
        }
        assertNotNull(refs, "the consumer's service");
        Callable<?> c = (Callable<?>) ctx.getService(refs[0]);
        try {
            return (String) c.call();
        } finally {
            ctx.ungetService(refs[0]);
        }
    }

    private static String waitForReport(BundleContext ctx, String... expected) throws Exception {
        long deadline = System.currentTimeMillis() + WAIT_MILLIS;
        String r;
        do {
            r = consume(ctx);
            String seen = r;
            if (java.util.Arrays.stream(expected).allMatch(seen::contains)) return r;
            Thread.sleep(20);
        } while (System.currentTimeMillis() < deadline);
        throw new AssertionError("expected " + String.join(" and ", expected) + " in " + r);
    }

    /** All references, unfiltered by class space: the system bundle does not import the API. */
    private static ServiceReference<?> waitForService(BundleContext ctx, String name) throws Exception {
        long deadline = System.currentTimeMillis() + WAIT_MILLIS;
        ServiceReference<?>[] refs;
        while ((refs = ctx.getAllServiceReferences(name, null)) == null && System.currentTimeMillis() < deadline)
            Thread.sleep(5);
        return refs == null ? null : refs[0];
    }

    /** ConfigAdmin's API lives in its bundle, not on this class path: called through that bundle's classes. */
    private static void updateConfiguration(BundleContext ctx, Dictionary<String, Object> props) throws Exception {
        ServiceReference<?> ref = ctx.getServiceReference("org.osgi.service.cm.ConfigurationAdmin");
        assertNotNull(ref, "ConfigurationAdmin");
        Object admin = ctx.getService(ref);
        Class<?> adminType = ref.getBundle().loadClass("org.osgi.service.cm.ConfigurationAdmin");
        Class<?> configType = ref.getBundle().loadClass("org.osgi.service.cm.Configuration");
        Object configuration = adminType.getMethod("getConfiguration", String.class, String.class)
                .invoke(admin, PID, "?");
        configType.getMethod("update", Dictionary.class).invoke(configuration, props);
        ctx.ungetService(ref);
    }

    /**
     * The embedded bundle gets sun.misc (Akka's Unsafe) from the system bundle, not through boot delegation,
     * and its own class path holds the reference.conf of every Akka module it carries.
     */
    private static void checkWiring(Bundle embedded) throws IOException {
        BundleWiring wiring = embedded.adapt(BundleWiring.class);
        Map<String, Long> providers = new HashMap<>();
        for (BundleWire w : wiring.getRequiredWires("osgi.wiring.package"))
            providers.put((String) w.getCapability().getAttributes().get("osgi.wiring.package"),
                    w.getProvider().getBundle().getBundleId());
        System.out.println("embedded bundle imports (package -> bundle id): " + new java.util.TreeMap<>(providers));
        assertEquals(0L, providers.get("sun.misc"), "sun.misc from the system bundle");
        assertEquals(0L, providers.get("jdk.jfr"), "jdk.jfr from the system bundle");
        for (String p : providers.keySet())
            assertTrue(!p.startsWith("akka") && !p.startsWith("scala") && !p.startsWith("com.typesafe"), p);
        assertTrue(wiring.getCapabilities("osgi.wiring.package").isEmpty(), "the embedded bundle exports nothing");

        List<URL> refs = Collections.list(embedded.getResources("reference.conf"));
        System.out.println("reference.conf on the bundle class path: " + refs.size() + " " + refs.stream()
                .map(URL::toString).map(u -> u.replaceAll(".*(lib/[^!/]*).*", "$1")).collect(Collectors.toList()));
        assertTrue(refs.size() >= 2, "akka-actor and akka-actor-typed each ship a reference.conf: " + refs);
    }

    private static java.util.Set<String> threadNames() {
        return countedThreads().map(Thread::getName).collect(Collectors.toCollection(java.util.TreeSet::new));
    }

    /** The JVM's threads less its elastic pools: what the leak checks count and name. */
    private static java.util.stream.Stream<Thread> countedThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> !elastic(t.getName()));
    }

    /**
     * Threads of the JVM's own elastic pools, which start under load and end after an idle minute whatever the
     * bundles do (the common fork-join pool): not counted, or a busy machine reads as a leak.
     */
    private static boolean elastic(String name) {
        return name.startsWith("ForkJoinPool.commonPool-worker-");
    }

    /**
     * The JVM's thread count, less its elastic pools, once no thread of the actor system is left (its pools stop
     * just after it).
     */
    private static int settledThreadCount() throws InterruptedException {
        long deadline = System.currentTimeMillis() + WAIT_MILLIS;
        while (System.currentTimeMillis() < deadline) {
            List<String> akka = Thread.getAllStackTraces().keySet().stream().map(Thread::getName)
                    .filter(n -> n.startsWith(AKKA_THREAD_PREFIX)).collect(Collectors.toList());
            if (akka.isEmpty()) return (int) countedThreads().count();
            Thread.sleep(20);
        }
        throw new AssertionError("actor system threads still running: " + Thread.getAllStackTraces().keySet().stream()
                .map(Thread::getName).filter(n -> n.startsWith(AKKA_THREAD_PREFIX)).collect(Collectors.toList()));
    }

    /**
     * The consumer: it uses the allocator and the queue. It only calls them, so it imports the API with a
     * consumer's range (bnd's for a caller of a provider type): from the version it was built against to the
     * next major.
     */
    private static InputStream consumerBundle() throws IOException {
        return testBundle("org.blockyard.embedded.itest.consumer", "ConsumerActivator",
                "org.blockyard.api.alloc;version=\"[0.3,1)\",org.blockyard.api.io;version=\"[0.3,1)\","
                        + "org.osgi.framework,org.osgi.util.tracker");
    }

    /** An elevator plugin of {@code version}: it offers an ElevatorFactory service (a consumer type) while it runs. */
    private static InputStream pluginBundle(String version) throws IOException {
        return testBundle("org.blockyard.embedded.itest.plugin", version, "FifoElevatorActivator",
                "org.blockyard.api.io;version=\"[0.3,1)\",org.blockyard.api.plugin;version=\"[0.1,1)\","
                        + "org.osgi.framework");
    }

    /** A bundle of the compiled classes of package {@code pkg} (named after it), started by {@code activator}. */
    private static InputStream testBundle(String pkg, String activator, String imports) throws IOException {
        return testBundle(pkg, "1.0.0", activator, imports);
    }

    private static InputStream testBundle(String pkg, String version, String activator, String imports)
            throws IOException {
        Manifest mf = new Manifest();
        Attributes a = mf.getMainAttributes();
        a.put(Attributes.Name.MANIFEST_VERSION, "1.0");
        a.putValue("Bundle-ManifestVersion", "2");
        a.putValue("Bundle-SymbolicName", pkg);
        a.putValue("Bundle-Version", version);
        a.putValue("Bundle-Activator", pkg + "." + activator);
        a.putValue("Import-Package", imports);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (JarOutputStream jar = new JarOutputStream(out, mf)) { // the manifest goes first
            String dirName = pkg.replace('.', '/') + "/";
            URL here = EmbeddingScenario.class.getResource("/" + dirName + activator + ".class");
            Path classes = Path.of(java.net.URI.create(here.toString())).getParent();
            try (var files = Files.list(classes)) {
                for (Path f : files.filter(p -> p.toString().endsWith(".class")).sorted().collect(Collectors.toList())) {
                    jar.putNextEntry(new JarEntry(dirName + f.getFileName()));
                    jar.write(Files.readAllBytes(f));
                    jar.closeEntry();
                }
            }
        }
        return new java.io.ByteArrayInputStream(out.toByteArray());
    }
}
