package org.blockyard.embedded;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValueFactory;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;
import org.osgi.framework.ServiceRegistration;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.metatype.annotations.Designate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.blockyard.api.alloc.AllocationPolicyFactory;
import org.blockyard.api.alloc.BlockAllocator;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.api.alloc.PolicyDescriptor;
import org.blockyard.api.io.BlockQueue;
import org.blockyard.api.io.ElevatorDescriptor;
import org.blockyard.api.io.ElevatorFactory;
import org.blockyard.runtime.alloc.AllocatorBinding;
import org.blockyard.runtime.alloc.AllocatorSettings;
import org.blockyard.runtime.config.BlockyardConfig;
import org.blockyard.runtime.io.ActorBlockQueue;
import org.blockyard.runtime.io.BlockDevice;
import org.blockyard.runtime.io.FileDevice;
import org.blockyard.runtime.io.IoSettings;
import org.blockyard.runtime.io.MemoryDevice;
import org.blockyard.runtime.io.QueueBinding;
import org.blockyard.runtime.plugin.PluginBinder;
import org.blockyard.runtime.store.FileStore;

/**
 * The allocator and the block queue of one volume, as OSGi services of whatever framework this bundle is
 * installed in.
 *
 * <p>Activation starts a {@link FileStore} (one actor system: the allocator's group and file actors and the
 * queue actor) and registers its {@link BlockAllocator} and {@link BlockQueue}; deactivation unregisters
 * them first, then closes the store, which answers every call in flight with {@code Closed} and returns
 * once the actor system has terminated. A configuration change that only names another elevator or policy,
 * or sets tunables, is applied in place; any other change restarts the store. The component is enabled by
 * {@link SettingsCheck} only while its configuration can be, so a bad one never reaches activation.
 *
 * <p>{@link ElevatorFactory} and {@link AllocationPolicyFactory} services of other bundles are bound
 * dynamically and handed to the engine's {@link PluginBinder} of each family, the one the OSGi host uses: its
 * rules (names another bundle holds, revisions, the selection coming back with its plugin, configured
 * tunables) hold here as there. The callbacks run on framework threads, possibly while the store starts or
 * stops; {@link Bound} remembers the services across stores and offers them to the running one, and the
 * binders only tell the engine.
 *
 * <p>Akka picks the class loader of a new actor system from the creating thread's context class loader
 * ({@code ActorSystem.findClassLoader}). Activation sets it to this bundle's loader for the start, so the
 * system loads its extensions, dispatchers and mailboxes, and merges the {@code reference.conf} of every
 * jar, from this bundle's class path, whatever loader the framework thread carries.
 */
@Component(name = BlockyardComponent.PID, configurationPid = BlockyardComponent.PID,
        configurationPolicy = ConfigurationPolicy.OPTIONAL, immediate = true, service = {}, enabled = false)
@Designate(ocd = EmbeddedSettings.Ocd.class)
public final class BlockyardComponent {
    /** The configuration PID and the component name. */
    public static final String PID = "org.blockyard.embedded";

    private static final Logger LOG = LoggerFactory.getLogger(BlockyardComponent.class);

    private static final PluginBinder.Notices LOGGED = new PluginBinder.Notices() {
        @Override public void info(String line) { LOG.info(line); }
        @Override public void warn(String line) { LOG.warn(line); }
    };

    private final Bound<ElevatorFactory, ElevatorDescriptor> elevators = new Bound<>();
    private final Bound<AllocationPolicyFactory, PolicyDescriptor> policies = new Bound<>();

    private BundleContext context;
    private EmbeddedSettings settings;
    private FileStore store;
    private final List<ServiceRegistration<?>> registrations = new ArrayList<>();

    @Activate
    void activate(BundleContext context, EmbeddedSettings.Ocd config, Map<String, Object> properties) {
        this.context = context;
        EmbeddedSettings s = checked(config, properties);
        if (s != null) start(s);
    }

    @Modified
    void modified(EmbeddedSettings.Ocd config, Map<String, Object> properties) {
        EmbeddedSettings next = checked(config, properties);
        if (next != null && store != null && next.sameVolume(settings)) {
            settings = next;
            apply(next);
        } else {
            stop();
            if (next != null) start(next);
        }
    }

    @Deactivate
    void deactivate() {
        stop();
    }

    /**
     * The settings, or null when they cannot be: SettingsCheck, which reads the same configuration, says why in
     * one line and disables this component; until then it runs no volume.
     */
    private static EmbeddedSettings checked(EmbeddedSettings.Ocd config, Map<String, Object> properties) {
        try {
            EmbeddedSettings s = EmbeddedSettings.from(config, properties);
            for (String line : s.refused()) LOG.warn("{}: {}", PID, line);
            return s;
        } catch (IllegalArgumentException e) {
            LOG.debug("configuration refused: {}", e.getMessage());
            return null;
        }
    }

