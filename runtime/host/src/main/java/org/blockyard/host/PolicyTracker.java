package org.blockyard.host;

import java.util.HashMap;
import java.util.Map;

import org.blockyard.api.alloc.AllocationPolicyFactory;
import org.blockyard.api.alloc.PolicyDescriptor;
import org.blockyard.runtime.alloc.ActorBlockAllocator;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;
import org.osgi.util.tracker.ServiceTrackerCustomizer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Offers the allocator every {@link AllocationPolicyFactory} service of a plugin bundle, and takes it back
 * when the service goes. The allocator does the rest ({@link ActorBlockAllocator#registerPolicy}: refuse a
 * taken id, switch to a returning selection; {@link ActorBlockAllocator#unregisterPolicy}: fall back to the
 * default first). Neither call waits for the actors, so the framework thread is not held.
 *
 * <p>As for elevators ({@link ElevatorTracker}), a service from a bundle of the same symbolic name as the one
 * that holds the id (the plugin's next revision, which may arrive before the old one leaves) replaces it, and
 * the old one's departure then changes nothing.
 */
final class PolicyTracker implements ServiceTrackerCustomizer<AllocationPolicyFactory, PolicyTracker.Offered> {
    private static final Logger LOG = LoggerFactory.getLogger(PolicyTracker.class);

    /** One accepted plugin policy. */
    record Offered(PolicyDescriptor descriptor, AllocationPolicyFactory factory, Bundle bundle) {}

    private final BundleContext context;
    private final ActorBlockAllocator allocator;
    private final Notices notices;
    /** The accepted plugin policies by id. Guarded by {@code this}. */
    private final Map<String, Offered> accepted = new HashMap<>();

    PolicyTracker(BundleContext context, ActorBlockAllocator allocator, Notices notices) {
        this.context = context;
        this.allocator = allocator;
        this.notices = notices;
    }

    @Override
    public Offered addingService(ServiceReference<AllocationPolicyFactory> ref) {
        Bundle bundle = ref.getBundle();
        AllocationPolicyFactory factory = context.getService(ref);
        if (factory == null) return null;
        Offered offered;
        Offered replaced = null;
        try {
            PolicyDescriptor d = factory.descriptor();
            offered = new Offered(d, factory, bundle);
            synchronized (this) {
                Offered old = accepted.get(d.id());
                if (old != null && ElevatorTracker.sameSymbolicName(old.bundle(), bundle)) {
                    replaced = old;
                    allocator.unregisterPolicy(d.id());
                }
                try {
                    allocator.registerPolicy(factory);
                } catch (RuntimeException e) {
                    if (replaced != null) allocator.registerPolicy(replaced.factory()); // as it was
                    throw e;
                }
                accepted.put(d.id(), offered);
            }
        } catch (RuntimeException e) {
            notices.warn(LOG, "allocation policy of bundle " + ElevatorTracker.name(bundle) + " refused: "
                    + e.getMessage() + "; nothing changed");
            context.ungetService(ref);
            return null;
        }
        String instead = replaced == null ? ""
                : ", in place of the one of bundle " + ElevatorTracker.name(replaced.bundle());
        notices.info(LOG, "allocation policy " + offered.descriptor().id() + " available (bundle "
                + ElevatorTracker.name(bundle) + ")" + instead);
        return offered;
    }

    @Override
    public void modifiedService(ServiceReference<AllocationPolicyFactory> ref, Offered offered) {}

    @Override
    public void removedService(ServiceReference<AllocationPolicyFactory> ref, Offered offered) {
        String id = offered.descriptor().id();
        boolean active;
        synchronized (this) {
            if (accepted.get(id) != offered) { // by identity: replaced by a newer one of its bundle
                context.ungetService(ref);
                notices.info(LOG, "allocation policy " + id + " of bundle " + ElevatorTracker.name(ref.getBundle())
                        + " went away, already replaced");
                return;
            }
            accepted.remove(id);
            active = id.equals(allocator.policy());
            allocator.unregisterPolicy(id);
        }
        context.ungetService(ref);
        notices.info(LOG, "allocation policy " + id + " went away (bundle " + ElevatorTracker.name(ref.getBundle())
                + ")" + (active ? "; the allocator fell back to its default, " + allocator.policies().defaultId() : ""));
    }
}
