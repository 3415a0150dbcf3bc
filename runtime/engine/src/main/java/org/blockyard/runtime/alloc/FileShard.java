package org.blockyard.runtime.alloc;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import akka.Done;
import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.MapRequest;
import org.blockyard.runtime.alloc.GroupFileProtocol.Allocated;
import org.blockyard.runtime.alloc.GroupFileProtocol.Freed;
import org.blockyard.runtime.alloc.GroupFileProtocol.HostMessage;
import org.blockyard.runtime.alloc.GroupFileProtocol.Unclaim;

/**
 * One part of the file table, as an actor: it keeps the files whose names hash to it (their
 * {@link FileState}s, open or closed, as an inode table does) and serves their requests, each file through
 * its own {@link FileServer}, so that a file costs no actor of its own. Requests of one file are served in
 * order; requests of different files never wait for each other here: a file whose allocation waits for a
 * group (a long window search) holds only its own queue. The bitmap work happens in the group actors; a
 * shard only updates extent maps, which takes well under a microsecond per request, so a few shards keep
 * up with every core (see {@code blockyard.alloc.file-shards}).
 *
 * <p>Opening a file costs one message and, for a new file, the policy's choice of home group.
 *
 * <p>Answers from groups hand back the server that asked ({@link GroupFileProtocol.Asker}), so the shard gives
 * each to its file without a lookup. "Give back every preallocation" rounds are shared: files that run out of
 * space while one round is on their way wait for its answer.
 */
public final class FileShard extends AbstractBehavior<HostMessage> {

    /** What clients, the files' own actors and the allocator send the shard; groups send it {@link GroupFileProtocol.Answer}s. */
    public sealed interface Command extends HostMessage permits Open, WriteFile, FileExtents, Lookup, Delete, Deleting,
            ToFile, DropPrealloc, Passivate, OwnActorStopped, Dropped, UsePolicy, Shutdown {}

    /** Opens {@code file} (creating it on first open) and answers its handle. */
    public record Open(String file, ActorRef<Reply<FileHandle>> replyTo) implements Command {}

    /**
     * Opens {@code file} (creating it on first open), serves {@code requests} in order and closes it again: a
     * file written whole in one message ({@link org.blockyard.api.alloc.BlockAllocator#writeFile}); answered once
     * the close is done, with the runs or the first error.
     */
    public record WriteFile(String file, List<MapRequest> requests, ActorRef<Reply<List<BlockRun>>> replyTo)
            implements Command {}

    /** A file's mapped extents (or with {@code held} also its preallocation), open or closed. */
    public record FileExtents(String file, boolean held, ActorRef<Reply<List<Extent>>> replyTo) implements Command {}

    /** The handle of an open file; UnknownFile when it was never opened or is closed. */
    public record Lookup(String file, ActorRef<Reply<FileHandle>> replyTo) implements Command {}

    /**
     * Deletes a closed file ({@link org.blockyard.api.alloc.BlockAllocator#delete}): its blocks are freed as a
     * truncate to 0 frees them, then the shard forgets it and tells the file catalog.
     */
    public record Delete(String file, ActorRef<Reply<Void>> replyTo) implements Command {}

    /** A delete's purge of the file's blocks answered ({@code truncated}), or did not in time ({@code error}). */
    private record Deleting(FileServer server, Delete request, Reply<?> truncated, Throwable error)
            implements Command {}

    /** A request for one hosted file, as {@link FileHandle#tell} sends it. */
    record ToFile(FileServer server, FileActor.Command command) implements Command {}

    /** Every open file here gives back its unused preallocation (one "give back" round asks every shard). */
    record DropPrealloc(ActorRef<PreallocationDrop.Returned> replyTo) implements Command {}

    /**
     * From a file's own actor at the file's last close: the shard serves the file again, starting with
     * the requests that waited behind the close; then it retires the actor's {@code handle}, which stops the
     * actor once no send through it is under way.
     */
    record Passivate(FileServer server, FileHandle handle, List<FileActor.Command> waiting) implements Command {}

    /** A file's own actor stopped: passivated (nothing to do), or failed (a bug: the shard takes the file back). */
    record OwnActorStopped(FileServer server, ActorRef<FileActor.Command> actor) implements Command {}

    /** The answer of the "give back" round this shard asked for. */
    private record Dropped(long blocks) implements Command {}

    public record UsePolicy(AllocationPolicy policy) implements Command {}

