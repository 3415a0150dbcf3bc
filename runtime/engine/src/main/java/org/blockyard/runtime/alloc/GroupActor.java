package org.blockyard.runtime.alloc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import akka.Done;
import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.PostStop;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;
import akka.actor.typed.javadsl.StashBuffer;
import akka.actor.typed.javadsl.TimerScheduler;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.runtime.alloc.GroupFileProtocol.AbortFree;
import org.blockyard.runtime.alloc.GroupFileProtocol.Allocate;
import org.blockyard.runtime.alloc.GroupFileProtocol.CommitFree;
import org.blockyard.runtime.alloc.GroupFileProtocol.DiscardWindow;
import org.blockyard.runtime.alloc.GroupFileProtocol.Freed;
import org.blockyard.runtime.alloc.GroupFileProtocol.PrepareFree;
import org.blockyard.runtime.alloc.GroupFileProtocol.Unclaim;

/**
 * One block group as an actor: it owns the group's {@link BlockGroup} (bitmap, windows, free count), so
 * allocation needs no lock. Every message is served in turn, except that a window search longer than
 * one slice ({@code searchSliceWords} bitmap words) is continued by messages the actor sends itself:
 * between slices it serves everything else, and only a request aimed at the space a provisional window
 * may slide into waits in the stash until that search is over (seed 000, Tweedie's proposal). What file
 * servers send it and what it answers them is {@link GroupFileProtocol}; the rest of its protocol is here.
 *
 * <p>Faults: every message is answered. A handler that throws (a bug here, or a policy plugin that threw)
 * answers the request it was serving with {@link AllocationException.Failed}, and the group recovers in
 * place ({@link BlockGroup#recoverAfterFault}: the bitmap is checked, windows are dropped, searches in
 * progress are answered with {@code Failed}); the actor keeps running and the log names the cause.
 * After {@link Shutdown} every request is answered with {@link AllocationException.Closed}. A prepared
 * release that is neither committed nor aborted within {@code preparedExpiry} is aborted, so a caller
 * that vanished between the two phases cannot hold blocks forever.
 */
public final class GroupActor extends AbstractBehavior<GroupActor.Command> {

    /** What a group takes: a file server's requests ({@link GroupFileProtocol.ToGroup}) and the messages below. */
    public sealed interface Command permits GroupFileProtocol.ToGroup, Free, ClaimExtents, FreeRuns, Inspect, Count, Lend,
            GiveBack, UsePolicy, Shutdown, ContinueSearch, ExpirePrepared {}

    /** Frees extents of this group, all or none. */
    public record Free(List<Extent> extents, ActorRef<Reply<Done>> replyTo) implements Command {}

    public record ClaimExtents(BlockGroup.ExtentClaim claim, ActorRef<Reply<List<Extent>>> replyTo)
            implements Command {}

    public record FreeRuns(long from, long to, int maxCount, ActorRef<Reply<List<Extent>>> replyTo)
            implements Command {}

    /** A consistent copy of the group's state, with its bitmap, for checks. */
    public record Inspect(ActorRef<Reply<Snapshot>> replyTo) implements Command {}

    /** The group's windows and running searches, without copying its bitmap. */
    public record Count(ActorRef<Reply<Counts>> replyTo) implements Command {}

    public record Counts(int windows, int runningSearches) {}

    /**
     * A session's refill: with {@code ask}, claim what the walk asks of this group, lend it to the session and
     * book it; then the session continues the walk ({@link LoanSession#continueLend}). Not answered.
     */
    public record Lend(LoanSession session, ExtentWalk walk, long piece, boolean ask, int hops) implements Command {}

    /**
     * A session gives back blocks of its loan, freed by its caller or never handed out: they are freed here and
     * leave the book; with {@code ending}, the session closed, and every other block booked for it is an
     * ordinary allocation from now on. Completes {@code done} (when not null) with the blocks freed.
     */
    public record GiveBack(LoanSession session, List<Extent> extents, boolean ending, CompletableFuture<Long> done)
            implements Command {}

    /** The allocator switched policies: use {@code policy} from the next request on. */
    public record UsePolicy(AllocationPolicy policy) implements Command {}

    /** From the allocator as it closes: answer everything from now on with {@code Closed}; acknowledges. */
    public record Shutdown(ActorRef<Done> replyTo) implements Command {}

    public record WindowInfo(long file, Extent extent) {}

    public record Snapshot(int group, long start, long end, long firstDataBlock, long freeBlocks, Bitmap bitmap,
                           List<WindowInfo> windows, int runningSearches) {}

    private record ContinueSearch(Running search) implements Command {}

    private record ExpirePrepared(long tx) implements Command {}

