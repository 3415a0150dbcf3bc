package org.blockyard.runtime.alloc;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import akka.Done;
import akka.actor.typed.ActorRef;
import org.slf4j.Logger;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.BlockAllocator;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.api.alloc.MapRequest;
import org.blockyard.runtime.alloc.GroupFileProtocol.AbortFree;
import org.blockyard.runtime.alloc.GroupFileProtocol.Allocate;
import org.blockyard.runtime.alloc.GroupFileProtocol.Allocated;
import org.blockyard.runtime.alloc.GroupFileProtocol.Answer;
import org.blockyard.runtime.alloc.GroupFileProtocol.CommitFree;
import org.blockyard.runtime.alloc.GroupFileProtocol.DiscardWindow;
import org.blockyard.runtime.alloc.GroupFileProtocol.Freed;
import org.blockyard.runtime.alloc.GroupFileProtocol.PrepareFree;
import org.blockyard.runtime.alloc.GroupFileProtocol.Tell;
import org.blockyard.runtime.alloc.GroupFileProtocol.Unclaim;

/**
 * Serves one file's requests ({@link FileActor.Command}s) in order, without a thread or an actor of its
 * own: the actor that hosts it (a {@link FileShard} for most files, a {@link FileActor} for one file)
 * hands it each request and each answer from a group, and it answers through its {@link Driver}. An
 * allocating {@code GetBlocks} runs the {@link FileAllocation} steps: the goal group is asked, then, if it
 * cannot serve, the other groups in {@link GroupWalk} order, one at a time; before answering "no space" the
 * host has every open file give back its preallocation and the walk is retried once. Other requests for
 * this file wait in its own queue meanwhile; requests of other files never wait for it.
 *
 * <p>Blocks leave the file in two phases, as a release across groups does: every group concerned checks
 * and holds them ({@code PrepareFree}), and only when all agreed does the map change and the groups free
 * them ({@code CommitFree}); a refused truncate or discard leaves the file as it was.
 *
 * <p>Faults: a request that throws (a bug, or a policy plugin that threw) is answered with {@code Failed},
 * as is the request in progress; a release still being prepared is aborted in its groups; the file goes on
 * with the next request.
 */
final class FileServer implements FileAllocation.Groups, GroupFileProtocol.Asker {

    /** What the hosting actor provides. */
    interface Driver {
        void tellGroup(int group, GroupFileProtocol.ToGroup message);

        /** Where groups send their answers for this file: the hosting actor. */
        ActorRef<Answer> answersTo();

        /** Every open file gives back its preallocation; the answer comes to {@link #preallocationsDropped}. */
        void dropPreallocations(FileServer file);

        /** What an {@code Open} of this file answers. */
        FileHandle handle(FileServer file);

        /**
         * The last writer closed the file. True when the host hands the file over now: the server then
         * serves nothing more until {@link #resume}; the host passes {@link #takeWaiting} on.
         */
        boolean lastClosed(FileServer file);

        Logger log();
    }

    /** What every hosting actor's driver shares: groups by number, answers to the actor itself, its log. */
    abstract static class ActorDriver implements Driver {
        private final List<ActorRef<GroupActor.Command>> groups;
        private final ActorRef<Answer> answersTo;
        private final Logger log;

        ActorDriver(List<ActorRef<GroupActor.Command>> groups, ActorRef<Answer> answersTo, Logger log) {
            this.groups = groups;
            this.answersTo = answersTo;
            this.log = log;
        }

        @Override
        public void tellGroup(int group, GroupFileProtocol.ToGroup message) {
            groups.get(group).tell(message);
        }

        @Override
        public ActorRef<Answer> answersTo() {
            return answersTo;
        }

        @Override
        public Logger log() {
            return log;
        }
    }

    /** Requests of one file that may wait while one of its allocations or truncates is in progress. */
    static final int QUEUE_CAPACITY = 10_000;

    final FileState file;
    private Driver driver;
    private AllocationPolicy policy;
    private final VolumeState volume;
    private final Geometry geometry;
    private final int preallocMin;
    private ArrayDeque<FileActor.Command> waiting; // made when a request first has to wait: most files never do
    // The shard's list of open files runs through them (no set entry per open).
    FileServer openPrev, openNext;
    boolean inOpenList;
    FileHandle handle; // made on the first open through a shard, then reused
    /** The file's own actor while it has one; set and read by its shard only. */
    ActorRef<FileActor.Command> ownActor;

