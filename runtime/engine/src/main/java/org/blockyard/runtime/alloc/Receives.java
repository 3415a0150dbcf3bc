package org.blockyard.runtime.alloc;

import akka.actor.typed.Behavior;
import akka.actor.typed.Signal;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;

/**
 * A {@link Receive} that hands every message to one method, for actors that dispatch with
 * {@code instanceof} themselves. Akka's {@code ReceiveBuilder} matches each message against its cases
 * with an {@code OptionVal} and a boxed tuple per case tried: about 800 bytes and a few hundred
 * nanoseconds per small file here, for nothing an {@code instanceof} chain does not do.
 */
public final class Receives {
    private Receives() {}

    /** What an actor does with one message. */
    @FunctionalInterface
    public interface OnMessage<T> {
        Behavior<T> apply(T message) throws Exception;
    }

    /** What an actor does with one signal. */
    @FunctionalInterface
    public interface OnSignal<T> {
        Behavior<T> apply(Signal signal) throws Exception;
    }

    /** Messages to {@code onMessage}; signals are left unhandled. */
    public static <T> Receive<T> of(OnMessage<T> onMessage) {
        return of(onMessage, s -> Behaviors.unhandled());
    }

    public static <T> Receive<T> of(OnMessage<T> onMessage, OnSignal<T> onSignal) {
        return new Receive<>() {
            @Override
            public Behavior<T> receiveMessage(T message) throws Exception {
                return onMessage.apply(message);
            }

            @Override
            public Behavior<T> receiveSignal(Signal signal) throws Exception {
                return onSignal.apply(signal);
            }
        };
    }
}
