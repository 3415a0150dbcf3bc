package org.blockyard.runtime.alloc;

import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Scheduler;
import akka.actor.typed.javadsl.AskPattern;

/**
 * Where an open file's requests go, as {@code Open} answers it: the {@link FileShard} that hosts the file
 * (most files: a file costs no actor of its own), or the file's own {@link FileActor}. A handle stays
 * valid for the file's life: requests sent through a stale one reach whoever serves the file now. Load
 * generators and other actors send {@link FileActor.Command}s through {@link #tell}; the answers come to
 * the {@code replyTo} in each request.
 *
 * <p>An actor's handle outlives its actor, which stops once it handed the file back: the shard that takes
 * the file back retires the handle ({@link #retire}), and from then on it sends to the shard. A send that
 * chose the actor before may still be under way in another thread, so the actor is told {@link FileActor.Stop}
 * only once the last such send is done, by that send: what it sent is ahead of the {@code Stop} in the actor's
 * mailbox, and forwarded. Nothing sent through a handle reaches a stopped actor.
 */
public final class FileHandle {
    /** In {@link #actorSends}: the shard took the file back and retired this handle. */
    private static final long RETIRED = 1;
    /** In {@link #actorSends}: one send to the actor under way. */
    private static final long SEND = 2;

    private final String name;
    private final ActorRef<FileShard.Command> shard;
    private final FileServer server;
    private final ActorRef<FileActor.Command> actor;
    /** An actor's handle: {@link #SEND} for each send to the actor under way, plus {@link #RETIRED}. */
    private final AtomicLong actorSends;

    FileHandle(String name, ActorRef<FileShard.Command> shard, FileServer server) {
        this(name, shard, server, null);
    }

    /** The handle of {@code actor}, the own actor of the file {@code server} serves, hosted by {@code shard}. */
    FileHandle(String name, ActorRef<FileShard.Command> shard, FileServer server, ActorRef<FileActor.Command> actor) {
        this.name = name;
        this.shard = shard;
        this.server = server;
        this.actor = actor;
        this.actorSends = actor != null ? new AtomicLong() : null;
    }

    public String file() {
        return name;
    }

    /** Sends one request for this file. */
    public void tell(FileActor.Command request) {
        if (enterActor()) {
            try {
                actor.tell(request);
            } finally {
                leaveActor();
            }
        } else {
            shard.tell(wrap(request));
        }
    }

    /** Asks the file's host {@code request}, made with the ask's reply-to. */
    <T> CompletionStage<T> ask(Function<ActorRef<T>, FileActor.Command> request, Duration timeout, Scheduler scheduler) {
        if (enterActor()) {
            try {
                return AskPattern.ask(actor, request::apply, timeout, scheduler);
            } finally {
                leaveActor();
            }
        }
        return AskPattern.ask(shard, r -> wrap(request.apply(r)), timeout, scheduler);
    }

    /** The message that carries {@code request} to the file's shard, which serves it or passes it on. */
    FileShard.Command wrap(FileActor.Command request) {
        return new FileShard.ToFile(server, request);
    }

    /** Whether this send goes to the actor: an actor's handle, not retired; then {@link #leaveActor} follows. */
    private boolean enterActor() {
        if (actor == null) return false;
        for (long s = actorSends.get(); (s & RETIRED) == 0; s = actorSends.get())
            if (actorSends.compareAndSet(s, s + SEND)) return true;
        return false;
    }

    private void leaveActor() {
        if (actorSends.addAndGet(-SEND) == RETIRED) actor.tell(FileActor.Stop.INSTANCE); // the last one stops it
    }

    /**
     * The file's actor handed the file back (its shard calls this once): sends choose the shard from now on,
     * and the actor is told {@link FileActor.Stop} once no send to it is under way, now or by the last of them.
     */
    void retire() {
        if (actorSends.getAndUpdate(s -> s | RETIRED) == 0) actor.tell(FileActor.Stop.INSTANCE);
    }

    /** The file's own actor, for an actor's handle; else null. */
    ActorRef<FileActor.Command> actor() {
        return actor;
    }

    @Override
    public String toString() {
        return "FileHandle[" + name + " via " + (actor != null ? actor.path() : shard.path()) + "]";
    }
}
