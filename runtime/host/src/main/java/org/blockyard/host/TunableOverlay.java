package org.blockyard.host;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.blockyard.api.io.Elevator;
import org.blockyard.api.io.ElevatorDescriptor;
import org.blockyard.api.io.ElevatorFactory;
import org.blockyard.api.io.QueueLimits;

/**
 * Tunable values set from the shell, per elevator id, laid over the configured ones whenever the queue builds
 * an elevator. The queue resolves the configured values (and checks them) before it calls a factory; the
 * factories the host hands the queue are wrapped so they see the shell's values on top. Values are checked
 * against the descriptor before they are stored, so what is stored always resolves.
 *
 * <p>Thread-safe: the shell writes, the queue actor reads.
 */
final class TunableOverlay {
    private final Map<String, Map<String, Long>> byId = new ConcurrentHashMap<>();

    /** The values set from the shell for {@code id} (possibly none). */
    Map<String, Long> overrides(String id) {
        return byId.getOrDefault(id, Map.of());
    }

    void set(String id, String name, long value) {
        byId.compute(id, (k, old) -> {
            Map<String, Long> m = new LinkedHashMap<>(old == null ? Map.of() : old);
            m.put(name, value);
            return Map.copyOf(m);
        });
    }

    /** {@code factory} building its elevators with the shell's values over the ones the queue passes. */
    ElevatorFactory wrap(ElevatorFactory factory) {
        return new ElevatorFactory() {
            @Override
            public ElevatorDescriptor descriptor() {
                return factory.descriptor();
            }

            @Override
            public Elevator create(QueueLimits limits, Map<String, Long> tunables) {
                Map<String, Long> values = new LinkedHashMap<>(tunables);
                values.putAll(overrides(factory.descriptor().id()));
                return factory.create(limits, Map.copyOf(values));
            }
        };
    }
}