    /** The request in progress, if any, with what belongs to it; the others wait in {@link #waiting}. */
    private Phase phase = Idle.INSTANCE;
    private Hosting hosting = Hosting.SERVED;

    /** What the file is doing: one request at a time, each phase holding what belongs to that request. */
    private sealed interface Phase permits Idle, Allocating, Reserving, Batch, Release {}

    /** No request in progress. */
    private enum Idle implements Phase { INSTANCE }

    /** A getBlocks whose walk, {@code steps}, asks groups; answered at the walk's end. */
    private record Allocating(FileActor.GetBlocks request, FileAllocation steps) implements Phase {}

    /**
     * Blocks reserved for the file's gap ({@link FileState#gapEndingAt}) before the request waiting at the front
     * of the queue, which is served once {@code steps} are over, whether they made the reservation or not.
     */
    private record Reserving(FileAllocation steps) implements Phase {}

    /**
     * A batch's requests, served in order, with the runs answered so far; {@code whole} when the batch is a file
     * written whole, closed before the batch is answered. While one of its requests asks groups, {@code steps}
     * is the walk: the request's own, or with {@code reservingGap} the reservation for the gap before it (made or
     * not, that request is served next, without a second reservation).
     */
    private static final class Batch implements Phase {
        final FileActor.GetBlocksBatch request;
        final FileActor.WriteWhole whole;
        final List<BlockRun> runs;
        FileAllocation steps;
        boolean reservingGap;

        Batch(FileActor.GetBlocksBatch request, FileActor.WriteWhole whole) {
            this.request = request;
            this.whole = whole;
            this.runs = new ArrayList<>(request.requests().size());
        }
    }

    /**
     * Blocks leaving the file (truncate, discard, purge): held in every group first, then the map changes, then
     * the groups free them.
     */
    private static final class Release implements Phase {
        final long tx;
        final Map<Integer, List<Extent>> byGroup;
        final long blocks;
        final Runnable apply;
        final ActorRef<Reply<Long>> replyTo;
        boolean committing;
        int outstanding;
        AllocationException error;

        Release(long tx, Map<Integer, List<Extent>> byGroup, long blocks, Runnable apply, ActorRef<Reply<Long>> replyTo) {
            this.tx = tx;
            this.byGroup = byGroup;
            this.blocks = blocks;
            this.apply = apply;
            this.replyTo = replyTo;
            this.outstanding = byGroup.size();
        }
    }

    /** Whether the file is served here or handed over to another host at its last close ({@link Driver#lastClosed}). */
    private enum Hosting {
        /** Served here. */
        SERVED,
        /** Handed over once the last close's acknowledgements are in (they come to this host), unless reopened. */
        HAND_OVER_AFTER_ACKS,
        /** Handed over: nothing more is served until {@link #resume}. */
        HANDED_OVER
    }

    /** A last close whose blocks go back to several groups: answered when each acknowledged its part. */
    private static final class PendingClose {
        final long tx;
        int outstanding;
        final Reply<?> answer;
        final ActorRef<Reply<?>> replyTo;

        PendingClose(long tx, int outstanding, Reply<?> answer, ActorRef<Reply<?>> replyTo) {
            this.tx = tx;
            this.outstanding = outstanding;
            this.answer = answer;
            this.replyTo = replyTo;
        }
    }

    /** Closes waiting for their groups' acknowledgements; null (almost always) when none. */
    private List<PendingClose> closingNow;

    FileServer(FileState file, AllocationPolicy policy, VolumeState volume, int preallocMinWindowBlocks, Driver driver) {
        this.file = file;
        this.policy = policy;
        this.volume = volume;
        this.geometry = volume.geometry();
        this.preallocMin = preallocMinWindowBlocks;
        this.driver = driver;
    }

    @Override
    public void unclaim(Extent e) {
        driver.tellGroup(geometry.groupOf(e.start()), new Unclaim(e));
    }

    @Override
    public void discardWindow(int group, long fileId) {
        driver.tellGroup(group, new DiscardWindow(fileId));
    }

