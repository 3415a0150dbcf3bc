package org.blockyard.plugin.noreservation;

import java.util.List;
import java.util.Map;

import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.AllocationPolicyFactory;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.api.alloc.PolicyDescriptor;
import org.osgi.service.component.annotations.Component;

/** The no-reservation policy's descriptor and factory, an {@link AllocationPolicyFactory} service while active. */
@Component(service = AllocationPolicyFactory.class, property = "blockyard.policy.id=" + NoReservationPolicy.ID)
public final class NoReservationPolicyFactory implements AllocationPolicyFactory {

    static final PolicyDescriptor DESCRIPTOR = new PolicyDescriptor(NoReservationPolicy.ID, List.of(),
            "no reservation windows: ext3's goals and group walk, first fit (mount -o noreservation)", List.of());

    private static final NoReservationPolicy POLICY = new NoReservationPolicy();

    @Override
    public PolicyDescriptor descriptor() {
        return DESCRIPTOR;
    }

    @Override
    public AllocationPolicy create(Geometry geometry, Map<String, Long> tunables) {
        return POLICY;
    }
}
