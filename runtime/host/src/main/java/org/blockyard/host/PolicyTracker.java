package org.blockyard.host;

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
 */
final class PolicyTracker implements ServiceTrackerCustomizer<AllocationPolicyFactory, PolicyDescriptor> {
    private static final Logger LOG = LoggerFactory.getLogger(PolicyTracker.class);

    private final BundleContext context;
    private final ActorBlockAllocator allocator;
    private final Notices notices;

    PolicyTracker(BundleContext context, ActorBlockAllocator allocator, Notices notices) {
        this.context = context;
        this.allocator = allocator;
        this.notices = notices;
    }

    @Override
    public PolicyDescriptor addingService(ServiceReference<AllocationPolicyFactory> ref) {
        Bundle bundle = ref.getBundle();
        AllocationPolicyFactory factory = context.getService(ref);
        if (factory == null) return null;
        PolicyDescriptor d;
        try {
            d = factory.descriptor();
            allocator.registerPolicy(factory);
        } catch (RuntimeException e) {
            notices.warn(LOG, "allocation policy of bundle " + ElevatorTracker.name(bundle) + " refused: "
                    + e.getMessage() + "; nothing changed");
            context.ungetService(ref);
            return null;
        }
        notices.info(LOG, "allocation policy " + d.id() + " available (bundle " + ElevatorTracker.name(bundle) + ")");
        return d;
    }

    @Override
    public void modifiedService(ServiceReference<AllocationPolicyFactory> ref, PolicyDescriptor d) {}

    @Override
    public void removedService(ServiceReference<AllocationPolicyFactory> ref, PolicyDescriptor d) {
        boolean active = d.id().equals(allocator.policy());
        allocator.unregisterPolicy(d.id());
        context.ungetService(ref);
        notices.info(LOG, "allocation policy " + d.id() + " went away (bundle " + ElevatorTracker.name(ref.getBundle())
                + ")" + (active ? "; the allocator fell back to its default, " + allocator.policies().defaultId() : ""));
    }
}
