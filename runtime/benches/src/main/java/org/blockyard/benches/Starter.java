package org.blockyard.benches;

import java.util.List;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.Behaviors;

/**
 * Starts load clients from inside the actor system. Messages told from a thread outside the system
 * are external submissions to the dispatcher's fork-join pool, which a worker only looks at when its own
 * queue is empty: with two workers busy ping-ponging with the first two clients, the other clients'
 * start messages would wait until those two finished, and the clients would run two at a time. Told
 * from an actor, every client's mailbox is queued on a worker, in order, and all of them run together.
 */
public final class Starter {
    private Starter() {}

    public static <T> Behavior<Object> create(List<ActorRef<T>> clients, T go) {
        return Behaviors.receive((ctx, msg) -> {
            for (ActorRef<T> c : clients) c.tell(go);
            return Behaviors.stopped();
        });
    }

    /**
     * Runs {@code start} once on a dispatcher thread of the allocator's actor system, for clients that are
     * not actors but chains of asks: their first asks are then sent from inside the system too.
     */
    static void runInside(org.blockyard.runtime.alloc.ActorBlockAllocator allocator, Runnable start, String name) {
        allocator.spawn(Behaviors.<Object>receive((ctx, msg) -> {
            start.run();
            return Behaviors.stopped();
        }), name).tell(Boolean.TRUE);
    }

    /** Tells every client {@code go} from inside the allocator's actor system. */
    public static <T> void startAll(org.blockyard.runtime.alloc.ActorBlockAllocator allocator, List<ActorRef<T>> clients, T go,
                             String name) {
        allocator.spawn(create(clients, go), name).tell(Boolean.TRUE);
    }
}
