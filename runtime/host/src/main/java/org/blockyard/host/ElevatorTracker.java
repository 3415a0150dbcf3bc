package org.blockyard.host;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

import org.blockyard.api.io.ElevatorDescriptor;
import org.blockyard.api.io.ElevatorFactory;
import org.blockyard.runtime.io.ActorBlockQueue;
import org.blockyard.runtime.io.QueueActor;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;
import org.osgi.util.tracker.ServiceTrackerCustomizer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Offers the queue every {@link ElevatorFactory} service that plugin bundles register, and takes it back
 * when the service goes. The callbacks run on framework threads, so they only tell the queue actor
 * ({@link QueueActor.RegisterElevator}, {@link QueueActor.UnregisterElevator}); the queue does the
 * switching, and falls back to its default when the active plugin leaves.
 *
 * <p>Rules:
 * <ul>
 * <li>An id or alias that a built-in elevator or an accepted plugin already answers to is refused: the
 *     service is not offered, nothing running changes, and one warning names both bundles. (Without this
 *     check the later bundle's departure would unregister the first one's elevator.)</li>
 * <li>A service from a bundle of the same symbolic name as the accepted one (the plugin's next revision,
 *     whose service may arrive before the old one's leaves while FileInstall updates and the framework
 *     refreshes it on two threads) replaces it; the old service's departure then changes nothing.</li>
 * <li>The selection is remembered by name ({@link #select}); when a plugin answering to it arrives (again,
 *     after an update), the queue is switched to it.</li>
 * </ul>
 * The queue hears of arrivals and departures in the order this tracker accepted them: each is told while
 * holding the lock that guards {@link #plugins}.
 */
final class ElevatorTracker implements ServiceTrackerCustomizer<ElevatorFactory, ElevatorTracker.Offered> {
    private static final Logger LOG = LoggerFactory.getLogger(ElevatorTracker.class);

    /** One accepted plugin elevator. */
    record Offered(String id, ElevatorDescriptor descriptor, Bundle bundle) {}

    private final BundleContext context;
    private final ActorBlockQueue queue;
    private final TunableOverlay overlay;
    private final Notices notices;
    private final Map<String, ElevatorDescriptor> builtIn;
    /** Accepted plugin elevators by id, in arrival order. Guarded by {@code this}. */
    private final Map<String, Offered> plugins = new LinkedHashMap<>();
    private volatile String selected;

    ElevatorTracker(BundleContext context, ActorBlockQueue queue, TunableOverlay overlay, Notices notices,
                    List<ElevatorDescriptor> builtIn, String selected) {
        this.context = context;
        this.notices = notices;
        this.queue = queue;
        this.overlay = overlay;
        Map<String, ElevatorDescriptor> b = new LinkedHashMap<>();
        for (ElevatorDescriptor d : builtIn) b.put(d.id(), d);
        this.builtIn = b;
        this.selected = selected;
    }

    @Override
    public Offered addingService(ServiceReference<ElevatorFactory> ref) {
        Bundle bundle = ref.getBundle();
        ElevatorFactory factory = context.getService(ref);
        if (factory == null) return null;
        ElevatorDescriptor d;
        try {
            d = factory.descriptor();
        } catch (RuntimeException e) {
            notices.warn(LOG, "io scheduler of bundle " + name(bundle) + " refused: its descriptor failed: " + e);
            context.ungetService(ref);
            return null;
        }
        Offered offered = new Offered(d.id(), d, bundle);
        Offered replaced;
        synchronized (this) {
            replaced = sameBundle(d, bundle);
            if (replaced != null) plugins.remove(replaced.id());
            String clash = clash(d);
            if (clash != null) {
                if (replaced != null) plugins.put(replaced.id(), replaced);
                notices.warn(LOG, "io scheduler '" + d.id() + "' of bundle " + name(bundle) + " refused: " + clash
                        + "; nothing changed");
                context.ungetService(ref);
                return null;
            }
            plugins.put(d.id(), offered);
            if (replaced != null) queue.actor().tell(new QueueActor.UnregisterElevator(replaced.id()));
            queue.actor().tell(new QueueActor.RegisterElevator(overlay.wrap(factory)));
        }
        notices.info(LOG, "io scheduler " + d.id() + " available (bundle " + name(bundle) + ")"
                + (replaced == null ? "" : ", in place of the one of bundle " + name(replaced.bundle())));
        String wanted = selected;
        if (wanted != null && answersTo(d, wanted)) {
            queue.setElevator(wanted).whenComplete((s, e) -> {
                if (e != null) notices.warn(LOG, "io scheduler " + d.id() + " is back but could not be selected: "
                        + e.getMessage());
                else notices.info(LOG, "io scheduler " + s.active() + " is back and selected again");
            });
        }
        return offered;
    }

    @Override
    public void modifiedService(ServiceReference<ElevatorFactory> ref, Offered offered) {}

    @Override
    public void removedService(ServiceReference<ElevatorFactory> ref, Offered offered) {
        boolean current;
        synchronized (this) {
            current = plugins.get(offered.id()) == offered; // by identity: a replacement may equal it field by field
            if (current) {
                plugins.remove(offered.id());
                queue.actor().tell(new QueueActor.UnregisterElevator(offered.id()));
            }
        }
        context.ungetService(ref);
        if (!current) {
            notices.info(LOG, "io scheduler " + offered.id() + " of bundle " + name(offered.bundle())
                    + " went away, already replaced");
            return;
        }
        String wanted = selected;
        if (wanted != null && answersTo(offered.descriptor(), wanted))
            notices.warn(LOG, "io scheduler " + offered.id() + " went away (bundle " + name(offered.bundle())
                    + "); the queue falls back to its default until a bundle offers " + wanted + " again");
        else
            notices.info(LOG, "io scheduler " + offered.id() + " went away (bundle " + name(offered.bundle()) + ")");
    }

    /** Remembers {@code name} as the chosen elevator, so a plugin answering to it is switched to on arrival. */
    void select(String name) {
        this.selected = name;
    }

    String selected() {
        return selected;
    }

    /** The descriptor of a built-in or plugin elevator answering to {@code name}. */
    synchronized Optional<ElevatorDescriptor> descriptor(String name) {
        for (ElevatorDescriptor d : all()) if (answersTo(d, name)) return Optional.of(d);
        return Optional.empty();
    }

    /** Built-in elevators, then plugins in arrival order. */
    synchronized List<ElevatorDescriptor> all() {
        List<ElevatorDescriptor> out = new ArrayList<>(builtIn.values());
        for (Offered o : plugins.values()) out.add(o.descriptor());
        return out;
    }

    /**
     * The accepted plugin answering to one of {@code d}'s names whose bundle has {@code bundle}'s symbolic name,
     * or null. Caller holds {@code this}.
     */
    private Offered sameBundle(ElevatorDescriptor d, Bundle bundle) {
        for (Offered o : plugins.values()) {
            if (!sameSymbolicName(o.bundle(), bundle)) continue;
            if (answersTo(o.descriptor(), d.id()) || d.aliases().stream().anyMatch(a -> answersTo(o.descriptor(), a)))
                return o;
        }
        return null;
    }

    /** Why {@code d} cannot be accepted, or null. Caller holds {@code this}. */
    private String clash(ElevatorDescriptor d) {
        List<String> names = new ArrayList<>();
        names.add(d.id());
        names.addAll(d.aliases());
        for (String n : names) {
            if (builtIn.containsKey(n) || builtIn.values().stream().anyMatch(b -> b.aliases().contains(n)))
                return "'" + n + "' is a built-in io scheduler";
            for (Offered o : plugins.values())
                if (answersTo(o.descriptor(), n))
                    return "'" + n + "' is already provided by bundle " + name(o.bundle());
        }
        return null;
    }

    private static boolean answersTo(ElevatorDescriptor d, String name) {
        String n = name.trim().toLowerCase(Locale.ROOT);
        return d.id().equals(n) || d.aliases().contains(n);
    }

    /** Whether {@code a} and {@code b} are revisions of one bundle (the same symbolic name). */
    static boolean sameSymbolicName(Bundle a, Bundle b) {
        return a != null && b != null && a.getSymbolicName() != null && a.getSymbolicName().equals(b.getSymbolicName());
    }

    static String name(Bundle b) {
        return b == null ? "?" : b.getSymbolicName() + " " + b.getVersion() + " [" + b.getBundleId() + "]";
    }
}