    /** Another actor hosts this file from now on (a file that moved to an actor of its own). */
    void driveBy(Driver d) {
        this.driver = d;
    }

    /** The host this file was handed back to serves it from now on. */
    void resume(Driver d) {
        this.driver = d;
        this.hosting = Hosting.SERVED;
    }

    /** Whether the host handed the file over at its last close (see {@link Driver#lastClosed}). */
    boolean handedOver() {
        return hosting == Hosting.HANDED_OVER;
    }

    /** The requests still waiting, in order, for the next host; the queue is left empty. */
    List<FileActor.Command> takeWaiting() {
        if (waiting == null || waiting.isEmpty()) return List.of();
        List<FileActor.Command> out = new ArrayList<>(waiting);
        waiting.clear();
        return out;
    }

    AllocationPolicy policy() {
        return policy;
    }

    boolean busy() {
        return phase != Idle.INSTANCE;
    }

    /** The walk of the request in progress, or null when none asks groups. */
    private FileAllocation steps() {
        Phase p = phase;
        if (p instanceof Allocating a) return a.steps();
        if (p instanceof Reserving r) return r.steps();
        if (p instanceof Batch b) return b.steps;
        return null;
    }

    boolean idle() {
        return !busy() && (waiting == null || waiting.isEmpty());
    }

    // ---- entry points -----------------------------------------------------------------------------------

    /** A request for this file: served now, or queued behind the one in progress. */
    void receive(FileActor.Command m) {
        if (busy() || handedOver()) {
            if (waiting == null) waiting = new ArrayDeque<>(4);
            if (waiting.size() < QUEUE_CAPACITY) {
                waiting.add(m);
            } else { // more requests waiting for this one file than the queue holds: refuse the newcomer
                refuse(m, new AllocationException.InvalidRequest("file " + file.name + " already has "
                        + QUEUE_CAPACITY + " requests waiting; wait for some answers before sending more"));
            }
            return;
        }
        serveOrReserve(m);
        drain();
    }

    /** A group's answer to this file's {@code Allocate}. */
    void allocated(Allocated a) {
        FileAllocation steps = steps();
        if (steps == null) return; // the request it answers was failed or closed meanwhile
        volume.countMessage();
        // A group that failed or is closed allocated nothing there: the request ends with its error.
        try {
            step(a.error() != null ? new FileAllocation.Answer(Reply.fail(a.error())) : steps.answer(a.group(), a.outcome()));
        } catch (RuntimeException e) {
            fault(a, e);
        }
        drain();
    }

    /** The answer to {@link Driver#dropPreallocations}. */
    void preallocationsDropped(long blocks) {
        FileAllocation steps = steps();
        if (steps == null) return;
        volume.countMessage();
        try {
            step(steps.preallocationsDropped(blocks));
        } catch (RuntimeException e) {
            fault(null, e);
        }
        drain();
    }

    /** A group's answer to this file's {@code PrepareFree} or {@code CommitFree}, or to a close's {@code Unclaim}. */
    void freed(Freed f) {
        for (int i = 0; closingNow != null && i < closingNow.size(); i++) {
            PendingClose c = closingNow.get(i);
            if (c.tx != f.tx()) continue;
            if (--c.outstanding == 0) {
                closingNow.remove(i);
                c.replyTo.tell(c.answer);
                if (closingNow.isEmpty() && hosting == Hosting.HAND_OVER_AFTER_ACKS)
                    hosting = file.writers == 0 ? Hosting.HANDED_OVER : Hosting.SERVED;
            }
            return;
        }
        if (!(phase instanceof Release r) || r.tx != f.tx()) return;
        volume.countMessage();
        try {
            onFreed(r, f.reply());
        } catch (RuntimeException e) {
            fault(f, e);
        }
        drain();
    }

    /** Gives up the unused preallocation and a gap's reservation, even while a request is in progress; the caller frees them. */
    List<Extent> takePreallocation() {
        volume.countMessage();
        return file.dropPreallocations();
    }

