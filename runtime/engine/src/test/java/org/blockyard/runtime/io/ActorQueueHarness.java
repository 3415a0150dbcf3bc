package org.blockyard.runtime.io;

import java.time.Duration;
import java.util.function.Consumer;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.typed.ActorRef;

/** Runs a {@link QueueActor} in a test kit and hands its {@link ActorBlockQueue} to a scenario. */
final class ActorQueueHarness {
    private ActorQueueHarness() {}

    static void run(QueueSetup setup, BlockDevice device, Consumer<ActorBlockQueue> scenario) {
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
