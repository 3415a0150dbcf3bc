package org.blockyard.plugin.anticipatory;

import java.util.List;
import java.util.Map;

import org.blockyard.api.io.Elevator;
import org.blockyard.api.io.ElevatorDescriptor;
import org.blockyard.api.io.ElevatorFactory;
import org.blockyard.api.io.QueueLimits;
import org.blockyard.api.plugin.Tunable;
import org.osgi.service.component.annotations.Component;

/**
 * The anticipatory elevator's descriptor and factory, registered as an {@link ElevatorFactory} service while
 * this bundle is active. {@code as} is its old name (Linux {@code elevator=as}); the registry reserves that
 * alias for it. Tunables are those of {@code Documentation/block/as-iosched.txt}, in milliseconds, with the
 * Linux defaults at HZ = 1000; {@code est_time} is a statistic, shown by {@code stats()}.
 */
@Component(service = ElevatorFactory.class, property = {
        "blockyard.elevator.id=anticipatory",
        "blockyard.elevator.aliases=as"})
public final class AnticipatoryElevatorFactory implements ElevatorFactory {

    static final String ANTIC_EXPIRE = "antic_expire";
    static final String READ_EXPIRE = "read_expire";
    static final String WRITE_EXPIRE = "write_expire";
    static final String READ_BATCH_EXPIRE = "read_batch_expire";
    static final String WRITE_BATCH_EXPIRE = "write_batch_expire";

    static final ElevatorDescriptor DESCRIPTOR = new ElevatorDescriptor("anticipatory", List.of("as"),
            "deadline-like batches that idle briefly after a read for the reader's next one", List.of(
            new Tunable(ANTIC_EXPIRE, AnticipatoryElevator.ANTIC_EXPIRE_MS, 0, 1_000, "ms",
                    "longest wait for a reader's next request (HZ/150); a seek costs about as much; 0 = deadline-like"),
            new Tunable(READ_EXPIRE, AnticipatoryElevator.READ_EXPIRE_MS, 1, 600_000, "ms",
                    "a sync request waits at most this long before it is served out of order (HZ/8)"),
            new Tunable(WRITE_EXPIRE, AnticipatoryElevator.WRITE_EXPIRE_MS, 1, 600_000, "ms",
                    "an async write waits at most this long before it is served out of order (HZ/4)"),
            new Tunable(READ_BATCH_EXPIRE, AnticipatoryElevator.READ_BATCH_EXPIRE_MS, 1, 600_000, "ms",
                    "a read batch yields to waiting writes after this long (HZ/2): the price writers pay"),
            new Tunable(WRITE_BATCH_EXPIRE, AnticipatoryElevator.WRITE_BATCH_EXPIRE_MS, 1, 600_000, "ms",
                    "a write batch yields to waiting reads after this long (HZ/8); its request count is tuned to fit")));

    @Override
    public ElevatorDescriptor descriptor() {
        return DESCRIPTOR;
    }

    @Override
    public Elevator create(QueueLimits limits, Map<String, Long> tunables) {
        return new AnticipatoryElevator(tunables);
    }
}
