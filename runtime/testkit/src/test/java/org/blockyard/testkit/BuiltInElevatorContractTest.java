package org.blockyard.testkit;

import org.junit.jupiter.api.Nested;

import org.blockyard.api.io.ElevatorFactory;
import org.blockyard.runtime.io.elevator.DeadlineElevator;
import org.blockyard.runtime.io.elevator.NoopElevator;

/** The built-in elevators keep the queue's contract, as every plugin's must. */
class BuiltInElevatorContractTest {

    @Nested
    class Noop extends ElevatorContract {
        @Override
        protected ElevatorFactory factory() {
            return NoopElevator.FACTORY;
        }
    }

    @Nested
    class Deadline extends ElevatorContract {
        @Override
        protected ElevatorFactory factory() {
            return DeadlineElevator.FACTORY;
        }
    }
}
