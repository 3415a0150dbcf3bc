package org.blockyard.plugin.cfq;

import org.blockyard.api.io.ElevatorFactory;
import org.blockyard.testkit.ElevatorContract;

/** cfq keeps the queue's contract: every request issued once, merges, switching, FLUSH order. */
class CfqElevatorContractTest extends ElevatorContract {
    @Override
    protected ElevatorFactory factory() {
        return new CfqElevatorFactory();
    }
}