    /**
     * The allocator is closing: every request held and every later one is answered with {@code Closed};
     * answers the files' own actors alive now, which the caller shuts down in turn.
     */
    public record Shutdown(ActorRef<List<ActorRef<FileActor.Command>>> replyTo) implements Command {}

    /** How long a delete waits for its file's blocks to be freed (the groups answer in microseconds). */
    private static final java.time.Duration DELETE_TIMEOUT = java.time.Duration.ofSeconds(60);

    private final AllocatorSettings settings;
    private final VolumeState volume;
    private final List<ActorRef<GroupActor.Command>> groups;
    private final ActorRef<AllocatorActor.Command> allocator;
    private final int index;
    private final int shards;
    private final long ownActorAfterBlocks;
    private AllocationPolicy policy;
    private final Map<String, FileServer> byName = new HashMap<>();
    private final List<FileServer> waitingForDrop = new ArrayList<>();
    /** Deletes of files whose own actor had their last close and has not handed them back yet. */
    private final Map<FileServer, List<Delete>> deletesAtHandBack = new HashMap<>();
    /** Files with at least one writer, the ones that hold windows and preallocations, as a list through them. */
    private FileServer openHead;
    private final ActorRef<Long> droppedAdapter;
    private final FileServer.Driver driver;
    private long nextLocalId = 1;
    private boolean dropping;
    private boolean closed;

    static Behavior<Command> create(AllocatorSettings settings, AllocationPolicy policy, VolumeState volume,
                                    List<ActorRef<GroupActor.Command>> groups, ActorRef<AllocatorActor.Command> allocator,
                                    int index, int shards, long ownActorAfterBlocks) {
        return Behaviors.<HostMessage>setup(ctx -> new FileShard(ctx, settings, policy, volume, groups, allocator, index,
                shards, ownActorAfterBlocks)).narrow();
    }

    /** The shard of {@code file} among {@code shards}. */
    public static int shardOf(String file, int shards) {
        return Math.floorMod(file.hashCode() * 0x9E3779B1, shards);
    }

    private FileShard(ActorContext<HostMessage> context, AllocatorSettings settings, AllocationPolicy policy,
                      VolumeState volume, List<ActorRef<GroupActor.Command>> groups,
                      ActorRef<AllocatorActor.Command> allocator, int index, int shards, long ownActorAfterBlocks) {
        super(context);
        this.ownActorAfterBlocks = ownActorAfterBlocks;
        this.settings = settings;
        this.policy = policy;
        this.volume = volume;
        this.groups = groups;
        this.allocator = allocator;
        this.index = index;
        this.shards = shards;
        this.droppedAdapter = context.messageAdapter(Long.class, Dropped::new);
        ActorRef<HostMessage> self = context.getSelf();
        this.driver = new FileServer.ActorDriver(groups, self.narrow(), context.getLog()) {
            @Override
            public void dropPreallocations(FileServer file) {
                waitingForDrop.add(file);
                if (!dropping) {
                    dropping = true;
                    allocator.tell(new AllocatorActor.DropPreallocations(droppedAdapter));
                }
            }

            @Override
            public FileHandle handle(FileServer file) {
                if (file.handle == null) file.handle = new FileHandle(file.file.name, self.narrow(), file);
                return file.handle;
            }

            @Override
            public boolean lastClosed(FileServer file) {
                unlinkOpen(file);
                return false; // nothing to hand over: the file's state stays here, closed, for the next open
            }
        };
    }

    @Override
    public Receive<HostMessage> createReceive() {
        return Receives.of(this::guarded);
    }

    /** Serves one message; a fault answers it with {@code Failed} and the shard goes on. */
    private Behavior<HostMessage> guarded(HostMessage m) {
        try {
            if (closed) {
                refuse(m, new AllocationException.Closed("the allocator is closed"));
                return this;
            }
            serve(m);
        } catch (RuntimeException e) {
            getContext().getLog().error("file shard {}: {} failed; answering it with an error", index,
                    m.getClass().getSimpleName(), e);
            refuse(m, new AllocationException.Failed("file shard " + index + ": " + m.getClass().getSimpleName()
                    + " failed: " + e));
        }
        return this;
    }