    /**
     * The allocator is closing: the request in progress and every waiting one are answered with {@code closed}.
     */
    void shutdown(AllocationException closed) {
        file.releaseMapped();
        if (closingNow != null) for (PendingClose c : closingNow) c.replyTo.tell(Reply.fail(closed));
        closingNow = null;
        if (hosting == Hosting.HAND_OVER_AFTER_ACKS) hosting = Hosting.SERVED;
        Phase p = phase;
        phase = Idle.INSTANCE;
        if (p instanceof Allocating a) a.request().replyTo().tell(Reply.fail(closed));
        else if (p instanceof Batch b) b.request.replyTo().tell(Reply.fail(closed));
        else if (p instanceof Release r) r.replyTo.tell(Reply.fail(closed));
        while (waiting != null && !waiting.isEmpty()) refuse(waiting.poll(), closed);
    }

    /** Answers {@code m}, if it expects an answer, with {@code e}. */
    static void refuse(Object m, AllocationException e) {
        if (m instanceof FileActor.GetBlocks g) g.replyTo().tell(Reply.fail(e));
        else if (m instanceof FileActor.GetBlocksBatch b) b.replyTo().tell(Reply.fail(e));
        else if (m instanceof FileActor.WriteWhole w) w.replyTo().tell(Reply.fail(e));
        else if (m instanceof FileActor.Truncate t) t.replyTo().tell(Reply.fail(e));
        else if (m instanceof FileActor.Purge p) p.replyTo().tell(Reply.fail(e));
        else if (m instanceof FileActor.MarkWritten w) w.replyTo().tell(Reply.fail(e));
        else if (m instanceof FileActor.Discard d) d.replyTo().tell(Reply.fail(e));
        else if (m instanceof FileActor.Close c) c.replyTo().tell(Reply.fail(e));
        else if (m instanceof FileActor.Open o) o.replyTo().tell(Reply.fail(e));
        else if (m instanceof FileActor.Extents x) x.replyTo().tell(Reply.fail(e));
        else if (m instanceof FileActor.Held h) h.replyTo().tell(Reply.fail(e));
    }

    // ---- the queue and the guard ------------------------------------------------------------------------

    /** Serves waiting requests until one has to wait for a group. */
    private void drain() {
        while (!busy() && !handedOver() && waiting != null && !waiting.isEmpty()) {
            serveOrReserve(waiting.poll());
        }
    }

    /**
     * Serves {@code m}; but an allocating getBlocks that starts where the file's gap ends (the caller went on
     * past a short answer, see {@link FileState#gapEndingAt}) waits at the front of the queue while blocks are
     * reserved for the gap.
     */
    private void serveOrReserve(FileActor.Command m) {
        try {
            FileAllocation.Step s = m instanceof FileActor.GetBlocks g && g.create()
                    ? startGapReservation(g.logicalBlock(), null, -1) : null;
            if (s != null) {
                if (waiting == null) waiting = new ArrayDeque<>(4);
                waiting.addFirst(m);
                step(s);
                return;
            }
            serve(m);
        } catch (RuntimeException e) {
            fault(m, e);
        }
    }

    /**
     * When the file's gap ends at {@code logical}, starts reserving blocks for it: answers the step to take
     * (a group to ask) while the request at {@code logical} waits, or null when it is over at once or there is
     * no gap. The request is request {@code index} of {@code batch} (its preallocation bounded in a file written
     * whole as the request's own would be), or with a null batch the one at the front of the queue.
     */
    private FileAllocation.Step startGapReservation(long logical, Batch batch, int index) {
        FileAllocation reserving = FileAllocation.forGap(file, policy, volume, preallocMin, this, logical);
        if (reserving == null) return null;
        if (batch != null && batch.whole != null) reserving.wholeFile(batch.request.requests(), index, false);
        FileAllocation.Step s = reserving.start();
        if (s instanceof FileAllocation.Answer) return null; // refused at once: the request answers for itself
        if (batch == null) {
            phase = new Reserving(reserving);
        } else {
            batch.steps = reserving;
            batch.reservingGap = true;
        }
        return s;
    }

