package org.blockyard.plugin.anticipatory;

import org.blockyard.api.io.ElevatorFactory;
import org.blockyard.testkit.ElevatorContract;

/** anticipatory keeps the queue's contract: every request issued once, merges, switching, FLUSH order. */
class AnticipatoryElevatorContractTest extends ElevatorContract {
    @Override
    protected ElevatorFactory factory() {
        return new AnticipatoryElevatorFactory();
    }
}