    private void serve(HostMessage m) {
        if (m instanceof ToFile t) onToFile(t);
        else if (m instanceof Allocated a) onAllocated(a);
        else if (m instanceof Open o) open(o.file(), o.replyTo(), new FileActor.Open(o.replyTo()));
        else if (m instanceof WriteFile w)
            open(w.file(), w.replyTo(), new FileActor.WriteWhole(w.requests(), w.replyTo()));
        else if (m instanceof Freed f) onFreed(f);
        else if (m instanceof FileExtents x) onFileExtents(x);
        else if (m instanceof Lookup l) onLookup(l);
        else if (m instanceof Delete d) onDelete(d);
        else if (m instanceof Deleting d) onDeleting(d);
        else if (m instanceof Dropped d) onDropped(d);
        else if (m instanceof DropPrealloc d) onDropPrealloc(d);
        else if (m instanceof UsePolicy u) onUsePolicy(u);
        else if (m instanceof Passivate p) onPassivate(p);
        else if (m instanceof OwnActorStopped o) onOwnActorStopped(o);
        else if (m instanceof Shutdown s) onShutdown(s);
        else throw new IllegalArgumentException("unknown message " + m);
    }

    private void refuse(HostMessage m, AllocationException e) {
        if (m instanceof ToFile t) FileServer.refuse(t.command(), e);
        else if (m instanceof Open o) o.replyTo().tell(Reply.fail(e));
        else if (m instanceof WriteFile w) w.replyTo().tell(Reply.fail(e));
        else if (m instanceof FileExtents x) x.replyTo().tell(Reply.fail(e));
        else if (m instanceof Lookup l) l.replyTo().tell(Reply.fail(e));
        else if (m instanceof Delete d) d.replyTo().tell(Reply.fail(e));
        else if (m instanceof Deleting d) d.request().replyTo().tell(Reply.fail(e));
        else if (m instanceof DropPrealloc d) d.replyTo().tell(new PreallocationDrop.Returned(getContext().getSelf(), List.of()));
        else if (m instanceof Shutdown s) s.replyTo().tell(List.of());
        else if (m instanceof Passivate p) p.handle().retire();
        else if (m instanceof Allocated a) giveBackLate(a);
    }

    /**
     * Opens {@code name} (creating it on its first open) and hands {@code first}, an {@code Open} or a
     * {@code WriteWhole}, to the file; a refusal goes to {@code replyTo}.
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private void open(String name, ActorRef<? extends Reply<?>> replyTo, FileActor.Command first) {
        ActorRef<Reply<?>> failTo = (ActorRef) replyTo;
        if (name == null || name.isBlank()) {
            failTo.tell(Reply.fail(new AllocationException.InvalidRequest("a file needs a non-empty name")));
            return;
        }
        FileServer s = byName.get(name);
        if (s == null) {
            try {
                s = serverFor(name);
            } catch (AllocationException refused) { // a durable volume's file table is full
                failTo.tell(Reply.fail(refused));
                return;
            }
        } else if (s.ownActor == null && provenStream(s)) {
            s.ownActor = getContext().spawnAnonymous(FileActor.create(s, getContext().getSelf(), allocator, groups));
            getContext().watchWith(s.ownActor, new OwnActorStopped(s, s.ownActor));
        }
        linkOpen(s); // first: a WriteWhole may close the file before receive returns, which unlinks it
        if (s.ownActor != null) {
            s.ownActor.tell(first);
        } else {
            // A closed file missed the policy switches (only open files are told): it catches up now.
            if (s.file.writers == 0 && s.policy() != policy) s.receive(new FileActor.UsePolicy(policy));
            s.receive(first);
        }
    }

    /** A server for {@code name}, new here: the catalog makes its state (empty, or as stored on a volume). */
    private FileServer serverFor(String name) {
        int home;
        try {
            home = policy.homeGroup(name, volume);
        } catch (RuntimeException bug) {
            getContext().getLog().error("policy {} failed to choose a home group for {}; using group 0",
                    policy.id(), name, bug);
            home = 0;
        }
        if (home < 0 || home >= groups.size()) home = 0;
        long id = (nextLocalId++) * shards + index;
        FileState created = settings.files().create(id, name, home, policy.initialWindowBlocks());
        FileServer s = new FileServer(created, policy, volume, settings.preallocMinWindowBlocks(), driver);
        byName.put(name, s);
        return s;
    }

