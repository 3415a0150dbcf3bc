package org.blockyard.host;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.concurrent.CountDownLatch;
import java.util.function.Function;
import java.util.stream.Stream;

import com.typesafe.config.Config;
import org.apache.felix.gogo.runtime.activator.Activator;
import org.apache.felix.service.command.CommandProcessor;
import org.apache.felix.service.command.CommandSession;
import org.apache.felix.service.command.Converter;
import org.blockyard.api.alloc.AllocationPolicyFactory;
import org.blockyard.api.alloc.PolicyDescriptor;
import org.blockyard.api.io.ElevatorDescriptor;
import org.blockyard.api.io.ElevatorFactory;
import org.blockyard.runtime.alloc.AllocatorBinding;
import org.blockyard.runtime.alloc.AllocatorSettings;
import org.blockyard.runtime.config.BlockyardConfig;
import org.blockyard.runtime.io.ActorBlockQueue;
import org.blockyard.runtime.io.BlockDevice;
import org.blockyard.runtime.io.ElevatorRegistry;
import org.blockyard.runtime.io.IoSettings;
import org.blockyard.runtime.io.QueueBinding;
import org.blockyard.runtime.plugin.PluginBinder;
import org.blockyard.runtime.plugin.PluginRegistry;
import org.blockyard.runtime.store.FileStore;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleException;
import org.osgi.framework.Constants;
import org.osgi.framework.ServiceRegistration;
import org.osgi.framework.launch.Framework;
import org.osgi.framework.launch.FrameworkFactory;
import org.osgi.util.tracker.ServiceTracker;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One engine and one embedded OSGi framework in one process.
 *
 * <p>The engine is a {@link FileStore} (allocator and I/O queue in one actor system) on the device the
 * configuration names for the host. The framework is Apache Felix, found with {@link ServiceLoader}; its
 * system bundle exports the API packages with their versions (read from the API bundle's manifest), so
 * plugins import the very classes the engine uses. Gogo's runtime runs inside the system bundle (the host
 * creates sessions with the same classes); Declarative Services, FileInstall and Gogo's commands are bundles
 * installed at start, then the plugins built with the host, then FileInstall watches the deploy folder. The
 * host has its own console, not Felix's console bundle, so it registers what that bundle would for Gogo's
 * commands ({@link BundleConverter}: bundle ids and names as arguments), and two {@code felix:} commands of
 * its own ({@link FelixCommands}: {@code refresh}, {@code help SCOPE}).
 *
 * <p>Start order: engine, framework init, shell, trackers, bundles, framework start. Close runs it
 * backwards: framework (plugins leave, the queue falls back), then the engine. Close is idempotent.
 */