    /**
     * A request (or an answer to one) threw: it is answered with {@code Failed}, and so is the request in
     * progress; a release still being prepared is aborted in its groups; the file goes on with the next.
     */
    private void fault(Object m, RuntimeException e) {
        String what = m == null ? "a request" : m.getClass().getSimpleName();
        driver.log().error("file {}: {} failed; answering it with an error", file.name, what, e);
        file.releaseMapped(); // the runs mapped before the fault stay mapped, and are recorded
        AllocationException failed = new AllocationException.Failed("file " + file.name + ": " + what + " failed: " + e);
        Phase p = phase;
        phase = Idle.INSTANCE;
        // A WriteWhole under way is answered after its close, below.
        if (m != null && !(p instanceof Batch b && b.whole == m)) refuse(m, failed);
        if (p instanceof Allocating a && a.request() != m) {
            a.request().replyTo().tell(Reply.fail(failed));
        } else if (p instanceof Batch b && b.request != m) {
            if (b.whole != null) closeWriter(Reply.fail(failed), b.request.replyTo());
            else b.request.replyTo().tell(Reply.fail(failed));
        } else if (p instanceof Release r) {
            if (!r.committing) for (int g : r.byGroup.keySet()) driver.tellGroup(g, new AbortFree(r.tx));
            r.replyTo.tell(Reply.fail(failed));
        }
    }

    private void serve(FileActor.Command m) {
        if (m instanceof FileActor.GetBlocks g) onGetBlocks(g);
        else if (m instanceof FileActor.GetBlocksBatch b) onGetBlocksBatch(b);
        else if (m instanceof FileActor.WriteWhole w) onWriteWhole(w);
        else if (m instanceof FileActor.MarkWritten w) onMarkWritten(w);
        else if (m instanceof FileActor.Open o) onOpen(o);
        else if (m instanceof FileActor.Close c) onClose(c);
        else if (m instanceof FileActor.Truncate t) onTruncate(t);
        else if (m instanceof FileActor.Purge p) onPurge(p);
        else if (m instanceof FileActor.Discard d) onDiscard(d);
        else if (m instanceof FileActor.Extents x) onExtents(x);
        else if (m instanceof FileActor.Held h) onHeld(h);
        else if (m instanceof FileActor.UsePolicy u) onUsePolicy(u);
        else throw new IllegalArgumentException("not a file request: " + m);
    }

    // ---- getBlocks ------------------------------------------------------------------------------------

    private void onGetBlocks(FileActor.GetBlocks m) {
        volume.countMessage();
        Reply<BlockRun> now = FileAllocation.atOnce(file, m.logicalBlock(), m.maxBlocks(), m.create());
        if (now != null) {
            answer(m, now);
            return;
        }
        FileAllocation a = new FileAllocation(file, policy, volume, preallocMin, this, m.logicalBlock(),
                m.maxBlocks(), m.create());
        phase = new Allocating(m, a);
        step(a.start());
    }

    private void onGetBlocksBatch(FileActor.GetBlocksBatch m) {
        onGetBlocksBatch(m, null);
    }

    /** A batch, or with {@code whole} the batch of a file written whole. */
    private void onGetBlocksBatch(FileActor.GetBlocksBatch m, FileActor.WriteWhole whole) {
        volume.countMessage();
        if (m.requests() == null || m.requests().size() > BlockAllocator.MAX_BATCH) {
            m.replyTo().tell(Reply.fail(new AllocationException.InvalidRequest("a batch holds 0 to "
                    + BlockAllocator.MAX_BATCH + " requests, not " + (m.requests() == null ? "null" : m.requests().size()))));
            return;
        }
        Batch b = new Batch(m, whole);
        phase = b;
        file.holdMapped(); // released before the batch is answered, whatever the answer
        runBatch(b);
    }

    /** Open, batch and close in one request: the close runs when the batch ends, however it ends. */
    private void onWriteWhole(FileActor.WriteWhole m) {
        if (m.requests() == null || m.requests().size() > BlockAllocator.MAX_BATCH) { // refused before the open
            onGetBlocksBatch(new FileActor.GetBlocksBatch(m.requests(), m.replyTo()));
            return;
        }
        addWriter();
        onGetBlocksBatch(new FileActor.GetBlocksBatch(m.requests(), m.replyTo()), m);
    }