    private void onDelete(Delete m) {
        String name = m.file();
        FileServer s = byName.get(name);
        if (s == null && (name == null || name.isBlank() || !settings.files().stored(name))) {
            m.replyTo().tell(Reply.fail(new AllocationException.UnknownFile("file " + name
                    + " does not exist; nothing deleted")));
            return;
        }
        if (s == null) s = serverFor(name); // stored on the volume, not opened in this run
        if (s.ownActor != null && s.file.writers == 0) {
            // Its actor answered the last close and hands the file back next (the writers' count is current:
            // the close's answer reached the caller before this delete came): done once it is back.
            deletesAtHandBack.computeIfAbsent(s, k -> new ArrayList<>()).add(m);
            return;
        }
        AllocationException refused = s.ownActor != null || s.file.writers > 0
                ? new AllocationException.InvalidRequest("file " + name + " is open (" + Math.max(1, s.file.writers)
                        + " writers): close it first; nothing deleted")
                : !s.idle() ? new AllocationException.InvalidRequest("file " + name
                        + " has calls in progress; nothing deleted") : null;
        if (refused != null) {
            m.replyTo().tell(Reply.fail(refused));
            return;
        }
        FileServer server = s;
        @SuppressWarnings({"unchecked", "rawtypes"})
        akka.japi.function.Function<ActorRef<Reply>, HostMessage> purge =
                r -> new ToFile(server, new FileActor.Purge((ActorRef) r));
        getContext().ask(Reply.class, getContext().getSelf(), DELETE_TIMEOUT, purge,
                (r, e) -> new Deleting(server, m, r, e));
    }

    /** The blocks are free: the shard forgets the file, unless it was opened again meanwhile. */
    private void onDeleting(Deleting d) {
        FileServer s = d.server();
        String name = s.file.name;
        ActorRef<Reply<Void>> replyTo = d.request().replyTo();
        if (d.error() != null) {
            replyTo.tell(Reply.fail(new AllocationException.Failed("deleting file " + name
                    + ": freeing its blocks was not answered: " + d.error().getMessage())));
        } else if (!d.truncated().isOk()) {
            replyTo.tell(Reply.fail(d.truncated().error()));
        } else if (byName.get(name) != s || s.ownActor != null || s.file.writers > 0 || !s.idle()
                || s.file.mappedBlocks() > 0) {
            replyTo.tell(Reply.fail(new AllocationException.InvalidRequest("file " + name
                    + " was opened while it was being deleted: its blocks are freed, the file stays")));
        } else {
            byName.remove(name);
            unlinkOpen(s);
            waitingForDrop.remove(s);
            settings.files().deleted(s.file);
            replyTo.tell(Reply.ok(null));
        }
    }

    /**
     * A closed file that grew to a stream gets an actor of its own at its next open, once it reached
     * {@code blockyard.alloc.own-actor-after-blocks} or its reservation window grew beyond its first size.
     */
    private boolean provenStream(FileServer s) {
        if (ownActorAfterBlocks <= 0 || s.file.writers > 0 || !s.idle()) return false;
        return s.file.mappedBlocks() >= ownActorAfterBlocks || s.file.windowGoalBlocks > policy.initialWindowBlocks();
    }

    private void linkOpen(FileServer s) {
        if (s.inOpenList) return;
        s.inOpenList = true;
        s.openPrev = null;
        s.openNext = openHead;
        if (openHead != null) openHead.openPrev = s;
        openHead = s;
    }

    private void unlinkOpen(FileServer s) {
        if (!s.inOpenList) return;
        s.inOpenList = false;
        if (s.openPrev != null) s.openPrev.openNext = s.openNext;
        else openHead = s.openNext;
        if (s.openNext != null) s.openNext.openPrev = s.openPrev;
        s.openPrev = s.openNext = null;
    }

    /** A copy of the open files: serving one may close it, which unlinks it. */
    private List<FileServer> openFiles() {
        List<FileServer> out = new ArrayList<>();
        for (FileServer s = openHead; s != null; s = s.openNext) out.add(s);
        return out;
    }

    private void onToFile(ToFile t) {
        FileServer s = t.server();
        if (s.ownActor != null) s.ownActor.tell(t.command()); // a handle from before the file got its actor
        else s.receive(t.command());
    }

    /**
     * An actor that stopped without handing its file back failed: its file is closed here, what it held
     * (window, preallocation) given back, and the next open starts afresh, as after a crash of the file's
     * process. Requests still on their way to it are lost with it; their callers get {@code Failed} from the
     * facade's timeout.
     */
    private void onOwnActorStopped(OwnActorStopped m) {
        FileServer s = m.server();
        if (s.ownActor == null || !s.ownActor.equals(m.actor())) return; // passivated: the shard took it back
        getContext().getLog().error("the actor of file {} stopped unexpectedly; the file is closed", s.file.name);
        s.ownActor = null;
        unlinkOpen(s);
        s.resume(driver);
        s.shutdown(new AllocationException.Failed("the actor of file " + s.file.name + " stopped unexpectedly"));
        if (s.file.writers > 0) volume.fileClosed(s.file.homeGroup);
        s.file.writers = 0;
        for (Extent pre : s.file.dropPreallocations())
            groups.get(volume.geometry().groupOf(pre.start())).tell(new Unclaim(pre));
        if (s.file.windowGroup >= 0)
            groups.get(s.file.windowGroup).tell(new GroupFileProtocol.DiscardWindow(s.file.id));
        s.file.windowDiscarded();
        deletesAfterHandBack(s);
    }

