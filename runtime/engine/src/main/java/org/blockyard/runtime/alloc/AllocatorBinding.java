package org.blockyard.runtime.alloc;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.AllocationPolicyFactory;
import org.blockyard.api.alloc.PolicyDescriptor;
import org.blockyard.runtime.plugin.PluginBinder;

/**
 * A running allocator as the target of a {@link PluginBinder}: {@link ActorBlockAllocator#registerPolicy}
 * and the rest, none of which waits for the actors.
 */
public final class AllocatorBinding implements PluginBinder.Target<AllocationPolicyFactory, PolicyDescriptor> {
    private final ActorBlockAllocator allocator;

    public AllocatorBinding(ActorBlockAllocator allocator) {
        this.allocator = allocator;
    }

    @Override public PolicyRegistry registry() { return allocator.policies(); }
    @Override public PolicyDescriptor descriptor(AllocationPolicyFactory factory) { return factory.descriptor(); }
    @Override public void register(AllocationPolicyFactory factory) { allocator.registerPolicy(factory); }
    @Override public void unregister(String id) { allocator.unregisterPolicy(id); }
    @Override public CompletionStage<?> select(String name) { return allocator.setPolicy(name); }

    @Override
    public CompletionStage<?> setTunable(String id, String name, long value) {
        return allocator.setPolicyTunable(id, name, value);
    }

    /** Drops the run-time value, then sets what applies without it, so that a running policy is rebuilt. */
    @Override
    public CompletionStage<?> resetTunable(String id, String name) {
        Long value;
        try {
            allocator.policies().resetTunable(id, name);
            value = allocator.policies().values(id).get(name);
        } catch (AllocationException e) {
            return CompletableFuture.failedFuture(e);
        }
        if (value == null)
            return CompletableFuture.failedFuture(new AllocationException.InvalidRequest(id + " has no tunable " + name));
        return allocator.setPolicyTunable(id, name, value);
    }

    @Override public Optional<String> active() { return Optional.of(allocator.policy()); }
}