    private final int group;
    private final BlockGroup state;
    private final VolumeState volume;
    private final int sliceWords;
    private final StashBuffer<Command> stash;
    private final TimerScheduler<Command> timers;
    private final Duration preparedExpiry;
    private final List<Running> running = new ArrayList<>(); // searches longer than a slice: few at a time
    private final Map<Long, List<Extent>> prepared = new HashMap<>();
    private final LoanBook book = new LoanBook();
    private boolean closed;

    /** A window search in slices. Compared by identity: two searches are never the same one. */
    private static final class Running {
        final BlockGroup.WindowSearch search;
        final Allocate ask;

        Running(BlockGroup.WindowSearch search, Allocate ask) {
            this.search = search;
            this.ask = ask;
        }

        BlockGroup.WindowSearch search() {
            return search;
        }

        Allocate ask() {
            return ask;
        }
    }

    /** How long a prepared release may wait for its commit or abort by default. */
    public static final Duration PREPARED_EXPIRY = Duration.ofMinutes(2);

    /** A group actor over a group prepared by the caller (tests, volumes loaded from an image). */
    public static Behavior<Command> create(BlockGroup state, VolumeState volume, int sliceWords, int stashCapacity) {
        return create(state, volume, sliceWords, stashCapacity, PREPARED_EXPIRY);
    }

    /** @param preparedExpiry how long a prepared release may wait for its commit or abort */
    public static Behavior<Command> create(BlockGroup state, VolumeState volume, int sliceWords, int stashCapacity,
                                           Duration preparedExpiry) {
        return Behaviors.withStash(stashCapacity, stash -> Behaviors.setup(ctx -> Behaviors.withTimers(timers ->
                new GroupActor(ctx, stash, timers, state, volume, sliceWords, preparedExpiry))));
    }

    private GroupActor(ActorContext<Command> context, StashBuffer<Command> stash, TimerScheduler<Command> timers,
                       BlockGroup state, VolumeState volume, int sliceWords, Duration preparedExpiry) {
        super(context);
        this.timers = timers;
        this.preparedExpiry = preparedExpiry;
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
        return Receives.of(this::guarded, s -> s instanceof PostStop ? onStop() : Behaviors.unhandled());
    }

    /** Serves one message; a fault answers it with {@code Failed} and the group recovers in place. */
    private Behavior<Command> guarded(Command m) {
        try {
            if (closed) return refuse(m, new AllocationException.Closed("the allocator is closed"));
            return serve(m);
        } catch (RuntimeException | StackOverflowError e) {
            return onFault(m, e);
        }
    }

    private Behavior<Command> serve(Command m) {
        if (m instanceof Allocate a) return onAllocate(a);
        if (m instanceof ContinueSearch c) return onContinueSearch(c);
        if (m instanceof DiscardWindow d) return onDiscardWindow(d);
        if (m instanceof Unclaim u) return onUnclaim(u);
        if (m instanceof Free f) return onFree(f);
        if (m instanceof PrepareFree p) return onPrepareFree(p);
        if (m instanceof CommitFree c) return onCommitFree(c);
        if (m instanceof AbortFree a) return onAbortFree(a);
        if (m instanceof ExpirePrepared x) return onExpirePrepared(x);
        if (m instanceof ClaimExtents c) return onClaimExtents(c);
        if (m instanceof Lend l) return onLend(l);
        if (m instanceof GiveBack b) return onGiveBack(b);
        if (m instanceof FreeRuns f) return onFreeRuns(f);
        if (m instanceof Inspect i) return onInspect(i);
        if (m instanceof Count c) return onCount(c);
        if (m instanceof Shutdown s) return onShutdown(s);
        if (m instanceof UsePolicy u) {
            state.usePolicy(u.policy());
            return this;
        }
        throw new IllegalArgumentException("group " + group + " has no handler for " + m.getClass().getName());
    }

    /** Answers {@code m} (if it expects an answer) with {@code error}; changes nothing. */
    private Behavior<Command> refuse(Command m, AllocationException error) {
        if (m instanceof Allocate a) a.replyTo().tell(a.answer(group, null, error));
        else if (m instanceof Free f) f.replyTo().tell(Reply.fail(error));
        else if (m instanceof PrepareFree p) p.replyTo().tell(new Freed(p.tx(), Reply.fail(error), p.asker()));
        else if (m instanceof CommitFree c) c.replyTo().tell(new Freed(c.tx(), Reply.fail(error), c.asker()));
        else if (m instanceof ClaimExtents c) c.replyTo().tell(Reply.fail(error));
        else if (m instanceof FreeRuns f) f.replyTo().tell(Reply.fail(error));
        else if (m instanceof Inspect i) i.replyTo().tell(Reply.fail(error));
        else if (m instanceof Count c) c.replyTo().tell(Reply.fail(error));
        else if (m instanceof Shutdown s) s.replyTo().tell(Done.getInstance());
        else if (m instanceof Unclaim u && u.then() != null) u.then().send();
        else if (m instanceof GiveBack b && b.done() != null) b.done().completeExceptionally(error);
        else if (m instanceof Lend l) l.session().refillOver(l.piece());
        return this;
    }

