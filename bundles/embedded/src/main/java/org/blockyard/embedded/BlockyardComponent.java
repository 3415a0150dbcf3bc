package org.blockyard.embedded;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValueFactory;
import org.osgi.framework.BundleContext;
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
import org.blockyard.api.io.BlockQueue;
import org.blockyard.api.io.ElevatorFactory;
import org.blockyard.runtime.alloc.AllocatorSettings;
import org.blockyard.runtime.config.BlockyardConfig;
import org.blockyard.runtime.io.BlockDevice;
import org.blockyard.runtime.io.FileDevice;
import org.blockyard.runtime.io.IoSettings;
import org.blockyard.runtime.io.MemoryDevice;
import org.blockyard.runtime.store.FileStore;

/**
 * The allocator and the block queue of one volume, as OSGi services of whatever framework this bundle is
 * installed in.
 *
 * <p>Activation starts a {@link FileStore} (one actor system: the allocator's group and file actors and the
 * queue actor) and registers its {@link BlockAllocator} and {@link BlockQueue}; deactivation unregisters
 * them first, then closes the store, which answers every call in flight with {@code Closed} and returns
 * once the actor system has terminated. A configuration change that only names another elevator or policy
 * switches them in place; any other change restarts the store.
 *
 * <p>{@link ElevatorFactory} and {@link AllocationPolicyFactory} services of other bundles are bound
 * dynamically. Their callbacks run on framework threads, possibly while the store starts or stops, so they
 * only record the factory and tell the running store (a message to the queue actor; a registry entry and a
 * message to the allocator's actors); {@link #refs} is held just for that, never while a store starts or
 * stops.
 *
 * <p>Akka picks the class loader of a new actor system from the creating thread's context class loader
 * ({@code ActorSystem.findClassLoader}). Activation sets it to this bundle's loader for the start, so the
 * system loads its extensions, dispatchers and mailboxes, and merges the {@code reference.conf} of every
 * jar, from this bundle's class path, whatever loader the framework thread carries.
 */
@Component(name = BlockyardComponent.PID, configurationPid = BlockyardComponent.PID,
        configurationPolicy = ConfigurationPolicy.OPTIONAL, immediate = true, service = {})
@Designate(ocd = EmbeddedSettings.Ocd.class)
public final class BlockyardComponent {
    /** The configuration PID and the component name. */
    public static final String PID = "org.blockyard.embedded";

    private static final Logger LOG = LoggerFactory.getLogger(BlockyardComponent.class);

    private final Map<String, ElevatorFactory> elevators = new ConcurrentHashMap<>();
    private final Map<String, AllocationPolicyFactory> policies = new ConcurrentHashMap<>();
    /** Guards the hand-over of factories to {@link #store}; held only for tells, never for a start or stop. */
    private final Object refs = new Object();

    private BundleContext context;
    private EmbeddedSettings settings;
    private volatile FileStore store;
    private final List<ServiceRegistration<?>> registrations = new ArrayList<>();

    @Activate
    void activate(BundleContext context, EmbeddedSettings.Ocd config) {
        this.context = context;
        start(EmbeddedSettings.from(config));
    }

    @Modified
    void modified(EmbeddedSettings.Ocd config) {
        EmbeddedSettings next = EmbeddedSettings.from(config);
        if (next.sameVolume(settings)) {
            settings = next;
            select(store, next);
        } else {
            stop();
            start(next);
        }
    }

    @Deactivate
    void deactivate() {
        stop();
    }

    // ---- plugins ----------------------------------------------------------------------------------------

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC)
    void bindElevator(ElevatorFactory factory) {
        synchronized (refs) {
            elevators.put(factory.descriptor().id(), factory);
            FileStore s = store;
            if (s != null) s.registerElevator(factory);
        }
    }

    void unbindElevator(ElevatorFactory factory) {
        String id = factory.descriptor().id();
        synchronized (refs) {
            if (!elevators.remove(id, factory)) return;
            FileStore s = store;
            if (s != null) s.unregisterElevator(id);
        }
    }

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC)
    void bindPolicy(AllocationPolicyFactory factory) {
        synchronized (refs) {
            policies.put(factory.descriptor().id(), factory);
            FileStore s = store;
            if (s != null) registerPolicy(s, factory);
        }
    }

    void unbindPolicy(AllocationPolicyFactory factory) {
        String id = factory.descriptor().id();
        synchronized (refs) {
            if (!policies.remove(id, factory)) return;
            FileStore s = store;
            if (s != null) s.allocator().unregisterPolicy(id);
        }
    }

    private static void registerPolicy(FileStore s, AllocationPolicyFactory factory) {
        try {
            s.allocator().registerPolicy(factory);
        } catch (IllegalArgumentException e) {
            LOG.warn("allocation policy not registered: {}", e.getMessage());
        }
    }

    // ---- lifecycle --------------------------------------------------------------------------------------

    private void start(EmbeddedSettings s) {
        Config config = s.overrides().withFallback(BlockyardConfig.load()).resolve();
        AllocatorSettings alloc = AllocatorSettings.fromConfig(config, s.volumeBytes() / s.blockBytes());
        Geometry g = alloc.geometry();
        BlockDevice device = openDevice(s, g.bytes());
        FileStore started;
        Thread t = Thread.currentThread();
        ClassLoader before = t.getContextClassLoader();
        t.setContextClassLoader(BlockyardComponent.class.getClassLoader());
        try {
            started = FileStore.start(alloc, IoSettings.fromConfig(config), device, config);
        } catch (RuntimeException e) {
            closeQuietly(device);
            throw e;
        } finally {
            t.setContextClassLoader(before);
        }
        synchronized (refs) {
            store = started;
            for (ElevatorFactory f : elevators.values()) started.registerElevator(f);
            for (AllocationPolicyFactory f : policies.values()) registerPolicy(started, f);
        }
        settings = s;
        select(started, s);

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

    /** Selects the configured elevator and policy; one not installed yet is remembered by the allocator. */
    private static void select(FileStore s, EmbeddedSettings settings) {
        if (s == null) return;
        if (!settings.policy().isEmpty())
            s.allocator().setPolicy(settings.policy()).whenComplete((r, e) -> {
                if (e != null) LOG.warn("allocation policy {} not selected: {}", settings.policy(), e.toString());
                else if (r.fellBack()) LOG.warn("allocation policy {} is not installed; running {}", r.requested(), r.active());
            });
        if (!settings.elevator().isEmpty())
            s.queue().setElevator(settings.elevator()).whenComplete((r, e) -> {
                if (e != null) LOG.warn("io scheduler {} not selected: {}", settings.elevator(), e.toString());
            });
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
        FileStore s;
        synchronized (refs) {
            s = store;
            store = null;
        }
        if (s != null) s.close();
        LOG.info("blockyard stopped");
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
