package org.blockyard.runtime.alloc;

import java.util.Collection;
import java.util.concurrent.CompletionStage;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.Extent;

/**
 * The engine's tests' names for the testkit's {@link org.blockyard.testkit.AllocatorChecks} (compiled into these
 * tests from runtime/testkit/src/checks/java): one definition of the waits and the invariants for the engine and
 * the plugins alike.
 */
final class AllocatorChecks {
    private AllocatorChecks() {}

    static <T> T await(CompletionStage<T> stage) {
        return org.blockyard.testkit.AllocatorChecks.await(stage);
    }

    static <E extends AllocationException> E refused(Class<E> type, CompletionStage<?> stage) {
        return org.blockyard.testkit.AllocatorChecks.refused(type, stage);
    }

    static void checkInvariants(ActorBlockAllocator allocator, Collection<Extent> owned) {
        org.blockyard.testkit.AllocatorChecks.checkInvariants(allocator, owned);
    }
}