    /** Serves the batch's requests in order while each is answered at once; returns when one asks a group. */
    private void runBatch(Batch b) {
        List<MapRequest> requests = b.request.requests();
        while (b.runs.size() < requests.size()) {
            MapRequest r = requests.get(b.runs.size());
            if (r == null) {
                endBatch(b, Reply.fail(new AllocationException.InvalidRequest("request " + b.runs.size()
                        + " of the batch is null")));
                return;
            }
            // A request that starts where the file's gap ends waits while blocks are reserved for the gap.
            FileAllocation.Step reserving = r.create() && !b.reservingGap
                    ? startGapReservation(r.logicalBlock(), b, b.runs.size()) : null;
            if (reserving != null) {
                step(reserving); // the group's answer comes back through step, which goes on here
                return;
            }
            b.reservingGap = false;
            Reply<BlockRun> now = FileAllocation.atOnce(file, r.logicalBlock(), r.maxBlocks(), r.create());
            if (now == null) {
                FileAllocation steps = new FileAllocation(file, policy, volume, preallocMin, this, r.logicalBlock(),
                        r.maxBlocks(), r.create());
                if (b.whole != null) steps.wholeFile(requests, b.runs.size(), file.writers == 1);
                b.steps = steps;
                FileAllocation.Step s = steps.start();
                if (!(s instanceof FileAllocation.Answer a)) {
                    step(s);
                    return;
                }
                b.steps = null;
                now = a.reply();
            }
            if (!batchAnswer(b, now)) return;
        }
        endBatch(b, Reply.ok(List.copyOf(b.runs)));
    }

    /** Takes the answer to the batch's next request; false when it ended the batch. */
    private boolean batchAnswer(Batch b, Reply<BlockRun> reply) {
        List<MapRequest> requests = b.request.requests();
        MapRequest r = requests.get(b.runs.size());
        file.answered(r.logicalBlock(), r.maxBlocks(), r.create(), reply);
        if (!reply.isOk()) {
            AllocationException e = reply.error();
            endBatch(b, Reply.fail(requests.size() == 1 ? e : withIndex(e, b.runs.size(), requests.size())));
            return false;
        }
        b.runs.add(reply.value());
        return true;
    }

    private static AllocationException withIndex(AllocationException e, int index, int of) {
        // The same type, so callers can tell NoSpace from a bad range; the message says which request.
        String msg = "request " + index + " of " + of + " in the batch: " + e.getMessage();
        if (e instanceof AllocationException.NoSpace) return new AllocationException.NoSpace(msg);
        if (e instanceof AllocationException.OutOfRange) return new AllocationException.OutOfRange(msg);
        if (e instanceof AllocationException.InvalidRequest) return new AllocationException.InvalidRequest(msg);
        if (e instanceof AllocationException.UnknownFile) return new AllocationException.UnknownFile(msg);
        return e;
    }

    private void endBatch(Batch b, Reply<List<BlockRun>> reply) {
        phase = Idle.INSTANCE;
        file.releaseMapped();
        if (b.whole != null) closeWriter(reply, b.request.replyTo());
        else b.request.replyTo().tell(reply);
    }

    private void step(FileAllocation.Step s) {
        if (s instanceof FileAllocation.Ask ask) {
            // The answer names this server, so a shard hands it over without a lookup.
            driver.tellGroup(ask.group(), new Allocate(ask.request(), driver.answersTo().narrow(), this, ask.closing()));
            return;
        }
        if (s instanceof FileAllocation.DropPreallocations) {
            driver.dropPreallocations(this);
            return;
        }
        Reply<BlockRun> reply = ((FileAllocation.Answer) s).reply();
        Phase p = phase;
        if (p instanceof Batch b) {
            b.steps = null;
            if (b.reservingGap) runBatch(b); // the reservation is over, made or not; the request it stood before is next
            else if (batchAnswer(b, reply)) runBatch(b);
        } else if (p instanceof Reserving) { // the request waiting at the front of the queue is served next (drain)
            phase = Idle.INSTANCE;
        } else if (p instanceof Allocating a) {
            phase = Idle.INSTANCE;
            answer(a.request(), reply);
        } else {
            throw new IllegalStateException("file " + file.name + ": an answer while " + p);
        }
    }

    private void answer(FileActor.GetBlocks m, Reply<BlockRun> reply) {
        file.answered(m.logicalBlock(), m.maxBlocks(), m.create(), reply);
        m.replyTo().tell(reply);
    }

