package org.blockyard.api.alloc;

import java.util.Map;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * Builds allocation policies of one kind. Built-in policies are registered by the runtime; a plugin
 * registers its factory as an OSGi service (with the service properties {@code blockyard.policy.id} and
 * {@code blockyard.policy.aliases}) and the runtime offers it while the bundle is active.
 */
@ConsumerType
public interface AllocationPolicyFactory {

    PolicyDescriptor descriptor();

    /**
     * A new policy for a volume of {@code geometry}, with state of its own if it keeps any
     * ({@link AllocationPolicy}: what state a policy may keep). {@code tunables} holds every tunable of the
     * descriptor, already checked against its range; a change of one while the policy runs is a new call.
     * May throw to refuse; the allocator then keeps the policy it has.
     */
    AllocationPolicy create(Geometry geometry, Map<String, Long> tunables);
}
