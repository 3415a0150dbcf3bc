package org.blockyard.benches;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Stream;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

/**
 * Out-of-tree plugin bundles made in a test as a plugin's own build makes them: Java sources compiled against
 * the API alone, a manifest (symbolic name, imports) and a Declarative Services descriptor, packed in a jar
 * that is never on the class path. The plugins themselves are below: an elevator (sstf), a policy (nextfit),
 * and one whose activate method throws.
 */
final class PluginJars {
    private PluginJars() {}

    static final String API_IMPORTS = "org.blockyard.api.io;version=\"[0.5,1)\",org.blockyard.api.plugin;version=\"[0.1,1)\","
            + "org.blockyard.api.alloc;version=\"[0.7,1)\"";

    /** Shortest seek first, activated through a component property type that reads the descriptor's sstf.note. */
    static final Map<String, String> SSTF = Map.of(
            "org.example.sstf.SstfElevatorFactory", """
                    package org.example.sstf;

                    import java.util.List;
                    import java.util.Map;
                    import org.blockyard.api.io.*;

                    public final class SstfElevatorFactory implements ElevatorFactory {
                        /** Requests its elevators issued: what a test reads to see that they ran. */
                        public static final java.util.concurrent.atomic.AtomicLong ISSUED = new java.util.concurrent.atomic.AtomicLong();

                        @interface Props {
                            String sstf_note() default "no note";
                            int sstf_limit() default 7;
                        }

                        private volatile String note = "not activated";

                        void activate(Props p) {
                            note = p.sstf_note() + ", limit " + p.sstf_limit();
                        }

                        @Override
                        public ElevatorDescriptor descriptor() {
                            return new ElevatorDescriptor("sstf", List.of("shortest"), "shortest seek first (" + note + ")",
                                    List.of());
                        }

                        @Override
                        public Elevator create(QueueLimits limits, Map<String, Long> tunables) {
                            return new SstfElevator();
                        }
                    }
                    """,
            "org.example.sstf.SstfElevator", """
                    package org.example.sstf;

                    import java.util.ArrayList;
                    import java.util.List;
                    import java.util.Map;
                    import org.blockyard.api.io.*;

                    final class SstfElevator implements Elevator {
                        private final List<BlockRequest> queue = new ArrayList<>();
                        private long head, dispatched;

                        public void add(BlockRequest r, long now) { queue.add(r); }
                        public boolean allowMerge(BlockRequest r, IoRequest s, MergeKind k) { return true; }
                        public void merged(BlockRequest r, MergeKind k, long previousSector) {}
                        public void mergedRequests(BlockRequest r, BlockRequest next, long previousSector) { queue.remove(next); }
                        public Dispatch dispatch(long now) {
                            if (queue.isEmpty()) return Dispatch.IDLE;
                            BlockRequest best = queue.get(0);
                            for (BlockRequest r : queue)
                                if (Math.abs(r.sector() - head) < Math.abs(best.sector() - head)) best = r;
                            queue.remove(best);
                            head = best.sector() + best.sectors();
                            dispatched++;
                            SstfElevatorFactory.ISSUED.incrementAndGet();
                            return Dispatch.issue(best);
                        }
                        public void completed(BlockRequest r, long now) {}
                        public List<BlockRequest> drainAll() {
                            List<BlockRequest> all = new ArrayList<>(queue);
                            queue.clear();
                            return all;
                        }
                        public int queued() { return queue.size(); }
                        public Map<String, Object> stats() { return Map.of("sstf_dispatched", dispatched); }
                    }
                    """);

    /** Next fit: files spread round robin over the groups, each continuing where it left off. */
    static final Map<String, String> NEXTFIT = Map.of(
            "org.example.nextfit.NextFitPolicyFactory", """
                    package org.example.nextfit;

                    import java.util.List;
                    import java.util.Map;
                    import java.util.concurrent.atomic.AtomicInteger;
                    import org.blockyard.api.alloc.*;

                    public final class NextFitPolicyFactory implements AllocationPolicyFactory {
                        /** Files its policies placed: what a test reads to see that they ran. */
                        public static final java.util.concurrent.atomic.AtomicLong HOMES = new java.util.concurrent.atomic.AtomicLong();

                        private static final PolicyDescriptor D = new PolicyDescriptor("nextfit", List.of(),
                                "round-robin homes, first fit from the last block", List.of());

                        public PolicyDescriptor descriptor() { return D; }

                        public AllocationPolicy create(Geometry geometry, Map<String, Long> tunables) {
                            AtomicInteger next = new AtomicInteger();
                            return new AllocationPolicy() {
                                public String id() { return "nextfit"; }
                                public int initialWindowBlocks() { return 0; }
                                public int nextWindowBlocks(int p, long u, long w, int r, int g) { return 0; }
                                public int homeGroup(String file, Volume v) {
                                    HOMES.incrementAndGet();
                                    return Math.floorMod(next.getAndIncrement(), v.geometry().groups());
                                }
                                public long goal(long logical, long lastLogical, long lastPhysical, long preceding,
                                                 int home, Volume v) {
                                    Geometry g = v.geometry();
                                    if (lastPhysical >= 0 && lastPhysical + 1 < g.totalBlocks()) return lastPhysical + 1;
                                    return g.groupStart(home) + g.systemBlocks(home);
                                }
                                public long windowSearchStart(long goal, int windowBlocks, GroupView group) {
                                    return goal >= 0 ? goal : group.firstDataBlock();
                                }
                            };
                        }
                    }
                    """);