public final class Host implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Host.class);

    /**
     * Where things are. Null fields take the configuration's value ({@code blockyard.host}) or, for the
     * bundle folders, the ones built beside the host jar.
     *
     * @param config           configuration layered over the defaults, or null
     * @param deploy           folder FileInstall watches
     * @param storage          framework bundle cache (wiped at start)
     * @param frameworkBundles DS, FileInstall, Gogo commands and their dependencies
     * @param plugins          plugin bundles installed at start (null: the built ones; a missing folder: none)
     * @param poll             FileInstall's poll interval
     */
    public record Options(Path config, Path deploy, Path storage, Path frameworkBundles, Path plugins, Duration poll) {
        public static Options defaults() {
            return new Options(null, null, null, null, null, null);
        }

        public Options withConfig(Path p) { return new Options(p, deploy, storage, frameworkBundles, plugins, poll); }
        public Options withDeploy(Path p) { return new Options(config, p, storage, frameworkBundles, plugins, poll); }
        public Options withStorage(Path p) { return new Options(config, deploy, p, frameworkBundles, plugins, poll); }
        public Options withPlugins(Path p) { return new Options(config, deploy, storage, frameworkBundles, p, poll); }
        public Options withPoll(Duration d) { return new Options(config, deploy, storage, frameworkBundles, plugins, d); }
    }

    private final FileStore store;
    private final Framework framework;
    private final Activator gogo = new Activator();
    private final Notices notices = new Notices();
    private final ElevatorRegistry elevatorRegistry;
    private final Map<String, Map<String, Long>> configuredTunables;
    private final PluginBinder<ElevatorFactory, ElevatorDescriptor> elevators;
    private final ServiceTracker<ElevatorFactory, PluginBinder.Offer<ElevatorFactory, ElevatorDescriptor>> elevatorTracker;
    private final ServiceTracker<AllocationPolicyFactory, PluginBinder.Offer<AllocationPolicyFactory, PolicyDescriptor>>
            policyTracker;
    private final DeployWatch deployWatch;
    private final Path deploy;
    private final CountDownLatch shutdownRequested = new CountDownLatch(1);
    private final List<ServiceRegistration<?>> shellRegistrations = new ArrayList<>();
    private final ShellBench bench = new ShellBench();
    private boolean closed;

    private Host(FileStore store, Framework framework, IoSettings io, String selectedPolicy, Path deploy,
                 Duration poll) {
        this.store = store;
        this.framework = framework;
        this.elevatorRegistry = io.setup().registry();
        this.configuredTunables = io.setup().tunables();
        this.deploy = deploy;
        BundleContext ctx = framework.getBundleContext();
        PluginBinder.Notices said = new PluginBinder.Notices() {
            @Override public void info(String line) { notices.info(LOG, line); }
            @Override public void warn(String line) { notices.warn(LOG, line); }
        };
        this.elevators = new PluginBinder<>(new QueueBinding(queue(), elevatorRegistry), said,
                io.setup().requestedElevator());
        this.elevatorTracker = new ServiceTracker<>(ctx, ElevatorFactory.class, new PluginTracker<>(ctx, elevators));
        this.policyTracker = new ServiceTracker<>(ctx, AllocationPolicyFactory.class, new PluginTracker<>(ctx,
                new PluginBinder<>(new AllocatorBinding(store.allocator()), said, selectedPolicy)));
        this.deployWatch = new DeployWatch(ctx, deploy, notices, poll);
    }

    /** Starts the engine and the framework; on failure whatever started is stopped again. */
    public static Host start(Options options) {
        Config config = BlockyardConfig.load(options.config());
        IoSettings io = IoSettings.fromConfig(config);
        BlockDevice device;
        try {
            device = io.openDevice(config.getString("blockyard.host.device"));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open the host's device: " + e.getMessage(), e);
        }
        int blockBytes = config.getInt("blockyard.volume.block-size");
        long blocks = device.capacitySectors() * 512 / blockBytes;
        return start(options, config, io,
                hostIo -> FileStore.start(AllocatorSettings.fromConfig(config, blocks), hostIo, device, config));
    }

    /**
     * Starts the framework over an engine the caller builds: {@code engine} gets {@code io} with an elevator
     * registry of the host's own in its setup (the built-ins, with the given default; everything else, the
     * events too, as given) and answers a started store, which the host then owns: {@link #close} closes it.
     * {@code config} replaces {@code options.config()}. On failure whatever started is stopped again.
     */
    public static Host start(Options options, Config config, IoSettings io, Function<IoSettings, FileStore> engine) {
        Config h = config.getConfig("blockyard.host");
        Path deploy = options.deploy() != null ? options.deploy() : Path.of(h.getString("deploy"));
        Path storage = options.storage() != null ? options.storage() : Path.of(h.getString("storage"));
        Duration poll = options.poll() != null ? options.poll() : h.getDuration("poll");
        Path built = builtDir();
        Path frameworkBundles = options.frameworkBundles() != null ? options.frameworkBundles() : built.resolve("bundles");
        Path plugins = options.plugins() != null ? options.plugins() : builtPlugins();
        try {
            Files.createDirectories(deploy);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot create the deploy folder " + deploy + ": " + e.getMessage());
        }

        io = io.withSetup(io.setup().withRegistry(ElevatorRegistry.builtIn(io.setup().registry().defaultId())));
        FileStore store = engine.apply(io);

        Framework framework = null;
        Host host = null;
        try {
            framework = newFramework(storage, deploy, poll);
            framework.init();
            host = new Host(store, framework, io, config.getString("blockyard.alloc.policy"), deploy, poll);
            host.bench.engine(h.getString("device"), io.submitTimeout());
            host.startShellAndBundles(frameworkBundles, plugins);
            framework.start();
            LOG.info("host running: {} bundles, deploy folder {}", framework.getBundleContext().getBundles().length,
                    deploy.toAbsolutePath());
            return host;
        } catch (BundleException | RuntimeException e) {
            if (host != null) host.close();
            else {
                stopFramework(framework);
                store.close();
            }
            if (e instanceof RuntimeException r) throw r;
            throw new IllegalStateException("the framework did not start: " + e.getMessage(), e);
        }
    }

    private static Framework newFramework(Path storage, Path deploy, Duration poll) {
        Map<String, Object> p = new HashMap<>();
        p.put(Constants.FRAMEWORK_STORAGE, storage.toAbsolutePath().toString());
        p.put(Constants.FRAMEWORK_STORAGE_CLEAN, Constants.FRAMEWORK_STORAGE_CLEAN_ONFIRSTINIT);
        p.put(Constants.FRAMEWORK_SYSTEMPACKAGES_EXTRA,
                SystemPackages.exportsOf(Host.class.getClassLoader(), "org.blockyard.api", "org.apache.felix.gogo.runtime"));
        // Gogo's runtime runs in the system bundle, so the system bundle offers what its bundle would.
        p.put(Constants.FRAMEWORK_SYSTEMCAPABILITIES_EXTRA,
                "org.apache.felix.gogo;org.apache.felix.gogo=runtime.implementation;version:Version=1.0.0");
        p.put("felix.log.logger", new FelixLog());
        p.put("felix.log.level", "2");
        p.put("felix.fileinstall.dir", DeployWatch.watchedDir(deploy));
        // FileInstall's messages to the JDK's logger, where FileInstallLog takes them (not stdout, with traces).
        p.put("felix.fileinstall.log.default", "jul");
        // Only finished jars: a copy in progress named *.tmp or *.part is never looked at.
        p.put("felix.fileinstall.filter", ".*\\.jar");
        p.put("felix.fileinstall.poll", Long.toString(poll.toMillis()));
        p.put("felix.fileinstall.noInitialDelay", "true");
        p.put("felix.fileinstall.bundles.new.start", "true");
        p.put("felix.fileinstall.subdir.mode", "skip");
        p.put("felix.fileinstall.log.level", "2");
        FrameworkFactory factory = ServiceLoader.load(FrameworkFactory.class, Host.class.getClassLoader()).findFirst()
                .orElseThrow(() -> new IllegalStateException("no OSGi framework on the class path"));
        @SuppressWarnings({"unchecked", "rawtypes"})
        Map<String, String> config = (Map) p; // Felix takes objects too (the logger)
        return factory.newFramework(config);
    }

    private void startShellAndBundles(Path frameworkBundles, Path plugins) throws BundleException {
        BundleContext ctx = framework.getBundleContext();
        try {
            gogo.start(ctx);
        } catch (Exception e) {
            throw new IllegalStateException("the Gogo runtime did not start: " + e.getMessage(), e);
        }
        // What a Felix console bundle would register: bundle ids and names as Bundle arguments (headers 12).
        shellRegistrations.add(ctx.registerService(Converter.class, new BundleConverter(ctx), null));
        Hashtable<String, Object> props = new Hashtable<>();
        props.put(CommandProcessor.COMMAND_SCOPE, "blockyard");
        props.put(CommandProcessor.COMMAND_FUNCTION, BlockyardCommands.FUNCTIONS);
        shellRegistrations.add(ctx.registerService(BlockyardCommands.class, new BlockyardCommands(this), props));
        Hashtable<String, Object> felix = new Hashtable<>();
        felix.put(CommandProcessor.COMMAND_SCOPE, FelixCommands.SCOPE);
        felix.put(CommandProcessor.COMMAND_FUNCTION, FelixCommands.FUNCTIONS);
        felix.put(Constants.SERVICE_RANKING, FelixCommands.RANKING);
        shellRegistrations.add(ctx.registerService(FelixCommands.class, new FelixCommands(ctx), felix));
        elevatorTracker.open();
        policyTracker.open();

        List<Bundle> installed = new ArrayList<>();
        for (Path jar : jars(frameworkBundles, true)) installed.add(ctx.installBundle(jar.toUri().toString()));
        for (Path jar : jars(plugins, false)) installed.add(ctx.installBundle(jar.toUri().toString()));
        for (Bundle b : installed) {
            if (b.getHeaders().get(Constants.FRAGMENT_HOST) != null) continue;
            try {
                b.start();
            } catch (BundleException e) {
                notices.warn(LOG, "bundle " + PluginTracker.name(b) + " did not start: " + e.getMessage());
            }
        }
    }

    /** The jars in {@code dir}, by name. */
    private static List<Path> jars(Path dir, boolean required) {
        if (!Files.isDirectory(dir)) {
            if (required) throw new IllegalStateException("framework bundles not found in " + dir
                    + " (build the host module first: mvn -DskipTests package)");
            return List.of();
        }
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().endsWith(".jar")).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The plugin bundles built with the host ({@code target/plugins} of the host module). */
    public static Path builtPlugins() {
        return builtDir().resolve("plugins");
    }

    /** The folder the host's classes were loaded from: {@code target/} of the host module. */
    private static Path builtDir() {
        try {
            Path code = Path.of(Host.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            return code.getParent();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    public FileStore store() {
        return store;
    }

    ActorBlockQueue queue() {
        return (ActorBlockQueue) store.queue();
    }

    public Framework framework() {
        return framework;
    }

    /** The elevator plugins' binder: the selection remembered by name, the descriptors of what is installed. */
    PluginBinder<ElevatorFactory, ElevatorDescriptor> elevators() {
        return elevators;
    }

    /** The run-time tunable values of the queue's elevators, kept by its registry. */
    PluginRegistry.TunableValues overlay() {
        return elevatorRegistry.tunableValues();
    }

    ShellBench bench() {
        return bench;
    }

    /** The configured value of each tunable of elevator {@code id} (under the run-time values). */
    Map<String, Long> configuredTunables(String id) {
        return configuredTunables.getOrDefault(id, Map.of());
    }

    List<String> notices() {
        return notices.lines();
    }

    public List<String> noticeLines() {
        return notices.lines();
    }

    Path deploy() {
        return deploy;
    }

    Notices noticeBoard() {
        return notices;
    }

    /** A shell session reading {@code in} and writing to {@code out} and {@code err}. */
    public CommandSession session(InputStream in, OutputStream out, OutputStream err) {
        BundleContext ctx = framework.getBundleContext();
        var ref = ctx.getServiceReference(CommandProcessor.class);
        if (ref == null) throw new IllegalStateException("the shell is not running");
        return ctx.getService(ref).createSession(in, out, err);
    }

    /** Asks the console loop to end ({@code blockyard:shutdown}). */
    void requestShutdown() {
        shutdownRequested.countDown();
    }

    public boolean shutdownRequested() {
        return shutdownRequested.getCount() == 0;
    }

    @Override
    public synchronized void close() {
        if (closed) return;
        closed = true;
        requestShutdown();
        bench.close(); // a running blockyard:bench ends before the engine closes under it
        deployWatch.close();
        for (ServiceTracker<?, ?> t : List.of(elevatorTracker, policyTracker)) {
            try {
                t.close();
            } catch (RuntimeException e) {
                LOG.debug("tracker close: {}", e.toString());
            }
        }
        for (ServiceRegistration<?> r : shellRegistrations) {
            try {
                r.unregister();
            } catch (IllegalStateException gone) {
                // already unregistered with the framework
            }
        }
        try {
            gogo.stop(framework.getBundleContext());
        } catch (Exception e) {
            LOG.debug("gogo stop: {}", e.toString());
        }
        stopFramework(framework);
        store.close();
    }

    private static void stopFramework(Framework framework) {
        if (framework == null) return;
        try {
            framework.stop();
            framework.waitForStop(60_000);
        } catch (BundleException | InterruptedException e) {
            if (e instanceof InterruptedException) Thread.currentThread().interrupt();
            LOG.warn("the framework did not stop cleanly: {}", e.getMessage());
        }
    }
}
