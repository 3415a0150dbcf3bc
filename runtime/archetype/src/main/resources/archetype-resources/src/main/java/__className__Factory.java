package ${package};

import java.util.List;
import java.util.Map;

#if ($kind == "policy")
import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.AllocationPolicyFactory;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.api.alloc.PolicyDescriptor;
import org.blockyard.api.plugin.Tunable;
import org.osgi.service.component.annotations.Component;

/**
 * The ${pluginId} policy's descriptor and factory: Declarative Services registers it as an
 * {@link AllocationPolicyFactory} service while this bundle is active, and the host offers it to the
 * allocator ({@code blockyard:policy ${pluginId}} selects it). The service property repeats the id, so the
 * host can filter without calling into the bundle.
 */
@Component(service = AllocationPolicyFactory.class, property = "blockyard.policy.id=" + ${className}Factory.ID)
public final class ${className}Factory implements AllocationPolicyFactory {

    static final String ID = "${pluginId}";
    static final String WINDOW_BLOCKS = "window_blocks";

    static final PolicyDescriptor DESCRIPTOR = new PolicyDescriptor(ID, List.of(),
            "reservation windows of a fixed size, goals after the file's last block",
            List.of(new Tunable(WINDOW_BLOCKS, 64, 0, 1 << 20, "blocks",
                    "each file's window: wider keeps concurrent writers apart, narrower leaves less unused; 0: none")));

    @Override
    public PolicyDescriptor descriptor() {
        return DESCRIPTOR;
    }

    /** {@code tunables} holds every tunable, resolved against {@link #DESCRIPTOR} by the allocator. */
    @Override
    public AllocationPolicy create(Geometry geometry, Map<String, Long> tunables) {
        return new ${className}(tunables.get(WINDOW_BLOCKS), geometry);
    }
}
#else
import org.blockyard.api.io.Elevator;
import org.blockyard.api.io.ElevatorDescriptor;
import org.blockyard.api.io.ElevatorFactory;
import org.blockyard.api.io.QueueLimits;
import org.blockyard.api.plugin.Tunable;
import org.osgi.service.component.annotations.Component;

/**
 * The ${pluginId} elevator's descriptor and factory: Declarative Services registers it as an
 * {@link ElevatorFactory} service while this bundle is active, and the host offers it to the queue
 * ({@code blockyard:scheduler ${pluginId}} selects it). The service property repeats the id, so the host can
 * filter without calling into the bundle.
 */
@Component(service = ElevatorFactory.class, property = "blockyard.elevator.id=" + ${className}Factory.ID)
public final class ${className}Factory implements ElevatorFactory {

    static final String ID = "${pluginId}";
    static final String FRONT_MERGES = "front_merges";

    static final ElevatorDescriptor DESCRIPTOR = new ElevatorDescriptor(ID, List.of(),
            "requests in arrival order; front merges off unless asked for",
            List.of(new Tunable(FRONT_MERGES, 0, 0, 1, "bool",
                    "a front merge moves a request's start backwards; 0 keeps every request starting where it arrived")));

    @Override
    public ElevatorDescriptor descriptor() {
        return DESCRIPTOR;
    }

    /** {@code tunables} holds every tunable, resolved against {@link #DESCRIPTOR} by the queue. */
    @Override
    public Elevator create(QueueLimits limits, Map<String, Long> tunables) {
        return new ${className}(tunables.get(FRONT_MERGES) != 0);
    }
}
#end