    // ---- plugins ----------------------------------------------------------------------------------------

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC)
    void bindElevator(ElevatorFactory factory, ServiceReference<ElevatorFactory> ref) {
        elevators.bind(ref, factory);
    }

    void unbindElevator(ElevatorFactory factory, ServiceReference<ElevatorFactory> ref) {
        elevators.unbind(ref);
    }

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC)
    void bindPolicy(AllocationPolicyFactory factory, ServiceReference<AllocationPolicyFactory> ref) {
        policies.bind(ref, factory);
    }

    void unbindPolicy(AllocationPolicyFactory factory, ServiceReference<AllocationPolicyFactory> ref) {
        policies.unbind(ref);
    }

    // ---- lifecycle --------------------------------------------------------------------------------------

    private void start(EmbeddedSettings s) {
        Config config = s.overrides().withFallback(BlockyardConfig.load()).resolve();
        AllocatorSettings alloc = AllocatorSettings.fromConfig(config, s.volumeBytes() / s.blockBytes());
        Geometry g = alloc.geometry();
        BlockDevice device = openDevice(s, g.bytes());
        IoSettings io = IoSettings.fromConfig(config);
        FileStore started;
        Thread t = Thread.currentThread();
        ClassLoader before = t.getContextClassLoader();
        t.setContextClassLoader(BlockyardComponent.class.getClassLoader());
        try {
            started = FileStore.start(alloc, io, device, config);
        } catch (RuntimeException e) {
            closeQuietly(device);
            throw e;
        } finally {
            t.setContextClassLoader(before);
        }
        store = started;
        settings = s;
        // The configured names are remembered before the plugins bound so far are offered, so that one of them
        // is selected as it arrives, and its tunables reach it first.
        var e = new PluginBinder<>(new QueueBinding((ActorBlockQueue) started.queue(), io.setup().registry()), LOGGED,
                s.elevator().isEmpty() ? io.setup().requestedElevator() : s.elevator());
        var p = new PluginBinder<>(new AllocatorBinding(started.allocator()), LOGGED,
                s.policy().isEmpty() ? config.getString("blockyard.alloc.policy") : s.policy());
        e.configure(s.tunables(EmbeddedSettings.ELEVATOR));
        p.configure(s.tunables(EmbeddedSettings.POLICY));
        elevators.attach(e);
        policies.attach(p);
        apply(s);

        Hashtable<String, Object> props = new Hashtable<>();
        props.put("blockyard.block.bytes", g.blockSizeBytes());
        props.put("blockyard.volume.blocks", g.totalBlocks());
        props.put("blockyard.device", s.device());
        props.put("service.description", "Blockyard " + g.totalBlocks() + " blocks of " + g.blockSizeBytes()
                + " bytes on " + s.device());
        registrations.add(context.registerService(BlockAllocator.class, started.allocator(), props));
        registrations.add(context.registerService(BlockQueue.class, started.queue(), props));
        LOG.info("blockyard started: {}", props.get("service.description"));
    }

    /** Selects the configured elevator and policy and sets the configured tunables, through the binders. */
    private void apply(EmbeddedSettings s) {
        PluginBinder<ElevatorFactory, ElevatorDescriptor> e = elevators.binder();
        PluginBinder<AllocationPolicyFactory, PolicyDescriptor> p = policies.binder();
        if (e == null || p == null) return;
        e.configure(s.tunables(EmbeddedSettings.ELEVATOR));
        p.configure(s.tunables(EmbeddedSettings.POLICY));
        if (!s.elevator().isEmpty()) e.select(s.elevator());
        if (!s.policy().isEmpty()) p.select(s.policy());
    }

    private void stop() {
        for (ServiceRegistration<?> r : registrations) {
            try {
                r.unregister();
            } catch (IllegalStateException alreadyGone) {
                // the framework unregisters a stopping bundle's services itself
            }
        }
        registrations.clear();
        elevators.detach();
        policies.detach();
        FileStore s = store;
        store = null;
        if (s != null) {
            s.close();
            LOG.info("blockyard stopped");
        }
    }

    private static BlockDevice openDevice(EmbeddedSettings s, long bytes) {
        try {
            return switch (s.device()) {
                case "memory" -> new MemoryDevice(bytes);
                case "file" -> new FileDevice(Path.of(s.filePath()), bytes, false);
                default -> throw new IllegalArgumentException("device must be memory or file, not " + s.device());
            };
        } catch (IOException e) {
            throw new IllegalStateException("device " + s.filePath() + " did not open: " + e.getMessage(), e);
        }
    }

    private static void closeQuietly(BlockDevice device) {
        try {
            device.close();
        } catch (IOException e) {
            LOG.warn("device did not close: {}", e.toString());
        }
    }

    /** Keys of the engine configuration this component sets; the rest comes from blockyard.conf. */
    static Config engineOverrides(Map<String, Object> values) {
        Map<String, Object> m = new HashMap<>(values);
        // The framework owns the life cycle: no JVM shutdown hook may hold on to a stopped bundle's system.
        m.put("akka.jvm-shutdown-hooks", "off");
        m.put("akka.coordinated-shutdown.run-by-jvm-shutdown-hook", "off");
        Config c = ConfigFactory.empty();
        for (Map.Entry<String, Object> e : m.entrySet())
            c = c.withValue(e.getKey(), ConfigValueFactory.fromAnyRef(e.getValue()));
        return c;
    }
}