    // ---- blocks leaving the file ------------------------------------------------------------------------

    private void onTruncate(FileActor.Truncate m) {
        volume.countMessage();
        AllocationException bad = FileAllocation.checkTruncate(file, m.fromLogicalBlock());
        if (bad != null) {
            m.replyTo().tell(Reply.fail(bad));
            return;
        }
        truncate(m.fromLogicalBlock(), m.replyTo());
    }

    /** A truncate to 0 of a closed file, for its deletion (a truncate's check refuses a closed file). */
    private void onPurge(FileActor.Purge m) {
        volume.countMessage();
        truncate(0, m.replyTo());
    }

    private void truncate(long fromLogicalBlock, ActorRef<Reply<Long>> replyTo) {
        // ext3_truncate drops the window, since the block map is about to change; done only once the
        // groups agreed, so that a refused truncate changes nothing.
        release(file.extentsFrom(fromLogicalBlock), () -> {
            discardWindow();
            file.truncate(fromLogicalBlock);
        }, replyTo);
    }

    private void onDiscard(FileActor.Discard m) {
        volume.countMessage();
        AllocationException bad = FileAllocation.checkRange(file, m.punch() ? "punchHole" : "discardUnwritten",
                m.logicalBlock(), m.blocks());
        if (bad != null) {
            m.replyTo().tell(Reply.fail(bad));
            return;
        }
        // The write that allocated these blocks failed, or a hole is punched where the stream was: the stream is
        // broken, so its preallocation goes too (ext4_punch_hole discards it as well).
        release(file.mappedIn(m.logicalBlock(), m.blocks(), m.punch()), () -> {
            dropPrealloc();
            file.discard(m.logicalBlock(), m.blocks(), m.punch());
        }, m.replyTo());
    }

    private void release(List<Extent> extents, Runnable apply, ActorRef<Reply<Long>> replyTo) {
        Map<Integer, List<Extent>> byGroup = ExtentChecks.splitByGroup(geometry, extents);
        if (byGroup.isEmpty()) {
            apply.run();
            replyTo.tell(Reply.ok(0L));
            return;
        }
        long blocks = 0;
        for (Extent e : extents) blocks += e.blocks();
        Release r = new Release(file.nextTx(), byGroup, blocks, apply, replyTo);
        phase = r;
        byGroup.forEach((g, list) -> driver.tellGroup(g, new PrepareFree(r.tx, list, driver.answersTo().narrow(), this)));
    }

    private void onFreed(Release r, Reply<Done> reply) {
        if (!reply.isOk() && r.error == null) r.error = reply.error();
        if (--r.outstanding > 0) return;
        if (!r.committing) {
            if (r.error != null) {
                for (int g : r.byGroup.keySet()) driver.tellGroup(g, new AbortFree(r.tx));
                phase = Idle.INSTANCE;
                r.replyTo.tell(Reply.fail(r.error));
                return;
            }
            // Every group holds its blocks: nothing can refuse the release any more.
            r.apply.run();
            r.committing = true;
            r.outstanding = r.byGroup.size();
            for (int g : r.byGroup.keySet())
                driver.tellGroup(g, new CommitFree(r.tx, driver.answersTo().narrow(), this));
            return;
        }
        phase = Idle.INSTANCE;
        if (r.error != null)
            driver.log().error("file {}: a group refused to commit a release it had prepared: {}", file.name,
                    r.error.getMessage());
        r.replyTo.tell(r.error == null ? Reply.ok(r.blocks) : Reply.fail(r.error));
    }

    // ---- the rest ------------------------------------------------------------------------------------

    private void onMarkWritten(FileActor.MarkWritten m) {
        volume.countMessage();
        AllocationException bad = FileAllocation.checkRange(file, "markWritten", m.logicalBlock(), m.blocks());
        m.replyTo().tell(bad != null ? Reply.fail(bad) : Reply.ok(file.markWritten(m.logicalBlock(), m.blocks())));
    }

    private void onOpen(FileActor.Open m) {
        volume.countMessage();
        addWriter();
        m.replyTo().tell(Reply.ok(driver.handle(this)));
    }

    private void addWriter() {
        if (file.writers++ == 0) volume.fileOpened(file.homeGroup);
    }