    /** An elevator whose activate method throws. */
    static final Map<String, String> BOOM = Map.of(
            "org.example.boom.BoomElevatorFactory", """
                    package org.example.boom;

                    import java.util.List;
                    import java.util.Map;
                    import org.blockyard.api.io.*;

                    public final class BoomElevatorFactory implements ElevatorFactory {
                        public void activate(Map<String, Object> properties) {
                            throw new IllegalStateException("no disk to seek on");
                        }
                        public ElevatorDescriptor descriptor() {
                            return new ElevatorDescriptor("boom", List.of(), "never", List.of());
                        }
                        public Elevator create(QueueLimits limits, Map<String, Long> tunables) {
                            throw new UnsupportedOperationException();
                        }
                    }
                    """);

    /** The DS descriptor of one component, with {@code properties} as {@code <property>} elements (name, value). */
    static String component(String componentClass, String serviceInterface, String... properties) {
        StringBuilder p = new StringBuilder();
        for (int i = 0; i < properties.length; i += 2)
            p.append("  <property name=\"").append(properties[i]).append("\" type=\"String\" value=\"")
                    .append(properties[i + 1]).append("\"/>\n");
        return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                + "<scr:component xmlns:scr=\"http://www.osgi.org/xmlns/scr/v1.3.0\" name=\"" + componentClass + "\">\n"
                + p
                + "  <service><provide interface=\"" + serviceInterface + "\"/></service>\n"
                + "  <implementation class=\"" + componentClass + "\"/>\n"
                + "</scr:component>\n";
    }

    /**
     * {@code sources} (class name to source) compiled against the test class path, packed as the bundle
     * {@code bsn} 1.0.0 at {@code jar}, importing {@code imports}, with {@code componentXml} as its one
     * Service-Component.
     */
    static Path bundle(Path jar, String bsn, String imports, Map<String, String> sources, String componentXml)
            throws IOException {
        Path work = Files.createTempDirectory(jar.getParent(), "build-");
        Path src = work.resolve("src"), classes = work.resolve("classes");
        List<String> args = new ArrayList<>(List.of("--release", "17", "-d", classes.toString(), "-classpath",
                System.getProperty("java.class.path"), "-proc:none"));
        for (var e : sources.entrySet()) {
            Path f = src.resolve(e.getKey().replace('.', '/') + ".java");
            Files.createDirectories(f.getParent());
            Files.writeString(f, e.getValue());
            args.add(f.toString());
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        java.io.ByteArrayOutputStream diagnostics = new java.io.ByteArrayOutputStream();
        int rc = javac.run(null, null, diagnostics, args.toArray(String[]::new));
        if (rc != 0) throw new IllegalStateException("the test plugin did not compile: " + diagnostics.toString(StandardCharsets.UTF_8));

        Manifest m = new Manifest();
        Attributes a = m.getMainAttributes();
        a.put(Attributes.Name.MANIFEST_VERSION, "1.0");
        a.putValue("Bundle-ManifestVersion", "2");
        a.putValue("Bundle-SymbolicName", bsn);
        a.putValue("Bundle-Version", "1.0.0");
        a.putValue("Import-Package", imports);
        a.putValue("Service-Component", "OSGI-INF/*.xml");
        try (OutputStream os = Files.newOutputStream(jar); JarOutputStream jo = new JarOutputStream(os, m);
             Stream<Path> files = Files.walk(classes)) {
            jo.putNextEntry(new JarEntry("OSGI-INF/component.xml"));
            jo.write(componentXml.getBytes(StandardCharsets.UTF_8));
            jo.closeEntry();
            for (Path c : files.filter(Files::isRegularFile).sorted().toList()) {
                jo.putNextEntry(new JarEntry(classes.relativize(c).toString().replace('\\', '/')));
                Files.copy(c, jo);
                jo.closeEntry();
            }
        }
        return jar;
    }

    /** The fifo plugin's jar as the reactor built it ({@code plugins/org.blockyard.plugin.fifo/target}). */
    static Path builtFifoJar() throws IOException {
        Path target = Path.of("..", "..", "plugins", "org.blockyard.plugin.fifo", "target");
        try (Stream<Path> s = Files.list(target)) {
            return s.filter(p -> p.getFileName().toString().matches("org\\.blockyard\\.plugin\\.fifo-.*\\.jar")).findFirst()
                    .orElseThrow(() -> new IllegalStateException("no fifo plugin jar in " + target.toAbsolutePath()
                            + " (package the plugins first)"));
        }
    }
}
