package org.blockyard.runtime.io;

import java.time.Duration;
import java.util.function.Consumer;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.typed.ActorRef;

/** Runs a {@link QueueActor} in a test kit and hands its {@link ActorBlockQueue} to a scenario. */
final class ActorQueueHarness {
    private ActorQueueHarness() {}

    static void run(QueueSetup setup, BlockDevice device, Consumer<ActorBlockQueue> scenario) {
        // A test that sets no stall limit of its own is not about stalls: a JVM pause on a busy machine must
        // not retire its elevator mid-test.
        if (setup.elevatorStallLimitNanos() == QueueSetup.DEFAULT_STALL_LIMIT_NANOS)
            setup = setup.withStallLimit(Duration.ofSeconds(30).toNanos());
        ActorTestKit kit = ActorTestKit.create();
        try {
            ActorRef<QueueActor.Command> ref = kit.spawn(QueueActor.create(setup, device));
            scenario.accept(new ActorBlockQueue(ref, kit.scheduler(), setup.limits(), device.capacitySectors(),
                    Duration.ofSeconds(30)));
        } finally {
            kit.shutdownTestKit();
        }
    }
}