    private void onPassivate(Passivate p) {
        FileServer s = p.server();
        if (s.ownActor == null || !s.ownActor.equals(p.handle().actor())) return;
        s.ownActor = null;
        unlinkOpen(s);
        p.handle().retire();
        s.resume(driver);
        for (FileActor.Command c : p.waiting()) s.receive(c);
        deletesAfterHandBack(s);
    }

    private void deletesAfterHandBack(FileServer s) {
        List<Delete> deletes = deletesAtHandBack.remove(s);
        if (deletes != null) for (Delete d : deletes) onDelete(d);
    }

    private void onAllocated(Allocated a) {
        // Every file's Allocate names its server: the shard keeps no map of files by id.
        if (a.asker() instanceof FileServer s) s.allocated(a);
        else giveBackLate(a);
    }

    /** An allocation no file waits for (its request failed meanwhile): its blocks go back. */
    private void giveBackLate(Allocated a) {
        if (a.outcome() != null && a.outcome().allocated())
            groups.get(a.group()).tell(new Unclaim(new Extent(a.outcome().start(), a.outcome().blocks())));
    }

    private void onFreed(Freed f) {
        if (f.asker() instanceof FileServer s) s.freed(f);
    }

    private AllocationException unknown(String file, FileServer s) {
        return new AllocationException.UnknownFile(s == null ? "file " + file + " was never opened"
                : "file " + file + " is not open (closed by its last writer)");
    }

    private void onLookup(Lookup m) {
        FileServer s = byName.get(m.file());
        // A file with an actor of its own is open; the shard's handle reaches that actor too.
        boolean open = s != null && (s.ownActor != null || s.file.writers > 0);
        m.replyTo().tell(open ? Reply.ok(driver.handle(s)) : Reply.fail(unknown(m.file(), s)));
    }

    private void onFileExtents(FileExtents m) {
        FileServer s = byName.get(m.file());
        if (s == null) m.replyTo().tell(Reply.fail(unknown(m.file(), null)));
        else {
            FileActor.Command c = m.held() ? new FileActor.Held(m.replyTo()) : new FileActor.Extents(m.replyTo());
            if (s.ownActor != null) s.ownActor.tell(c); // its actor owns the state now
            else s.receive(c);
        }
    }

    private void onDropped(Dropped d) {
        dropping = false;
        List<FileServer> waiting = new ArrayList<>(waitingForDrop);
        waitingForDrop.clear();
        for (FileServer s : waiting) s.preallocationsDropped(d.blocks());
    }

    /** Hosted files give back their preallocations here; files with an actor of their own answer the round themselves. */
    private void onDropPrealloc(DropPrealloc m) {
        List<Extent> returned = new ArrayList<>();
        List<ActorRef<?>> alsoFrom = new ArrayList<>();
        for (FileServer s : openFiles()) {
            if (s.ownActor != null) {
                s.ownActor.tell(new FileActor.DropPrealloc(m.replyTo()));
                alsoFrom.add(s.ownActor);
                continue;
            }
            if (!s.file.holdsUnmapped()) continue;
            returned.addAll(s.takePreallocation());
        }
        m.replyTo().tell(new PreallocationDrop.Returned(getContext().getSelf(), returned, alsoFrom));
    }

    private void onUsePolicy(UsePolicy m) {
        policy = m.policy();
        FileActor.UsePolicy use = new FileActor.UsePolicy(policy);
        for (FileServer s : openFiles()) {
            if (s.ownActor != null) s.ownActor.tell(use);
            else s.receive(use);
        }
    }

    private void onShutdown(Shutdown m) {
        closed = true;
        AllocationException c = new AllocationException.Closed("the allocator closed before this request was served");
        List<ActorRef<FileActor.Command>> own = new ArrayList<>();
        for (FileServer s : byName.values()) {
            if (s.ownActor != null) own.add(s.ownActor);
            else s.shutdown(c);
        }
        waitingForDrop.clear();
        for (List<Delete> deletes : deletesAtHandBack.values())
            for (Delete d : deletes) d.replyTo().tell(Reply.fail(c));
        deletesAtHandBack.clear();
        m.replyTo().tell(own);
    }
}
