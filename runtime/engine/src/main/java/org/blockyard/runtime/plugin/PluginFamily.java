package org.blockyard.runtime.plugin;

import java.util.List;
import java.util.Map;

import org.blockyard.api.plugin.Tunable;

/**
 * What one plugin family (elevators, allocation policies) tells the machinery they share: what its factories
 * are called, how one builds its product, and the exceptions its callers expect. Everything else, the rules
 * for names, defaults, faults, tunables and bundles, is {@link PluginRegistry}'s and {@link PluginBinder}'s,
 * the same for every family (Linux keeps one {@code elv_list} for every elevator).
 *
 * @param <F> the factory a plugin registers ({@code ElevatorFactory})
 * @param <C> what a factory builds from ({@code QueueLimits}, {@code Geometry})
 * @param <P> what it builds ({@code Elevator}, {@code AllocationPolicy})
 */
public interface PluginFamily<F, C, P> {

    /** What a factory is called and can be tuned with: its descriptor, read once when it is registered. */
    record Described(String id, List<String> aliases, String description, List<Tunable> tunables) {
        public Described {
            aliases = List.copyOf(aliases);
            tunables = List.copyOf(tunables);
        }
    }

    /** What messages call one of the family: {@code io scheduler}, {@code allocation policy}. */
    String noun();

    /** {@code factory}'s descriptor; may throw (a plugin's code). */
    Described describe(F factory);

    /** Aliases that always mean one id, which no other plugin may take ({@code as}: anticipatory). */
    default Map<String, String> reservedAliases() {
        return Map.of();
    }

    /**
     * The built-in id that is never retired, whatever it did: what runs when all else failed. Null: the default
     * (for policies the default is the last resort; the queue's is noop, below its default).
     */
    default String lastResort() {
        return null;
    }

    /** A new product of {@code factory} with every tunable's value; may throw (a plugin's code). */
    P create(F factory, C context, Map<String, Long> tunables);

    /** The id {@code product} says it has, to check against the one built; null for products that name none. */
    default String idOf(P product) {
        return null;
    }

    /** No plugin of that name is registered. */
    RuntimeException unknown(String message);

    /** The plugin was retired after a fault and is not registered anew. */
    RuntimeException retired(String message);

    /** A tunable the plugin does not have, or a value outside its range. */
    RuntimeException badTunable(String message);

    /** The factory threw, or built nothing or something else; {@code cause} is what it threw, or null. */
    RuntimeException failedToStart(String message, RuntimeException cause);
}
