package org.blockyard.runtime.alloc;

import java.util.List;

import akka.Done;
import akka.actor.typed.ActorRef;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.Extent;

/**
 * What file servers and group actors say to each other: a file's requests to a group ({@link ToGroup}) and the
 * group's answers to the file's host ({@link Answer}), which is its {@link FileShard} or its own {@link FileActor}.
 * The extent interface's releases ({@code ActorBlockAllocator.release}) use the same two-phase messages.
 *
 * <p>The answers have a sealed supertype of their own, not the hosts' commands: a group knows nothing of who asked.
 * A host takes {@link HostMessage}s, its own commands and these answers, and hands out its reference narrowed to its
 * commands; a file server's requests carry its host narrowed to the answers. Each request names the server that
 * sent it ({@link Asker}) and its answer hands the same handle back, so a shard gives the answer to the file
 * without a lookup (it keeps no table of files by id). A group never looks inside the handle.
 *
 * <pre>
 *   file server                          group                        answered with
 *   Allocate(request, closing)           claim, book or grow windows  Allocated(outcome | error)
 *   Unclaim(extent[, window][, then])    free a preallocation         then, when given
 *   DiscardWindow(file)                  drop the file's window       nothing
 *   PrepareFree, CommitFree, AbortFree   two-phase release            Freed(tx, reply) (AbortFree: nothing)
 * </pre>
 */
final class GroupFileProtocol {
    private GroupFileProtocol() {}

    /** A file server's request to a group. */
    sealed interface ToGroup extends GroupActor.Command
            permits Allocate, Unclaim, DiscardWindow, PrepareFree, CommitFree, AbortFree {}

    /** Everything a file's host (its shard, or its own actor) takes: its own commands and the groups' answers. */
    sealed interface HostMessage permits FileShard.Command, FileActor.Command, Answer {}

    /** A group's answer to a file server's request, to the server's host; names the server that asked. */
    sealed interface Answer extends HostMessage permits Allocated, Freed {
        /** The server that sent the request, or null for a caller that is not a file server. */
        Asker asker();
    }

    /**
     * The file server a request comes from, as a group sees it: a handle it hands back in its answer and never
     * looks into. Only a {@link FileServer} is one.
     */
    sealed interface Asker permits FileServer {}

    /** A file's request; answered with {@link Allocated} (0 blocks when this group cannot serve it). */
    record Allocate(BlockGroup.Request request, ActorRef<Allocated> replyTo, Asker asker, boolean closing)
            implements ToGroup {
        Allocate(BlockGroup.Request request, ActorRef<Allocated> replyTo) {
            this(request, replyTo, null, false);
        }

        /** The answer to this request: {@code outcome}, or {@code error} when the group failed or is closed. */
        Allocated answer(int group, BlockGroup.Outcome outcome, AllocationException error) {
            return new Allocated(group, outcome, error, asker);
        }
    }

    /** The answer to {@link Allocate}: {@code error} is set (and {@code outcome} null) when the group failed or is closed. */
    record Allocated(int group, BlockGroup.Outcome outcome, AllocationException error, Asker asker) implements Answer {}

    /**
     * The answer to {@link PrepareFree} and {@link CommitFree}, naming the release it answers (a file shard hosts
     * many files' releases at once); also a close's acknowledgement ({@link Unclaim#then}).
     */
    record Freed(long tx, Reply<Done> reply, Asker asker) implements Answer {
        Freed(long tx, Reply<Done> reply) {
            this(tx, reply, null);
        }
    }

    /** ext3_discard_reservation for one file. */
    record DiscardWindow(long file) implements ToGroup {}

    /**
     * A file gives back its unused preallocation {@code extent} (no answer: it cannot fail unless the file is wrong).
     * At a file's last close, one message does more: it drops the file's window here first when
     * {@code discardWindowOf} is a file id (else -1), and once the blocks are free it sends {@code then}, when not
     * null, so that a free count read after the close counts them: a close's own answer, the runs of a file written
     * whole, or a {@link Freed} to the file's host when the close frees blocks in several groups and is answered
     * once all of them did.
     */
    record Unclaim(Extent extent, long discardWindowOf, Tell<?> then) implements ToGroup {
        Unclaim(Extent extent) {
            this(extent, -1, null);
        }
    }

    /** A message to send once a request is done: {@code message} to {@code to}. */
    record Tell<T>(ActorRef<T> to, T message) {
        void send() {
            to.tell(message);
        }
    }

    /** First phase of a release across groups: check and hold the extents; nothing is freed yet. */
    record PrepareFree(long tx, List<Extent> extents, ActorRef<Freed> replyTo, Asker asker) implements ToGroup {
        PrepareFree(long tx, List<Extent> extents, ActorRef<Freed> replyTo) {
            this(tx, extents, replyTo, null);
        }
    }

    /** Second phase: free what {@link PrepareFree} held. */
    record CommitFree(long tx, ActorRef<Freed> replyTo, Asker asker) implements ToGroup {
        CommitFree(long tx, ActorRef<Freed> replyTo) {
            this(tx, replyTo, null);
        }
    }

    /** Let go of what {@link PrepareFree} held, freeing nothing (not answered). */
    record AbortFree(long tx) implements ToGroup {}
}
