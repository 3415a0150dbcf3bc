package org.blockyard.embedded;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

import org.osgi.framework.Bundle;
import org.osgi.framework.ServiceReference;

import org.blockyard.runtime.plugin.PluginBinder;

/**
 * The services of one plugin family bound to the component, in the order they were bound, and the engine's
 * binder of the store running now, if one runs: each service bound is offered to it, and to every store
 * started later. The rules are the binder's; this only remembers what SCR bound across store restarts.
 */
final class Bound<F, D> {
    private final Map<ServiceReference<F>, F> services = new LinkedHashMap<>();
    private final Map<ServiceReference<F>, PluginBinder.Offer<F, D>> offers = new HashMap<>();
    private PluginBinder<F, D> binder;

    synchronized void bind(ServiceReference<F> ref, F factory) {
        services.put(ref, factory);
        if (binder != null) offer(ref, factory);
    }

    synchronized void unbind(ServiceReference<F> ref) {
        services.remove(ref);
        PluginBinder.Offer<F, D> offer = offers.remove(ref);
        if (binder != null && offer != null) binder.remove(offer);
    }

    /** A store started: {@code next} is offered every service bound, in order. */
    synchronized void attach(PluginBinder<F, D> next) {
        binder = next;
        offers.clear();
        services.forEach(this::offer);
    }

    /** The store is stopping: its binder is dropped (the store takes its plugins with it). */
    synchronized void detach() {
        binder = null;
        offers.clear();
    }

    synchronized PluginBinder<F, D> binder() {
        return binder;
    }

    private void offer(ServiceReference<F> ref, F factory) {
        PluginBinder.Offer<F, D> offer = binder.add(factory, source(ref.getBundle()));
        if (offer != null) offers.put(ref, offer);
    }

    private static PluginBinder.Source source(Bundle b) {
        return new PluginBinder.Source(b == null ? null : b.getSymbolicName(),
                b == null ? "?" : b.getSymbolicName() + " " + b.getVersion() + " [" + b.getBundleId() + "]");
    }
}
