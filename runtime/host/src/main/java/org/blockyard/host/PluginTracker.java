package org.blockyard.host;

import org.blockyard.runtime.plugin.PluginBinder;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;
import org.osgi.util.tracker.ServiceTrackerCustomizer;

/**
 * Hands every service of one plugin family's factory ({@code ElevatorFactory}, {@code AllocationPolicyFactory})
 * to the engine's {@link PluginBinder} for that family, naming the bundle it came from, and hands it back when
 * the service goes. The rules (names taken, revisions, the selection, tunables) are the binder's, the same as
 * in the embedded component; the callbacks run on framework threads, and the binder only tells the engine.
 */
final class PluginTracker<F, D> implements ServiceTrackerCustomizer<F, PluginBinder.Offer<F, D>> {
    private final BundleContext context;
    private final PluginBinder<F, D> binder;

    PluginTracker(BundleContext context, PluginBinder<F, D> binder) {
        this.context = context;
        this.binder = binder;
    }

    @Override
    public PluginBinder.Offer<F, D> addingService(ServiceReference<F> ref) {
        F factory = context.getService(ref);
        if (factory == null) return null;
        PluginBinder.Offer<F, D> offer = binder.add(factory, source(ref.getBundle()));
        if (offer == null) context.ungetService(ref);
        return offer;
    }

    @Override
    public void modifiedService(ServiceReference<F> ref, PluginBinder.Offer<F, D> offer) {}

    @Override
    public void removedService(ServiceReference<F> ref, PluginBinder.Offer<F, D> offer) {
        binder.remove(offer);
        context.ungetService(ref);
    }

    /** {@code b} as the binder tells revisions apart and names it. */
    static PluginBinder.Source source(Bundle b) {
        return new PluginBinder.Source(b == null ? null : b.getSymbolicName(), name(b));
    }

    static String name(Bundle b) {
        return b == null ? "?" : b.getSymbolicName() + " " + b.getVersion() + " [" + b.getBundleId() + "]";
    }
}