    private Behavior<Command> onFault(Command m, Throwable e) {
        getContext().getLog().error("group {}: {} failed; answering it with an error and recovering the group",
                group, m.getClass().getSimpleName(), e);
        AllocationException failed = new AllocationException.Failed("group " + group + " failed while serving "
                + m.getClass().getSimpleName() + ": " + e);
        refuse(m, failed);
        // Searches in progress may have seen the state the fault left: answer them and start afresh.
        for (Running r : running) {
            r.search().abandon();
            r.ask().replyTo().tell(r.ask().answer(group, null, failed));
        }
        running.clear();
        try {
            state.recoverAfterFault();
        } catch (IllegalStateException broken) {
            getContext().getLog().error("group {}: bitmap inconsistent after the fault; the group stops", group, broken);
            throw broken;
        }
        publish();
        return stash.isEmpty() ? this : stash.unstashAll(this);
    }

    private Behavior<Command> onShutdown(Shutdown m) {
        closed = true;
        AllocationException c = new AllocationException.Closed("the allocator closed while this request was served");
        for (Running r : running) {
            r.search().abandon();
            r.ask().replyTo().tell(r.ask().answer(group, null, c));
        }
        running.clear();
        prepared.clear();
        m.replyTo().tell(Done.getInstance());
        return stash.isEmpty() ? this : stash.unstashAll(this); // each is refused as closed
    }

