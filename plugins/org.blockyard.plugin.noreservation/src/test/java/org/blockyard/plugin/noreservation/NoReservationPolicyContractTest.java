package org.blockyard.plugin.noreservation;

import org.blockyard.api.alloc.AllocationPolicyFactory;
import org.blockyard.testkit.PolicyContract;

/** The plugin's policy keeps the allocator contract (conservation, no block owned twice). */
class NoReservationPolicyContractTest extends PolicyContract {
    @Override
    protected AllocationPolicyFactory factory() {
        return new NoReservationPolicyFactory();
    }
}
