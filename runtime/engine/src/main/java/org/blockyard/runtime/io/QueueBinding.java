package org.blockyard.runtime.io;

import java.util.Optional;
import java.util.concurrent.CompletionStage;

import org.blockyard.api.io.ElevatorDescriptor;
import org.blockyard.api.io.ElevatorFactory;
import org.blockyard.runtime.plugin.PluginBinder;

/**
 * A running queue as the target of a {@link PluginBinder}: elevators come and go by messages to its actor,
 * which switches (to the default when the running one leaves); selection and tunables are asks.
 */
public final class QueueBinding implements PluginBinder.Target<ElevatorFactory, ElevatorDescriptor> {
    private final ActorBlockQueue queue;
    private final ElevatorRegistry registry;

    /** @param registry the registry of the queue's setup (the one its actor registers into) */
    public QueueBinding(ActorBlockQueue queue, ElevatorRegistry registry) {
        this.queue = queue;
        this.registry = registry;
    }

    @Override public ElevatorRegistry registry() { return registry; }
    @Override public ElevatorDescriptor descriptor(ElevatorFactory factory) { return factory.descriptor(); }
    @Override public void register(ElevatorFactory factory) { queue.actor().tell(new QueueActor.RegisterElevator(factory)); }
    @Override public void unregister(String id) { queue.actor().tell(new QueueActor.UnregisterElevator(id)); }
    @Override public CompletionStage<?> select(String name) { return queue.selectElevator(name); }

    @Override
    public CompletionStage<?> setTunable(String id, String name, long value) {
        return queue.setElevatorTunable(id, name, value);
    }

    @Override
    public CompletionStage<?> resetTunable(String id, String name) {
        return queue.resetElevatorTunable(id, name);
    }

    /** Unknown without asking the actor. */
    @Override public Optional<String> active() { return Optional.empty(); }
}
