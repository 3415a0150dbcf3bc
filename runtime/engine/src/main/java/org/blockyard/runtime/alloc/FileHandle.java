package org.blockyard.runtime.alloc;

import akka.actor.typed.ActorRef;

/**
 * Where an open file's requests go, as {@code Open} answers it: the {@link FileShard} that hosts the file
 * (most files: a file costs no actor of its own), or the file's own {@link FileActor}. A handle stays
 * valid for the file's life: requests sent through a stale one reach whoever serves the file now. Load
 * generators and other actors send {@link FileActor.Command}s through {@link #tell}; the answers come to
 * the {@code replyTo} in each request.
 */
public final class FileHandle {
    private final String name;
    private final ActorRef<FileShard.Command> shard;
    private final FileServer server;
    private final ActorRef<FileActor.Command> actor;

    FileHandle(String name, ActorRef<FileShard.Command> shard, FileServer server) {
        this.name = name;
        this.shard = shard;
        this.server = server;
        this.actor = null;
    }

    FileHandle(String name, ActorRef<FileActor.Command> actor) {
        this.name = name;
        this.shard = null;
        this.server = null;
        this.actor = actor;
    }

    public String file() {
        return name;
    }

    /** Sends one request for this file. */
    public void tell(FileActor.Command request) {
        if (actor != null) actor.tell(request);
        else shard.tell(new FileShard.ToFile(server, request));
    }

    /** The actor to ask, and the message that carries {@code request} to it (for the ask pattern). */
    @SuppressWarnings("unchecked")
    <M> ActorRef<M> target() {
        return (ActorRef<M>) (actor != null ? actor : shard);
    }

    @SuppressWarnings("unchecked")
    <M> M wrap(FileActor.Command request) {
        return (M) (actor != null ? request : new FileShard.ToFile(server, request));
    }

    @Override
    public String toString() {
        return "FileHandle[" + name + " via " + (actor != null ? actor.path() : shard.path()) + "]";
    }
}
