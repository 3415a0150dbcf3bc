package org.blockyard.benches;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.JarURLConnection;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.jar.Manifest;
import java.util.stream.Stream;

import com.typesafe.config.Config;

import org.blockyard.api.alloc.AllocationPolicyFactory;
import org.blockyard.api.io.ElevatorFactory;
import org.blockyard.runtime.alloc.PolicyRegistry;
import org.blockyard.runtime.io.ElevatorRegistry;
import org.blockyard.runtime.plugin.PluginFamily;
import org.blockyard.runtime.plugin.PluginRegistry;

/**
 * The plugins a benchmark can name: the plugin bundles the CLI ships (every bundle on the class path with a
 * Declarative Services component that provides a factory: the {@code plugins/} modules), then the bundles of
 * the {@code --deploy} folders ({@link #DEPLOY}), each loaded as the host's DS would load it
 * ({@link PluginBundle}), in the host's order: the shipped ones by symbolic name, then each folder's jars by
 * file name.
 *
 * <p>The host's rules for names apply: a deployed bundle of the same symbolic name as a shipped one is its next
 * revision and takes its place; a name (id or alias) that a built-in or another bundle already answers to is
 * refused, here in one line naming both (a host warns and keeps the first; a bench must not measure another
 * plugin than the one asked for). Loaded sets are kept for the process, by folder and by the jars' names, sizes
 * and times, so a bench that asks again gets the same factories and a rebuilt jar is loaded anew.
 */
public final class InstalledPlugins {
    /** Configuration path of the folders {@code --deploy} names: a list of paths. */
    public static final String DEPLOY = "blockyard.bench.deploy";

    private static volatile InstalledPlugins shipped;
    private static final Map<List<String>, InstalledPlugins> LOADED = new ConcurrentHashMap<>();

    private final List<PluginBundle> bundles;
    private final List<ElevatorFactory> elevators = new ArrayList<>();
    private final List<AllocationPolicyFactory> policies = new ArrayList<>();

    private InstalledPlugins(List<PluginBundle> bundles) {
        this.bundles = List.copyOf(bundles);
        Map<String, String> elevatorNames = new LinkedHashMap<>(), policyNames = new LinkedHashMap<>();
        ElevatorRegistry builtInElevators = ElevatorRegistry.builtIn();
        PolicyRegistry builtInPolicies = PolicyRegistry.builtIn();
        for (PluginBundle b : this.bundles) {
            take(b, b.elevators, builtInElevators, elevatorNames, elevators);
            take(b, b.policies, builtInPolicies, policyNames, policies);
        }
    }

    /**
     * Takes {@code b}'s {@code factories} into {@code into}: refused, naming {@code b}, when a name is a built-in's
     * or reserved ({@code builtIns}' rule, the registries' own) or when another bundle holds it ({@code taken}).
     */
    private static <F> void take(PluginBundle b, List<F> factories, PluginRegistry<F, ?, ?> builtIns,
                                 Map<String, String> taken, List<F> into) {
        for (F f : factories) {
            PluginFamily.Described d = builtIns.describe(f);
            String refusal = builtIns.refusalBesideBuiltIns(f);
            if (refusal != null)
                throw new PluginBundle.LoadFailed(b.name() + ": " + builtIns.noun() + " '" + d.id() + "' refused: " + refusal);
            claim(taken, builtIns.noun(), d.id(), d.aliases(), b);
            into.add(f);
        }
    }

    /** Takes {@code id} and {@code aliases} for {@code bundle}; one another bundle holds is a refusal naming both. */
    private static void claim(Map<String, String> taken, String kind, String id, List<String> aliases, PluginBundle bundle) {
        List<String> names = new ArrayList<>();
        names.add(id);
        names.addAll(aliases);
        for (String n : names) {
            String key = n.trim().toLowerCase(Locale.ROOT);
            String holder = taken.get(key);
            if (holder != null)
                throw new PluginBundle.LoadFailed(bundle.name() + ": " + kind + " '" + id + "' refused: '" + n + "' is "
                        + "already provided by " + holder);
        }
        for (String n : names) taken.put(n.trim().toLowerCase(Locale.ROOT), bundle.name());
    }

    /** The plugin elevators, in the order a listing shows them. */
    public List<ElevatorFactory> elevators() {
        return List.copyOf(elevators);
    }

    /** The plugin policies, in the order a listing shows them. */
    public List<AllocationPolicyFactory> policies() {
        return List.copyOf(policies);
    }

    /** The loaded bundles, as messages name them. */
    public List<String> bundles() {
        return bundles.stream().map(PluginBundle::name).toList();
    }

