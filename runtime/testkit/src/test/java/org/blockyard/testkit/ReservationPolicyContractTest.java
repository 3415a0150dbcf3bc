package org.blockyard.testkit;

import java.util.Map;

import org.junit.jupiter.api.Nested;

import org.blockyard.api.alloc.AllocationPolicyFactory;
import org.blockyard.runtime.alloc.ReservationPolicy;

/** The built-in policies keep the contract, in each of their modes. */
class ReservationPolicyContractTest {

    @Nested
    class Extended extends PolicyContract {
        @Override
        protected AllocationPolicyFactory factory() {
            return ReservationPolicy.FACTORY;
        }
    }

    @Nested
    class Ext3 extends PolicyContract {
        @Override
        protected AllocationPolicyFactory factory() {
            return ReservationPolicy.FACTORY;
        }

        @Override
        protected Map<String, Long> tunables() {
            return Map.of(ReservationPolicy.EXTENDED_TUNABLE, 0L);
        }
    }

    @Nested
    class WindowsOff extends PolicyContract {
        @Override
        protected AllocationPolicyFactory factory() {
            return ReservationPolicy.FACTORY;
        }

        @Override
        protected Map<String, Long> tunables() {
            return Map.of(ReservationPolicy.EXTENDED_TUNABLE, 0L, ReservationPolicy.INITIAL_TUNABLE, 0L);
        }
    }
}
