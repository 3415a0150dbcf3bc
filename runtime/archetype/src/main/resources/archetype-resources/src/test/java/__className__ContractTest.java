package ${package};

#if ($kind == "policy")
import java.util.Map;

import org.blockyard.api.alloc.AllocationPolicyFactory;
import org.blockyard.testkit.PolicyContract;

/**
 * The policy keeps the allocator's contract: files and extents allocated, truncated and released
 * concurrently, and after every round no block owned twice, free plus allocated the capacity, windows
 * inside their groups. The suite's tests run with the defaults; {@link WindowsOff} runs them again with
 * windows off.
 */
class ${className}ContractTest extends PolicyContract {

    @Override
    protected AllocationPolicyFactory factory() {
        return new ${className}Factory();
    }

    @org.junit.jupiter.api.Nested
    class WindowsOff extends PolicyContract {
        @Override
        protected AllocationPolicyFactory factory() {
            return new ${className}Factory();
        }

        @Override
        protected Map<String, Long> tunables() {
            return Map.of(${className}Factory.WINDOW_BLOCKS, 0L);
        }
    }
}
#else
import org.blockyard.api.io.ElevatorFactory;
import org.blockyard.testkit.ElevatorContract;

/**
 * The elevator keeps the queue's contract, on the virtual clock: every submission issued once and
 * completed once, merges within the limits, nothing across a FLUSH, and switching to and from it a hundred
 * times under load losing nothing.
 */
class ${className}ContractTest extends ElevatorContract {

    @Override
    protected ElevatorFactory factory() {
        return new ${className}Factory();
    }
}
#end