    /** The shipped plugins and those of the folders {@code config} names at {@link #DEPLOY}. */
    public static InstalledPlugins of(Config config) {
        List<Path> deploy = config.hasPath(DEPLOY) ? config.getStringList(DEPLOY).stream().map(Path::of).toList() : List.of();
        return of(deploy);
    }

    /** The shipped plugins and those of {@code deploy} (folders of jars, or jars). */
    public static InstalledPlugins of(List<Path> deploy) {
        if (deploy.isEmpty()) return shipped();
        List<Path> jars = new ArrayList<>();
        for (Path d : deploy) jars.addAll(jars(d));
        List<String> key = new ArrayList<>();
        for (Path j : jars) key.add(signature(j));
        InstalledPlugins known = LOADED.get(key);
        if (known != null) return known;
        List<PluginBundle> all = new ArrayList<>(shipped().bundles);
        Map<String, PluginBundle> deployed = new LinkedHashMap<>();
        for (Path j : jars) {
            PluginBundle b = PluginBundle.load(j, true);
            PluginBundle twin = deployed.put(b.symbolicName, b);
            if (twin != null)
                throw new PluginBundle.LoadFailed(b.name() + ": " + twin.name() + " is the same bundle; deploy one of them");
            // A deployed revision of a shipped bundle takes its place, as an update does in a host.
            all.removeIf(s -> s.symbolicName.equals(b.symbolicName));
            all.add(b);
        }
        InstalledPlugins p = new InstalledPlugins(all);
        LOADED.put(key, p);
        return p;
    }

    /** The plugin bundles the CLI ships: those on the class path, by symbolic name. */
    public static InstalledPlugins shipped() {
        InstalledPlugins s = shipped;
        if (s != null) return s;
        synchronized (InstalledPlugins.class) {
            if (shipped == null) shipped = new InstalledPlugins(onClassPath());
            return shipped;
        }
    }

    private static List<PluginBundle> onClassPath() {
        Map<String, PluginBundle> bySymbolicName = new java.util.TreeMap<>();
        try {
            Enumeration<URL> manifests = InstalledPlugins.class.getClassLoader().getResources("META-INF/MANIFEST.MF");
            while (manifests.hasMoreElements()) {
                URL url = manifests.nextElement();
                if (!declaresComponents(url)) continue;
                Path root = root(url);
                if (root == null) continue;
                PluginBundle b = PluginBundle.load(root, false);
                if (b != null) bySymbolicName.putIfAbsent(b.symbolicName, b); // the first on the class path, as classes go
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the class path's manifests: " + e.getMessage(), e);
        }
        return new ArrayList<>(bySymbolicName.values());
    }

    private static boolean declaresComponents(URL manifest) throws IOException {
        try (InputStream in = manifest.openStream()) {
            return new Manifest(in).getMainAttributes().getValue("Service-Component") != null;
        }
    }

    /** The jar or folder a manifest on the class path belongs to, or null when it is neither. */
    private static Path root(URL manifest) throws IOException {
        try {
            if (manifest.getProtocol().equals("jar")) {
                URL jar = ((JarURLConnection) manifest.openConnection()).getJarFileURL();
                return jar.getProtocol().equals("file") ? Path.of(jar.toURI()) : null;
            }
            if (manifest.getProtocol().equals("file")) return Path.of(manifest.toURI()).getParent().getParent();
        } catch (URISyntaxException e) {
            return null;
        }
        return null;
    }

    /** The jars {@code p} stands for: a jar itself, or a folder's {@code *.jar} by name. */
    private static List<Path> jars(Path p) {
        if (Files.isRegularFile(p) && p.getFileName().toString().endsWith(".jar")) return List.of(p);
        if (!Files.isDirectory(p))
            throw new BadOption("--deploy", p, "must be a folder of plugin jars (or one jar)");
        try (Stream<Path> s = Files.list(p)) {
            List<Path> out = s.filter(f -> f.getFileName().toString().endsWith(".jar") && Files.isRegularFile(f))
                    .sorted(Comparator.comparing(f -> f.getFileName().toString())).toList();
            if (out.isEmpty()) throw new BadOption("--deploy", p, "holds no plugin jar (*.jar)");
            return out;
        } catch (IOException e) {
            throw new BadOption("--deploy", p, "cannot be listed: " + e.getMessage());
        }
    }

    private static String signature(Path jar) {
        try {
            return jar.toAbsolutePath().normalize() + ":" + Files.size(jar) + ":" + Files.getLastModifiedTime(jar).toMillis();
        } catch (IOException e) {
            throw new BadOption("--deploy", jar, "cannot be read: " + e.getMessage());
        }
    }
}
