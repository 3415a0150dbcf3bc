package org.blockyard.runtime.io;

import java.util.List;
import java.util.Map;

import org.blockyard.api.io.Elevator;
import org.blockyard.api.io.ElevatorDescriptor;
import org.blockyard.api.io.ElevatorFactory;
import org.blockyard.api.io.IoException;
import org.blockyard.api.io.QueueLimits;
import org.blockyard.runtime.io.elevator.DeadlineElevator;
import org.blockyard.runtime.io.elevator.NoopElevator;
import org.blockyard.runtime.plugin.PluginFamily;
import org.blockyard.runtime.plugin.PluginRegistry;

/**
 * The elevators a queue can run: a {@link PluginRegistry} (its rules are every family's) of
 * {@link ElevatorFactory}s, whose errors are {@link IoException}s. What is the elevators' own: {@code as}
 * always means {@code anticipatory}, and the last resort is {@code noop}, below the default (a queue whose
 * default failed runs on noop).
 */
public final class ElevatorRegistry extends PluginRegistry<ElevatorFactory, QueueLimits, Elevator> {

    /** Reserved alias: {@code as} is the old name of the anticipatory scheduler. */
    public static final Map<String, String> RESERVED_ALIASES = Map.of("as", "anticipatory");

    /** The elevator a queue falls back to when its default failed: a queue is never left without one. */
    public static final String LAST_RESORT = "noop";

    private static final PluginFamily<ElevatorFactory, QueueLimits, Elevator> ELEVATORS = new PluginFamily<>() {
        @Override public String noun() { return "io scheduler"; }
        @Override public Map<String, String> reservedAliases() { return RESERVED_ALIASES; }
        @Override public String lastResort() { return LAST_RESORT; }

        @Override
        public Described describe(ElevatorFactory factory) {
            ElevatorDescriptor d = factory.descriptor();
            return new Described(d.id(), d.aliases(), d.description(), d.tunables());
        }

        @Override
        public Elevator create(ElevatorFactory factory, QueueLimits limits, Map<String, Long> tunables) {
            return factory.create(limits, tunables);
        }

        @Override public RuntimeException unknown(String message) { return new IoException.UnknownElevator(message); }
        @Override public RuntimeException retired(String message) { return new IoException.ElevatorFailed(message); }
        @Override public RuntimeException badTunable(String message) { return new IoException.InvalidTunable(message); }

        @Override
        public RuntimeException failedToStart(String message, RuntimeException cause) {
            return cause instanceof IoException io ? io : new IoException.SwitchFailed(message, cause);
        }
    };

    public ElevatorRegistry(List<ElevatorFactory> builtIns, String defaultId) {
        super(ELEVATORS, builtIns, defaultId);
    }

    /** The default of the shipped configuration ({@code blockyard.io.default-scheduler}). */
    public static final String DEADLINE = "deadline";

    /** The registry with the built-in elevators, noop and deadline, {@link #DEADLINE} the default. */
    public static ElevatorRegistry builtIn() {
        return builtIn(DEADLINE);
    }

    /** The registry with the built-in elevators, noop and deadline. */
    public static ElevatorRegistry builtIn(String defaultId) {
        return new ElevatorRegistry(List.of(NoopElevator.FACTORY, DeadlineElevator.FACTORY), defaultId);
    }
}
