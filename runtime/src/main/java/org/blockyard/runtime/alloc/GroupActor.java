package org.blockyard.runtime.alloc;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import akka.Done;
import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.PostStop;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;
import akka.actor.typed.javadsl.StashBuffer;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;

/**
 * One block group as an actor: it owns the group's {@link BlockGroup} (bitmap, windows, free count), so
 * allocation needs no lock. Every message is served in turn, except that a window search longer than
 * one slice ({@code searchSliceWords} bitmap words) is continued by messages the actor sends itself:
 * between slices it serves everything else, and only a request aimed at the space a provisional window
 * may slide into waits in the stash until that search is over (seed 000, Tweedie's proposal).
 */
public final class GroupActor extends AbstractBehavior<GroupActor.Command> {

    public interface Command {}

    /** A file's request; answered with {@link Allocated} (0 blocks when this group cannot serve it). */
    public record Allocate(BlockGroup.Request request, ActorRef<Allocated> replyTo) implements Command {}

    /** The answer to {@link Allocate}; file actors take it directly, without an adapter. */
    public record Allocated(int group, BlockGroup.Outcome outcome) implements FileActor.Command {}

    /** ext3_discard_reservation for one file. */
    public record DiscardWindow(long file) implements Command {}

    /** A file gives back its unused preallocation (no answer: it cannot fail unless the file is wrong). */
    public record Unclaim(Extent extent) implements Command {}

    /** Frees extents of this group, all or none. */
    public record Free(List<Extent> extents, ActorRef<Reply<Done>> replyTo) implements Command {}

    /** First phase of a release across groups: check and hold the extents; nothing is freed yet. */
    public record PrepareFree(long tx, List<Extent> extents, ActorRef<Reply<Done>> replyTo) implements Command {}

    public record CommitFree(long tx, ActorRef<Reply<Done>> replyTo) implements Command {}

    public record AbortFree(long tx) implements Command {}

    public record ClaimExtents(BlockGroup.ExtentClaim claim, ActorRef<List<Extent>> replyTo) implements Command {}

    public record FreeRuns(long from, long to, int maxCount, ActorRef<List<Extent>> replyTo) implements Command {}

    /** A consistent copy of the group's state, for checks and introspection. */
    public record Inspect(ActorRef<Snapshot> replyTo) implements Command {}

    public record WindowInfo(long file, Extent extent) {}

    public record Snapshot(int group, long start, long end, long firstDataBlock, long freeBlocks, Bitmap bitmap,
                           List<WindowInfo> windows, int runningSearches) {}

    private record ContinueSearch(long id) implements Command {}

    private final int group;
    private final BlockGroup state;
    private final VolumeState volume;
    private final int sliceWords;
    private final StashBuffer<Command> stash;
    private final Map<Long, Running> running = new HashMap<>();
    private final Map<Long, List<Extent>> prepared = new HashMap<>();
    private long nextSearchId;

    private record Running(BlockGroup.WindowSearch search, ActorRef<Allocated> replyTo) {}

    /** A group actor over a group prepared by the caller (tests, volumes loaded from an image). */
    public static Behavior<Command> create(BlockGroup state, VolumeState volume, int sliceWords, int stashCapacity) {
        return Behaviors.withStash(stashCapacity, stash -> Behaviors.setup(ctx ->
                new GroupActor(ctx, stash, state, volume, sliceWords)));
    }

    private GroupActor(ActorContext<Command> context, StashBuffer<Command> stash, BlockGroup state,
                       VolumeState volume, int sliceWords) {
        super(context);
        if (sliceWords < 1) throw new IllegalArgumentException("search slice of " + sliceWords + " words");
        this.group = state.group();
        this.state = state;
        this.volume = volume;
        this.sliceWords = sliceWords;
        this.stash = stash;
        state.attach(volume);
        publish();
    }

    @Override
    public Receive<Command> createReceive() {
        return newReceiveBuilder()
                .onMessage(Allocate.class, this::onAllocate)
                .onMessage(ContinueSearch.class, this::onContinueSearch)
                .onMessage(DiscardWindow.class, this::onDiscardWindow)
                .onMessage(Unclaim.class, this::onUnclaim)
                .onMessage(Free.class, this::onFree)
                .onMessage(PrepareFree.class, this::onPrepareFree)
                .onMessage(CommitFree.class, this::onCommitFree)
                .onMessage(AbortFree.class, this::onAbortFree)
                .onMessage(ClaimExtents.class, this::onClaimExtents)
                .onMessage(FreeRuns.class, this::onFreeRuns)
                .onMessage(Inspect.class, this::onInspect)
                .onSignal(PostStop.class, s -> onStop())
                .build();
    }