    private void onClose(FileActor.Close m) {
        volume.countMessage();
        if (file.writers == 0) {
            m.replyTo().tell(Reply.fail(FileAllocation.notOpen(file)));
            return;
        }
        closeWriter(null, m.replyTo());
    }

    /**
     * Drops one writer of an open file and answers {@code replyTo}: with {@code answer}, or with a close's own
     * answer (whether it was the last writer) when {@code answer} is null. The last writer's close answers only
     * once its preallocation is free again.
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private void closeWriter(Reply<?> answer, ActorRef<? extends Reply<?>> replyTo) {
        ActorRef<Reply<?>> to = (ActorRef) replyTo;
        boolean last = --file.writers == 0;
        if (!last) {
            to.tell(answer != null ? answer : Reply.ok(false));
            return;
        }
        // ext3_release_file: the last writer's close drops the window. The preallocation and the gaps'
        // reservations go back, and the close is answered once every one of those blocks is free again: by the
        // preallocation's group when it holds them all (the reservations sent it first), else by the last of
        // the groups' acknowledgements.
        List<Extent> reserved = new ArrayList<>(file.dropReservations());
        Extent pre = file.dropPrealloc();
        if (pre == null && !reserved.isEmpty()) pre = reserved.remove(reserved.size() - 1);
        int windowGroup = file.windowGroup;
        boolean together = pre != null && windowGroup == geometry.groupOf(pre.start()); // one message does both
        if (windowGroup >= 0 && !together) discardWindow(windowGroup, file.id);
        file.windowDiscarded();
        volume.fileClosed(file.homeGroup);
        Reply<?> closed = answer != null ? answer : Reply.ok(true);
        long preWindow = together ? file.id : -1;
        if (pre == null) { // and no reservation either
            to.tell(closed);
        } else if (onlyIn(reserved, geometry.groupOf(pre.start()))) {
            // One group frees everything: its answer, after the frees sent it before, answers the close.
            for (Extent e : reserved) unclaim(e);
            driver.tellGroup(geometry.groupOf(pre.start()), new Unclaim(pre, preWindow, new Tell<>(to, closed)));
        } else {
            // Reservations in other groups: each group acknowledges each part, and the last acknowledgement
            // answers the close, so a free count read after the close counts every block the file held.
            long tx = file.nextTx();
            if (closingNow == null) closingNow = new ArrayList<>(1);
            closingNow.add(new PendingClose(tx, reserved.size() + 1, closed, to));
            Tell<Answer> ack = new Tell<>(driver.answersTo(), new Freed(tx, Reply.ok(Done.getInstance()), this));
            for (Extent e : reserved) driver.tellGroup(geometry.groupOf(e.start()), new Unclaim(e, -1, ack));
            driver.tellGroup(geometry.groupOf(pre.start()), new Unclaim(pre, preWindow, ack));
        }
        if (driver.lastClosed(this)) {
            // The acknowledgements come to this host: it hands the file over once they are in.
            hosting = closingNow == null || closingNow.isEmpty() ? Hosting.HANDED_OVER : Hosting.HAND_OVER_AFTER_ACKS;
        }
    }

    private boolean onlyIn(List<Extent> extents, int group) {
        for (Extent e : extents) if (geometry.groupOf(e.start()) != group) return false;
        return true;
    }

    private void onExtents(FileActor.Extents m) {
        volume.countMessage();
        m.replyTo().tell(Reply.ok(file.extents()));
    }

    private void onHeld(FileActor.Held m) {
        volume.countMessage();
        List<Extent> held = new ArrayList<>(file.extents());
        held.addAll(file.preallocated());
        m.replyTo().tell(Reply.ok(held));
    }

    private void onUsePolicy(FileActor.UsePolicy m) {
        policy = m.policy();
        discardWindow();
        file.windowGoalBlocks = policy.initialWindowBlocks();
    }

    /** Gives back the preallocation and a gap's reservation. */
    private void dropPrealloc() {
        for (Extent e : file.dropPreallocations()) unclaim(e);
    }

    private void discardWindow() {
        dropPrealloc();
        if (file.windowGroup >= 0) discardWindow(file.windowGroup, file.id);
        file.windowDiscarded();
    }
}
