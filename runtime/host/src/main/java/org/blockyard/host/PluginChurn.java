package org.blockyard.host;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.jar.JarEntry;
import java.util.jar.JarInputStream;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Stream;

import com.typesafe.config.Config;
import org.blockyard.runtime.alloc.AllocatorSettings;
import org.blockyard.benches.Swap;
import org.blockyard.runtime.io.BlockDevice;
import org.blockyard.runtime.io.IoSettings;
import org.blockyard.runtime.store.FileStore;
import org.osgi.framework.Bundle;
import org.osgi.framework.Constants;
import org.osgi.framework.Version;

/**
 * Plugin bundle events for {@code bench swap}, made the way a user makes them: through a host's deploy
 * folder. For the fifo elevator and the no-reservation policy in turn: install (the built jar copied in),
 * update (the same bundle with its micro version raised, written over it), uninstall (the jar deleted).
 * Each action returns only once FileInstall acted and the engine saw the result (the bundle at the expected
 * version and active, and the plugin offered to the queue or allocator; or the bundle gone and the plugin
 * withdrawn), so every counted event is real; an event not seen within {@link #EVENT_LIMIT} fails the run.
 *
 * <p>The actions run round robin in this order, so each one finds the state it expects: install fifo,
 * install no-reservation, update fifo, update no-reservation, uninstall fifo, uninstall no-reservation.
 */
final class PluginChurn {
    /** FileInstall's poll: short, since every event waits for two looks at the folder. */
    static final Duration POLL = Duration.ofMillis(10);
    /** How long one event may take before the run fails: FileInstall acts within tens of milliseconds. */
    static final Duration EVENT_LIMIT = Duration.ofSeconds(30);

    /** One plugin: its jar, the same bundle one micro version up, and whether the engine offers it now. */
    private record Plugin(String file, String symbolicName, Path jar, Path next, Version nextVersion,
                          Predicate<Host> offered) {}

    private final Path work;
    private final Path deploy;
    private final List<Plugin> plugins;
    private volatile Host host;

    private PluginChurn(Path work, List<Plugin> plugins) {
        this.work = work;
        this.deploy = work.resolve("deploy");
        this.plugins = plugins;
    }

    /** Churn of the plugin jars in {@code built}, with its host's folders under {@code work}. */
    static PluginChurn of(Path built, Path work) throws IOException {
        Path fifo = find(built, "org.blockyard.plugin.fifo");
        Path noReservation = find(built, "org.blockyard.plugin.noreservation");
        List<Plugin> plugins = List.of(
                plugin("fifo.jar", fifo, work, h -> join(h.store().queue().elevators()).contains("fifo")),
                plugin("noreservation.jar", noReservation, work,
                        h -> h.store().allocator().policies().ids().contains("no-reservation")));
        return new PluginChurn(work, plugins);
    }

    /** The elevators the plugins add to the ones cycled through. */
    List<String> elevators() {
        return List.of("fifo");
    }

    /** The six events, in the order they must run. */
    List<Runnable> actions() {
        List<Runnable> out = new ArrayList<>();
        for (Plugin p : plugins) out.add(() -> install(p));
        for (Plugin p : plugins) out.add(() -> update(p));
        for (Plugin p : plugins) out.add(() -> uninstall(p));
        return out;
    }

    /** Starts a host over the store Swap builds (no plugins at start; they come through the deploy folder). */
    Swap.Engine engine() {
        return new Swap.Engine() {
            @Override
            public FileStore start(AllocatorSettings settings, IoSettings io, BlockDevice device, Config config) {
                Host.Options options = Host.Options.defaults().withDeploy(deploy).withStorage(work.resolve("cache"))
                        .withPlugins(work.resolve("no-plugins")).withPoll(POLL);
                host = Host.start(options, config, io, hostIo -> FileStore.start(settings, hostIo, device, config));
                return host.store();
            }

            @Override
            public void stop(FileStore store) {
                Host h = host;
                if (h != null) h.close();
                else store.close();
            }
        };
    }

    private void install(Plugin p) {
        drop(p.jar(), p.file());
        Version v = version(p.jar());
        await("install " + p.symbolicName(), () -> active(p, v) && p.offered().test(host));
    }

    private void update(Plugin p) {
        drop(p.next(), p.file());
        await("update " + p.symbolicName(), () -> active(p, p.nextVersion()) && p.offered().test(host));
    }

    private void uninstall(Plugin p) {
        try {
            Files.delete(deploy.resolve(p.file()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        await("uninstall " + p.symbolicName(), () -> bundle(p) == null && !p.offered().test(host));
    }

    private boolean active(Plugin p, Version v) {
        Bundle b = bundle(p);
        return b != null && b.getState() == Bundle.ACTIVE && b.getVersion().equals(v);
    }

    private Bundle bundle(Plugin p) {
        for (Bundle b : host.framework().getBundleContext().getBundles())
            if (p.symbolicName().equals(b.getSymbolicName())) return b;
        return null;
    }

    /** Copies {@code jar} in under a name FileInstall ignores, then renames it, so it never sees half a file. */
    private void drop(Path jar, String name) {
        try {
            Path part = deploy.resolve(name + ".part");
            Files.copy(jar, part, StandardCopyOption.REPLACE_EXISTING);
            Files.move(part, deploy.resolve(name), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void await(String what, java.util.function.BooleanSupplier done) {
        long end = System.nanoTime() + EVENT_LIMIT.toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > end)
                throw new IllegalStateException("plugin bundle event not seen within " + EVENT_LIMIT.toSeconds()
                        + " s: " + what);
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted waiting for: " + what, e);
            }
        }
    }

    private static <T> T join(java.util.concurrent.CompletionStage<T> stage) {
        try {
            return stage.toCompletableFuture().get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("the engine did not answer: " + e, e);
        }
    }

    private static Plugin plugin(String file, Path jar, Path work, Predicate<Host> offered) throws IOException {
        Version v = version(jar);
        Version next = new Version(v.getMajor(), v.getMinor(), v.getMicro() + 1);
        Path nextJar = withVersion(jar, work.resolve("next-" + file), next);
        return new Plugin(file, symbolicName(jar), jar, nextJar, next, offered);
    }

    private static Path find(Path dir, String symbolicName) throws IOException {
        if (!Files.isDirectory(dir))
            throw new IllegalStateException("no plugin bundles in " + dir + " (build first: mvn -DskipTests package)");
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().startsWith(symbolicName + "-")
                            && p.getFileName().toString().endsWith(".jar")).findFirst()
                    .orElseThrow(() -> new IllegalStateException("no " + symbolicName + " jar in " + dir
                            + " (build first: mvn -DskipTests package)"));
        }
    }

    private static Manifest manifest(Path jar) {
        try (InputStream in = Files.newInputStream(jar); JarInputStream j = new JarInputStream(in)) {
            return j.getManifest();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Version version(Path jar) {
        return Version.parseVersion(manifest(jar).getMainAttributes().getValue(Constants.BUNDLE_VERSION));
    }

    private static String symbolicName(Path jar) {
        return manifest(jar).getMainAttributes().getValue(Constants.BUNDLE_SYMBOLICNAME).split(";")[0].trim();
    }

    /** {@code jar} with Bundle-Version {@code v}, written to {@code out}. */
    private static Path withVersion(Path jar, Path out, Version v) throws IOException {
        Files.createDirectories(out.getParent());
        try (InputStream in = Files.newInputStream(jar); JarInputStream j = new JarInputStream(in)) {
            Manifest m = new Manifest(j.getManifest());
            m.getMainAttributes().putValue(Constants.BUNDLE_VERSION, v.toString());
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
}