    private Behavior<Command> onAllocate(Allocate m) {
        volume.countMessage();
        if (!running.isEmpty()) {
            long goal = m.request().goal();
            for (Running r : running.values()) {
                if (r.search().contends(goal)) {
                    if (stash.isFull()) break; // serve it now rather than lose it; windows still never overlap
                    volume.countStashed();
                    stash.stash(m);
                    return this;
                }
            }
        }
        BlockGroup.Started started = state.begin(m.request());
        BlockGroup.WindowSearch search = started.search();
        if (search == null) {
            reply(m.replyTo(), started.outcome());
            return this;
        }
        volume.countSlice();
        if (search.run(sliceWords, false)) {
            reply(m.replyTo(), state.finish(search));
            return this;
        }
        long id = nextSearchId++;
        running.put(id, new Running(search, m.replyTo()));
        getContext().getSelf().tell(new ContinueSearch(id));
        return this;
    }

    private Behavior<Command> onContinueSearch(ContinueSearch m) {
        volume.countMessage();
        Running r = running.get(m.id());
        if (r == null) return this;
        volume.countSlice();
        if (!r.search().run(sliceWords, false)) {
            getContext().getSelf().tell(m);
            return this;
        }
        running.remove(m.id());
        reply(r.replyTo(), state.finish(r.search()));
        return stash.isEmpty() ? this : stash.unstashAll(this);
    }

    /** What walks read without a message: free blocks and the longest free run. */
    private void publish() {
        volume.publishFree(group, state.freeBlocks());
        volume.publishRuns(group, state.largestFreeRun(), state.freeRunBuckets());
    }

    private void reply(ActorRef<Allocated> replyTo, BlockGroup.Outcome outcome) {
        if (outcome.allocated()) publish();
        replyTo.tell(new Allocated(group, outcome));
    }

    private Behavior<Command> onDiscardWindow(DiscardWindow m) {
        volume.countMessage();
        state.discardWindow(m.file());
        return this;
    }

    private Behavior<Command> onUnclaim(Unclaim m) {
        volume.countMessage();
        AllocationException bad = state.unclaim(m.extent());
        if (bad != null) getContext().getLog().error("group {}: returned preallocation {} refused: {}", group, m.extent(),
                bad.getMessage());
        publish();
        return this;
    }

    private Behavior<Command> onFree(Free m) {
        volume.countMessage();
        AllocationException bad = heldByPrepare(m.extents());
        if (bad == null) bad = state.free(m.extents());
        if (bad != null) {
            m.replyTo().tell(Reply.fail(bad));
            return this;
        }
        publish();
        m.replyTo().tell(Reply.ok(Done.getInstance()));
        return this;
    }

    private Behavior<Command> onPrepareFree(PrepareFree m) {
        volume.countMessage();
        AllocationException bad = heldByPrepare(m.extents());
        if (bad == null) bad = state.checkFree(m.extents());
        if (bad != null) {
            m.replyTo().tell(Reply.fail(bad));
            return this;
        }
        prepared.put(m.tx(), m.extents());
        m.replyTo().tell(Reply.ok(Done.getInstance()));
        return this;
    }

    private Behavior<Command> onCommitFree(CommitFree m) {
        volume.countMessage();
        List<Extent> extents = prepared.remove(m.tx());
        AllocationException bad = extents == null
                ? new AllocationException.InvalidRequest("no prepared release " + m.tx() + " in group " + group)
                : state.free(extents);
        publish();
        m.replyTo().tell(bad == null ? Reply.ok(Done.getInstance()) : Reply.fail(bad));
        return this;
    }

    private Behavior<Command> onAbortFree(AbortFree m) {
        volume.countMessage();
        prepared.remove(m.tx());
        return this;
    }

    /** A release that overlaps one already prepared would free a block twice. */
    private AllocationException heldByPrepare(List<Extent> extents) {
        for (List<Extent> held : prepared.values())
            for (Extent h : held)
                for (Extent e : extents)
                    if (h.overlaps(e))
                        return new AllocationException.DoubleFree("extent " + e + " overlaps " + h
                                + ", which a release in progress frees");
        return null;
    }

    private Behavior<Command> onClaimExtents(ClaimExtents m) {
        volume.countMessage();
        List<Extent> got = state.claimExtents(m.claim());
        if (!got.isEmpty()) publish();
        m.replyTo().tell(got);
        return this;
    }

    private Behavior<Command> onFreeRuns(FreeRuns m) {
        volume.countMessage();
        m.replyTo().tell(state.freeRuns(m.from(), m.to(), m.maxCount()));
        return this;
    }

    private Behavior<Command> onInspect(Inspect m) {
        volume.countMessage();
        List<WindowInfo> windows = new ArrayList<>();
        for (Extent w : state.windows()) windows.add(new WindowInfo(state.fileOfWindowAt(w.start()), w));
        m.replyTo().tell(new Snapshot(group, state.start(), state.end(), state.firstDataBlock(), state.freeBlocks(),
                state.bitmap().copy(), windows, running.size()));
        return this;
    }

    private Behavior<Command> onStop() {
        for (Running r : running.values()) r.search().abandon();
        return this;
    }
}