    private Behavior<Command> onAllocate(Allocate m) {
        volume.countMessage();
        if (!running.isEmpty()) {
            long goal = m.request().goal();
            for (Running r : running) {
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
            reply(m, started.outcome());
            return this;
        }
        volume.countSlice();
        if (search.run(sliceWords, false)) {
            reply(m, state.finish(search));
            return this;
        }
        Running r = new Running(search, m);
        running.add(r);
        getContext().getSelf().tell(new ContinueSearch(r));
        return this;
    }

    private Behavior<Command> onContinueSearch(ContinueSearch m) {
        volume.countMessage();
        Running r = m.search();
        if (!running.contains(r)) return this; // answered meanwhile (a fault, the shutdown)
        volume.countSlice();
        if (!r.search().run(sliceWords, false)) {
            getContext().getSelf().tell(m);
            return this;
        }
        running.remove(r);
        reply(r.ask(), state.finish(r.search()));
        return stash.isEmpty() ? this : stash.unstashAll(this);
    }

    /** What walks read without a message: free blocks and the longest free run. */
    private void publish() {
        volume.publishFree(group, state.freeBlocks());
        volume.publishRuns(group, state.largestFreeRun(), state.freeRunBuckets());
    }

    /**
     * Answers {@code ask}, handing back the handle of the server that asked. A {@code closing} request (a file
     * written whole, whose every remaining block this claim holds) that got all it wanted drops the file's window
     * here at once, as its close would: the answer then says the window was dropped, and the close has nothing
     * to send this group.
     */
    private void reply(Allocate ask, BlockGroup.Outcome outcome) {
        if (ask.closing() && outcome.allocated() && outcome.blocks() >= ask.request().wanted()) {
            state.discardWindow(ask.request().file());
            if (outcome.window() != null)
                outcome = new BlockGroup.Outcome(outcome.start(), outcome.blocks(),
                        new BlockGroup.Dropped(outcome.window().goalBlocks()));
        }
        if (outcome.allocated()) publish();
        ask.replyTo().tell(ask.answer(group, outcome, null));
    }

    private Behavior<Command> onDiscardWindow(DiscardWindow m) {
        volume.countMessage();
        state.discardWindow(m.file());
        return this;
    }

    private Behavior<Command> onUnclaim(Unclaim m) {
        volume.countMessage();
        if (m.discardWindowOf() >= 0) state.discardWindow(m.discardWindowOf());
        AllocationException bad = state.unclaim(m.extent());
        if (bad != null) getContext().getLog().error("group {}: returned preallocation {} refused: {}", group, m.extent(),
                bad.getMessage());
        publish();
        if (m.then() != null) m.then().send();
        return this;
    }

    private Behavior<Command> onFree(Free m) {
        volume.countMessage();
        AllocationException bad = heldByPrepare(m.extents());
        if (bad == null) bad = book.takeBack(m.extents());
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
        if (bad == null) bad = book.takeBack(m.extents()); // an abort leaves them allocated, as they were
        if (bad == null) bad = state.checkFree(m.extents());
        if (bad != null) {
            m.replyTo().tell(new Freed(m.tx(), Reply.fail(bad), m.asker()));
            return this;
        }
        prepared.put(m.tx(), m.extents());
        timers.startSingleTimer(new ExpirePrepared(m.tx()), preparedExpiry);
        m.replyTo().tell(new Freed(m.tx(), Reply.ok(Done.getInstance()), m.asker()));
        return this;
    }

    private Behavior<Command> onCommitFree(CommitFree m) {
        volume.countMessage();
        List<Extent> extents = prepared.remove(m.tx());
        timers.cancel(new ExpirePrepared(m.tx()));
        AllocationException bad = extents == null
                ? new AllocationException.InvalidRequest("no prepared release " + m.tx() + " in group " + group)
                : state.free(extents);
        publish();
        m.replyTo().tell(new Freed(m.tx(), bad == null ? Reply.ok(Done.getInstance()) : Reply.fail(bad), m.asker()));
        return this;
    }

    private Behavior<Command> onAbortFree(AbortFree m) {
        volume.countMessage();
        prepared.remove(m.tx());
        timers.cancel(new ExpirePrepared(m.tx()));
        return this;
    }

    private Behavior<Command> onExpirePrepared(ExpirePrepared m) {
        List<Extent> held = prepared.remove(m.tx());
        if (held != null)
            getContext().getLog().warn("group {}: release {} of {} was prepared but neither committed nor aborted "
                    + "within {}; aborted", group, m.tx(), held, preparedExpiry);
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
        m.replyTo().tell(Reply.ok(got));
        return this;
    }

    private Behavior<Command> onLend(Lend m) {
        volume.countMessage();
        if (m.ask() && m.session().mayBorrow()) { // a refill sent before the volume ran full lends nothing
            List<Extent> got = state.claimExtents(m.walk().claimFor(group)); // whole pieces: ExtentWalk.wholePiecesOnly
            m.walk().took(got);
            if (!got.isEmpty()) {
                long n = blocks(got);
                volume.publishFree(group, state.freeBlocks(), n);
                volume.publishRuns(group, state.largestFreeRun(), state.freeRunBuckets());
                if (m.session().lent(group, got)) {
                    for (Extent e : got) book.lent(e, m.session());
                } else { // the session closed meanwhile
                    state.free(got);
                    volume.publishFree(group, state.freeBlocks(), -n);
                    publish();
                }
            }
        }
        m.session().continueLend(m);
        return this;
    }

    private Behavior<Command> onGiveBack(GiveBack m) {
        volume.countMessage();
        m.session().arrived(m.extents());
        for (Extent e : m.extents()) book.remove(e.start(), e.end());
        if (m.ending()) book.ended(m.session());
        long n = 0;
        if (!m.extents().isEmpty()) {
            AllocationException bad = state.free(m.extents());
            if (bad != null) { // a bug: blocks on loan are always used in the bitmap
                getContext().getLog().error("group {}: blocks given back by {} refused: {}", group, m.session(),
                        bad.getMessage());
            } else {
                n = blocks(m.extents());
            }
            volume.publishFree(group, state.freeBlocks(), -n);
            publish();
        }
        if (m.done() != null) m.done().complete(n);
        return this;
    }

    private static long blocks(List<Extent> extents) {
        long n = 0;
        for (Extent e : extents) n += e.blocks();
        return n;
    }

    private Behavior<Command> onFreeRuns(FreeRuns m) {
        volume.countMessage();
        m.replyTo().tell(Reply.ok(state.freeRuns(m.from(), m.to(), m.maxCount())));
        return this;
    }

    private Behavior<Command> onInspect(Inspect m) {
        volume.countMessage();
        List<WindowInfo> windows = new ArrayList<>();
        for (Extent w : state.windows()) windows.add(new WindowInfo(state.fileOfWindowAt(w.start()), w));
        m.replyTo().tell(Reply.ok(new Snapshot(group, state.start(), state.end(), state.firstDataBlock(),
                state.freeBlocks(), state.bitmap().copy(), windows, running.size())));
        return this;
    }

    private Behavior<Command> onCount(Count m) {
        m.replyTo().tell(Reply.ok(new Counts(state.windowCount(), running.size())));
        return this;
    }

    private Behavior<Command> onStop() {
        for (Running r : running) r.search().abandon();
        return this;
    }
}
