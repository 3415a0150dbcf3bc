package org.blockyard.plugin.fifo;

import org.blockyard.api.io.ElevatorFactory;
import org.blockyard.testkit.ElevatorContract;

/** The plugin's elevator keeps the queue's contract: every request issued once, merges, switching, FLUSH order. */
class FifoElevatorContractTest extends ElevatorContract {
    @Override
    protected ElevatorFactory factory() {
        return new FifoElevatorFactory();
    }
}
