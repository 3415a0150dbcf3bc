package org.blockyard.plugin.fifo;

import java.util.List;
import java.util.Map;

import org.blockyard.api.io.Elevator;
import org.blockyard.api.io.ElevatorDescriptor;
import org.blockyard.api.io.ElevatorFactory;
import org.blockyard.api.io.QueueLimits;
import org.blockyard.api.plugin.Tunable;
import org.osgi.service.component.annotations.Component;

/**
 * The fifo elevator's descriptor and factory, registered as an {@link ElevatorFactory} service while this
 * bundle is active. The service properties repeat the descriptor's id and aliases so a host can filter
 * without calling into the bundle.
 */
@Component(service = ElevatorFactory.class, property = {
        "blockyard.elevator.id=fifo",
        "blockyard.elevator.aliases=strict"})
public final class FifoElevatorFactory implements ElevatorFactory {

    static final String FRONT_MERGES = "front_merges";

    static final ElevatorDescriptor DESCRIPTOR = new ElevatorDescriptor("fifo", List.of("strict"),
            "strict arrival order; front merges off unless asked for",
            List.of(new Tunable(FRONT_MERGES, 0, 0, 1, "bool",
                    "a front merge moves a request's start backwards; 0 keeps every request starting where it arrived")));

    @Override
    public ElevatorDescriptor descriptor() {
        return DESCRIPTOR;
    }

    @Override
    public Elevator create(QueueLimits limits, Map<String, Long> tunables) {
        return new FifoElevator(tunables);
    }
}
