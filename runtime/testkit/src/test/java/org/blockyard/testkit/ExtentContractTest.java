package org.blockyard.testkit;

import org.junit.jupiter.api.Nested;

import org.blockyard.api.alloc.BlockAllocator;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.runtime.alloc.ActorBlockAllocator;
import org.blockyard.runtime.alloc.AllocatorSettings;
import org.blockyard.runtime.alloc.GlobalLockAllocator;
import org.blockyard.runtime.alloc.GroupLockAllocator;
import org.blockyard.runtime.alloc.ReservationPolicy;

/** The extent interface's contract, over the actors and the global-lock and group-locks peers alike. */
class ExtentContractTest {

    @Nested
    class Actors extends ExtentContract {
        @Override
        protected BlockAllocator start(Geometry g) {
            return ActorBlockAllocator.start(AllocatorSettings.of(g, ReservationPolicy.extended()));
        }
    }

    @Nested
    class GlobalLock extends ExtentContract {
        @Override
        protected BlockAllocator start(Geometry g) {
            return new GlobalLockAllocator(g, ReservationPolicy.extended());
        }
    }

    @Nested
    class GroupLocks extends ExtentContract {
        @Override
        protected BlockAllocator start(Geometry g) {
            return new GroupLockAllocator(g, ReservationPolicy.extended());
        }
    }
}
