package org.blockyard.host;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarInputStream;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Stream;

import org.apache.felix.service.command.CommandSession;

/** Helpers for tests that run a real host: jars, deploy-folder drops, shell calls, waiting. */
final class HostFixture {
    private HostFixture() {}

    /** The fifo plugin as built by the reactor (copied to target/plugins by the host module's build). */
    static Path fifoJar() throws IOException {
        Path dir = Path.of("target", "plugins");
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().startsWith("org.blockyard.plugin.fifo")).findFirst()
                    .orElseThrow(() -> new IllegalStateException("the fifo plugin jar is not in " + dir.toAbsolutePath()));
        }
    }

    /** A host on temp folders, FileInstall polling every 100 ms, with the plugins in {@code plugins} (may be missing). */
    static Host start(Path tmp, Path plugins, Path config) throws IOException {
        return Host.start(Host.Options.defaults().withConfig(config).withDeploy(tmp.resolve("deploy"))
                .withStorage(tmp.resolve("cache")).withPlugins(plugins).withPoll(Duration.ofMillis(100)));
    }

    /**
     * Copies {@code jar} into the deploy folder the way a careful user does: under a name FileInstall's filter
     * ignores, then renamed, so it never sees half a file.
     */
    static void drop(Path jar, Path deploy, String name) throws IOException {
        Path part = deploy.resolve(name + ".part");
        Files.copy(jar, part, StandardCopyOption.REPLACE_EXISTING);
        Files.move(part, deploy.resolve(name), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    /** {@code jar} with main attributes changed ({@code null} removes one), written to {@code out}. */
    static Path rewrite(Path jar, Path out, String... keyValues) throws IOException {
        try (InputStream in = Files.newInputStream(jar); JarInputStream j = new JarInputStream(in)) {
            Manifest m = new Manifest(j.getManifest());
            Attributes a = m.getMainAttributes();
            for (int i = 0; i < keyValues.length; i += 2) {
                if (keyValues[i + 1] == null) a.remove(new Attributes.Name(keyValues[i]));
                else a.putValue(keyValues[i], keyValues[i + 1]);
            }
            try (OutputStream os = Files.newOutputStream(out); JarOutputStream jo = new JarOutputStream(os, m)) {
                JarEntry e;
                while ((e = j.getNextJarEntry()) != null) {
                    jo.putNextEntry(new JarEntry(e.getName()));
                    j.transferTo(jo);
                    jo.closeEntry();
                }
            }
        }
        return out;
    }

    /**
     * A plugin bundle made from the compiled test classes of {@code component}'s package: the classes of that
     * package, a manifest importing {@code imports}, and a Declarative Services descriptor registering one
     * instance of {@code component} as {@code service} with the property {@code idKey=id}.
     */
    static Path pluginBundle(Path out, Class<?> component, Class<?> service, String idKey, String id, String imports)
            throws IOException {
        return pluginBundle(out, Path.of("target", "test-classes"), component.getName(), service.getName(), idKey, id,
                imports);
    }

    /** As above, for a component class compiled into {@code classesRoot} (a package-structured folder). */
    static Path pluginBundle(Path out, Path classesRoot, String componentClass, String serviceInterface, String idKey,
                             String id, String imports) throws IOException {
        String pkg = componentClass.substring(0, componentClass.lastIndexOf('.'));
        Path classes = classesRoot.resolve(pkg.replace('.', '/'));
        Manifest m = new Manifest();
        Attributes a = m.getMainAttributes();
        a.put(Attributes.Name.MANIFEST_VERSION, "1.0");
        a.putValue("Bundle-ManifestVersion", "2");
        a.putValue("Bundle-SymbolicName", pkg);
        a.putValue("Bundle-Version", "1.0.0");
        a.putValue("Import-Package", imports);
        a.putValue("Private-Package", pkg);
        a.putValue("Service-Component", "OSGI-INF/component.xml");
        String xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                + "<scr:component xmlns:scr=\"http://www.osgi.org/xmlns/scr/v1.3.0\" name=\"" + componentClass + "\">\n"
                + "  <property name=\"" + idKey + "\" type=\"String\" value=\"" + id + "\"/>\n"
                + "  <service><provide interface=\"" + serviceInterface + "\"/></service>\n"
                + "  <implementation class=\"" + componentClass + "\"/>\n"
                + "</scr:component>\n";
        try (OutputStream os = Files.newOutputStream(out); JarOutputStream jo = new JarOutputStream(os, m);
             Stream<Path> files = Files.list(classes)) {
            jo.putNextEntry(new JarEntry("OSGI-INF/component.xml"));
            jo.write(xml.getBytes(StandardCharsets.UTF_8));
            jo.closeEntry();
            for (Path c : files.filter(f -> f.toString().endsWith(".class")).sorted().toList()) {
                jo.putNextEntry(new JarEntry(pkg.replace('.', '/') + "/" + c.getFileName()));
                Files.copy(c, jo);
                jo.closeEntry();
            }
        }
        return out;
    }

    /** Runs {@code line} in a fresh session; answers what it printed. A refused command throws. */
    static String shell(Host host, String line) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (PrintStream ps = new PrintStream(out, true, StandardCharsets.UTF_8);
             CommandSession s = host.session(new ByteArrayInputStream(new byte[0]), ps, ps)) {
            Object result = s.execute(line);
            if (result != null) ps.println(s.format(result, org.apache.felix.service.command.Converter.INSPECT));
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    static String shellQuietly(Host host, String line) {
        try {
            return shell(host, line);
        } catch (Exception e) {
            throw new AssertionError(line + ": " + e, e);
        }
    }

    static void await(String what, Duration limit, BooleanSupplier done) throws InterruptedException {
        long end = System.nanoTime() + limit.toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > end) fail("timed out waiting for: " + what);
            Thread.sleep(50);
        }
    }

    /** After close: the framework's, FileInstall's, the host's and the actor system's threads are gone. */
    static void assertNoThreadsLeft() throws InterruptedException {
        await("host threads to end", Duration.ofSeconds(20), () -> leftovers().isEmpty());
        assertTrue(leftovers().isEmpty(), () -> "threads left: " + leftovers());
    }

    private static List<String> leftovers() {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                .filter(n -> n.startsWith("blockyard") || n.startsWith("FelixDispatchQueue")
                        || n.contains("fileinstall") || n.startsWith("FelixStartLevel") || n.startsWith("SCR "))
                .toList();
    }
}
