package org.blockyard.runtime.volume;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.AllocationSession;
import org.blockyard.api.alloc.AllocatorStats;
import org.blockyard.api.alloc.BlockAllocator;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.FreeExtentPage;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.api.alloc.MapRequest;
import org.blockyard.runtime.alloc.ActorBlockAllocator;
import org.blockyard.runtime.alloc.Reply;

/**
 * The {@link BlockAllocator} of a durable volume: each call goes to the allocator's actors, and a call that
 * may have changed metadata completes only once the journal is durable through the last record appended
 * when the actors' answer arrived. Every record of the call was appended before that answer was sent, so
 * the answer is an acknowledgement that survives a crash; calls that arrive while a transaction is being
 * forced share the next one (group commit). Read-only calls pass straight through.
 *
 * <p>Extent-API blocks belong to an owner: {@link #allocate(String, long, int, long, long)} records the owner
 * of what it hands out, and {@link #release(String, List)} refuses, changing nothing, any extent that owner
 * does not hold. The plain {@link BlockAllocator} calls use {@link Volume#DEFAULT_OWNER}.
 *
 * <p>{@link #openSession(String)} gives an owner's thread a session over a loan of the actors ({@link VolumeSession}):
 * the same records in the same order, the hand-outs on the caller's thread with no message to the groups.
 */
public final class VolumeAllocator implements BlockAllocator {
    private final ActorBlockAllocator actors;
    private final Journal journal;
    private final Volume.Catalog catalog;
    /** Extents each owner holds, physical; guarded by itself. */
    private final Map<String, ExtentMap> owned = new HashMap<>();
    /** The actors' own extent calls, as a session that is never closed: the path of the plain calls. */
    private final AllocationSession plain;

    VolumeAllocator(ActorBlockAllocator actors, Journal journal, Volume.Catalog catalog) {
        this.actors = actors;
        this.journal = journal;
        this.catalog = catalog;
        this.plain = AllocationSession.forwarding(actors);
        for (String owner : catalog.names(Metadata.KIND_OWNER))
            owned.put(owner, catalog.mirror(catalog.existing(Metadata.KIND_OWNER, owner)));
    }

    /** {@code value} once record {@code record} (and every record before it) is durable. */
    private <T> CompletionStage<T> acknowledged(long record, T value) {
        return acknowledged(journal.durableThrough(record), value);
    }

    /** {@code value} once {@code durable} completes; {@code Failed} when the journal could not make it so. */
    private static <T> CompletionStage<T> acknowledged(CompletableFuture<Void> durable, T value) {
        return durable.handle((x, e) -> {
            if (e != null) throw new AllocationException.Failed(e.getMessage());
            return value;
        });
    }

    /**
     * {@code stage}'s value once the last record appended for {@code file} when the actors answered is durable.
     * The file's actor appended every record of the call before it answered, and each record's causes (the
     * group's claim of a block before the file maps it) come before it: they are durable too.
     */
    private <T> CompletionStage<T> durable(String file, CompletionStage<T> stage) {
        return stage.thenCompose(v -> acknowledged(catalog.lastRecord(Metadata.KIND_FILE, file), v));
    }

    /**
     * A stand-in for an actor client's reply address ({@link DurableReplies}): the client spawns it as its child
     * and gives it as {@code replyTo} in the messages it sends the allocator's actors; each reply reaches
     * {@code replyTo} once it is durable. With {@code file}, for messages about that file only (a reply waits for
     * the file's last record); with null, for any (a reply waits for every record appended when it arrived).
     */
    public Behavior<Object> acknowledging(String file, ActorRef<Reply<?>> replyTo) {
        return DurableReplies.create(() -> file == null ? journal.sync()
                : journal.durableThrough(catalog.lastRecord(Metadata.KIND_FILE, file)), replyTo);
    }

    @Override
    public Geometry geometry() {
        return actors.geometry();
    }

    @Override
    public String policy() {
        return actors.policy();
    }

    @Override
    public CompletionStage<Void> open(String file) {
        AllocationException bad = badName(file);
        return bad != null ? failed(bad) : durable(file, actors.open(file));
    }

    /** The refusal of a missing name or of one the file table cannot hold, else null. */
    private static AllocationException badName(String file) {
        if (file == null) return new AllocationException.InvalidRequest("a file needs a name, not null");
        int bytes = file.getBytes(StandardCharsets.UTF_8).length;
        return bytes <= Layout.MAX_NAME_BYTES ? null : new AllocationException.InvalidRequest("file name of " + bytes
                + " bytes; the file table holds at most " + Layout.MAX_NAME_BYTES);
    }

    /** The refusal of a call on a file named null, else null. */
    private static AllocationException noName(String file) {
        return file != null ? null : new AllocationException.InvalidRequest("a file needs a name, not null");
    }

    private static <T> CompletionStage<T> failed(AllocationException e) {
        return CompletableFuture.failedFuture(e);
    }

    @Override
    public CompletionStage<BlockRun> getBlocks(String file, long logicalBlock, int maxBlocks, boolean create) {
        if (file == null) return failed(noName(file));
        CompletionStage<BlockRun> s = actors.getBlocks(file, logicalBlock, maxBlocks, create);
        return create ? durable(file, s) : s;
    }

    /** The whole batch in one message to the actors, then one wait for the journal: one commit serves it. */
    @Override
    public CompletionStage<List<BlockRun>> getBlocks(String file, List<MapRequest> requests) {
        if (file == null) return failed(noName(file));
        if (requests == null) return failed(new AllocationException.InvalidRequest("a batch of requests, not null"));
        return durable(file, actors.getBlocks(file, requests));
    }

    /** A file written whole in one message to the actors, then one wait for the journal. */
    @Override
    public CompletionStage<List<BlockRun>> writeFile(String file, List<MapRequest> requests) {
        AllocationException bad = badName(file);
        if (bad == null && requests == null)
            bad = new AllocationException.InvalidRequest("a batch of requests, not null");
        return bad != null ? failed(bad) : durable(file, actors.writeFile(file, requests));
    }

    @Override
    public CompletionStage<Long> truncate(String file, long fromLogicalBlock) {
        return file == null ? failed(noName(file)) : durable(file, actors.truncate(file, fromLogicalBlock));
    }

    @Override
    public CompletionStage<Long> markWritten(String file, long logicalBlock, long blocks) {
        return file == null ? failed(noName(file)) : durable(file, actors.markWritten(file, logicalBlock, blocks));
    }

    @Override
    public CompletionStage<Long> discardUnwritten(String file, long logicalBlock, long blocks) {
        return file == null ? failed(noName(file)) : durable(file, actors.discardUnwritten(file, logicalBlock, blocks));
    }

    /** Journalled as {@link #discardUnwritten} is: complete once the file's record is durable. */
    @Override
    public CompletionStage<Long> punchHole(String file, long logicalBlock, long blocks) {
        return file == null ? failed(noName(file)) : durable(file, actors.punchHole(file, logicalBlock, blocks));
    }

    @Override
    public CompletionStage<Void> close(String file) {
        return file == null ? failed(noName(file)) : durable(file, actors.close(file));
    }

    /**
     * Deletes a closed file, stored or opened in this run; complete once the deletion (its blocks freed, its
     * table entry gone) is durable.
     */
    @Override
    public CompletionStage<Void> delete(String file) {
        if (file == null) return failed(noName(file));
        return actors.delete(file).thenCompose(v -> acknowledged(journal.sync(), v));
    }

    /** A file's extents; for a stored file not opened in this run, from the file table. */
    @Override
    public CompletionStage<List<Extent>> fileExtents(String file) {
        if (file == null) return failed(noName(file));
        Long id = catalog.existing(Metadata.KIND_FILE, file);
        ExtentMap m = id == null ? null : catalog.mirror(id);
        if (m == null) return actors.fileExtents(file); // not stored, or deleted meanwhile
        List<Extent> out = new ArrayList<>();
        synchronized (m) {
            for (ExtentMap.Run r : m.runs()) out.add(new Extent(r.physical(), r.blocks()));
        }
        return CompletableFuture.completedFuture(out);
    }

    /** The runs {@code owner} holds now, for checks. */
    List<ExtentMap.Run> ownerRuns(String owner) {
        synchronized (owned) {
            ExtentMap m = owned.get(owner);
            return m == null ? List.of() : List.copyOf(m.runs());
        }
    }

    /** The names of the files on the volume, sorted. */
    public List<String> files() {
        return catalog.names(Metadata.KIND_FILE);
    }

    /** A session of owner {@link Volume#DEFAULT_OWNER}, as {@link #openSession(String)}. */
    @Override
    public AllocationSession openSession() {
        return openSession(Volume.DEFAULT_OWNER);
    }

    /**
     * A session for the calling thread whose extent calls are {@code owner}'s ({@link #allocate(String, long, int,
     * long, long)}, {@link #release(String, List)}), over a loan of the actors: a call the loan serves sends no
     * message to the group actors, appends the owner's record on the caller's thread and completes once that record
     * is durable, so concurrent sessions share commits. Loaned blocks no call handed out are free after a crash.
     *
     * @throws AllocationException.InvalidRequest when the file table cannot hold the owner's name
     */
    public AllocationSession openSession(String owner) {
        AllocationException bad = badOwner(owner);
        if (bad != null) throw bad;
        return new VolumeSession(this, owner, actors.openSession(), actors);
    }

    @Override
    public CompletionStage<List<Extent>> allocate(long wantBlocks, int unitBlocks, long maxExtentBlocks, long hint) {
        return allocate(Volume.DEFAULT_OWNER, wantBlocks, unitBlocks, maxExtentBlocks, hint);
    }

    /**
     * As {@link #allocate(long, int, long, long)}, the extents belonging to {@code owner}. The groups claim the
     * blocks (and journal the claims) before the owner's record is appended: a crash between the two leaves
     * them used and owned by no one, which recovery frees; the call was not acknowledged.
     *
     * <p>An allocation that would leave the owner more extents (runs, once adjacent ones are merged) than one
     * file-table entry may hold ({@link Layout#maxEntryExtents()}), or its entry more blocks than the file table
     * has left, is refused with NoSpace and its blocks go back: nothing changes.
     */
    public CompletionStage<List<Extent>> allocate(String owner, long wantBlocks, int unitBlocks, long maxExtentBlocks,
                                                  long hint) {
        AllocationException bad = badOwner(owner);
        return bad != null ? failed(bad) : allocate(owner, wantBlocks, unitBlocks, maxExtentBlocks, hint, plain);
    }

    /** The refusal of an owner name the file table cannot hold, else null. */
    static AllocationException badOwner(String owner) {
        if (owner == null || owner.isBlank() || owner.getBytes(StandardCharsets.UTF_8).length > Layout.MAX_NAME_BYTES)
            return new AllocationException.InvalidRequest("an owner needs a name of 1 to " + Layout.MAX_NAME_BYTES
                    + " bytes");
        return null;
    }

    /**
     * As {@link #allocate(String, long, int, long, long)}, the blocks taken from {@code via}: the actors
     * ({@link #plain}), or a session's loan, whose blocks the groups claimed (and journalled as claimed) when they
     * lent them. Either way the owner's record is appended once memory handed the blocks out, and the call
     * completes once it is durable; refused blocks go back to where they came from.
     */
    CompletionStage<List<Extent>> allocate(String owner, long wantBlocks, int unitBlocks, long maxExtentBlocks,
                                           long hint, AllocationSession via) {
        try {
            catalog.checkAdmits(Metadata.KIND_OWNER, owner);
        } catch (AllocationException.NoSpace full) {
            return failed(full);
        }
        return via.allocate(wantBlocks, unitBlocks, maxExtentBlocks, hint).thenCompose(extents -> {
            AllocationException.NoSpace refused;
            long record = 0;
            // The record is appended under the same lock as the change, so the journal holds the owners' changes in
            // the order memory made them (a release of these extents cannot be journalled before their allocation).
            synchronized (owned) {
                refused = take(owner, extents);
                if (refused == null) {
                    record = journal.append(new JournalRecord.Owner(catalog.existing(Metadata.KIND_OWNER, owner),
                            List.copyOf(extents), true));
                    catalog.counted(owned.get(owner)); // runs merged may give slots back, now that the record is in
                }
            }
            if (refused != null) { // the blocks go back where they came from: nothing of this call is kept
                AllocationException.NoSpace why = refused;
                CompletionStage<Void> back = via == plain ? actors.release(extents)
                        : via.release(extents).exceptionallyCompose(e -> actors.release(extents)); // a session closed
                return back.thenCompose(v -> CompletableFuture.<List<Extent>>failedFuture(why));
            }
            return acknowledged(record, extents);
        });
    }

    /**
     * Adds {@code extents} to {@code owner}'s map, its entry created (and its slots counted) when it is new;
     * answers the refusal instead, nothing changed, when the owner or the file table cannot hold them. The
     * caller holds {@link #owned}.
     */
    private AllocationException.NoSpace take(String owner, List<Extent> extents) {
        ExtentMap m = owned.get(owner);
        if (m == null) {
            ExtentMap alone = new ExtentMap();
            for (Extent e : extents) alone.put(e.start(), e.start(), e.blocks(), false);
            if (alone.size() > catalog.maxRuns())
                return catalog.tooManyRuns(Metadata.KIND_OWNER, owner, 0, alone.size());
            long id;
            try {
                id = catalog.idOf(Metadata.KIND_OWNER, owner, catalog.slotsFor(alone.size()));
            } catch (AllocationException.NoSpace full) { // another owner took the last slot meanwhile
                return full;
            }
            m = catalog.mirror(id);
            owned.put(owner, m);
            for (Extent e : extents) m.put(e.start(), e.start(), e.blocks(), false);
            return null;
        }
        int before = m.size();
        for (Extent e : extents) m.put(e.start(), e.start(), e.blocks(), false);
        AllocationException.NoSpace refused = catalog.grow(m, before, m.size(), Metadata.KIND_OWNER, owner);
        if (refused != null) for (Extent e : extents) m.remove(e.start(), e.blocks(), false); // as it was
        return refused;
    }

    @Override
    public CompletionStage<Void> release(List<Extent> extents) {
        return release(Volume.DEFAULT_OWNER, extents);
    }

    /**
     * Frees extents {@code owner} holds, all or none: an extent (or part of one) it does not hold, or a null
     * argument, is refused with InvalidRequest naming it, and nothing changes. A release that cuts runs in two
     * and would leave the owner more extents than one entry may hold (or its entry more blocks than the file
     * table has left) is refused with NoSpace, as ext4 refuses a hole it has no room to record.
     *
     * <p>The owner's record is journalled before any group can free a block of it: once a group has freed a
     * block, an allocation may get it and journal it for its new owner, and that record must come after this
     * one (the journal applies records in order, and a commit holds a prefix of them). A crash between the
     * record and the groups' frees leaves blocks used and owned by no one, which recovery frees.
     *
     * <p>When the groups refuse the release (their checks and the prepare phase of a release across groups
     * free nothing), the extents are the owner's again, in memory and by a record that re-adds them, and the
     * call answers the refusal once that record is durable. A fault (no answer in time, an actor that failed,
     * the allocator closing) leaves unknown which groups freed their part: the extents stay released, so no
     * block freed in a group is ever held again; whatever a group did not free is used and owned by no one
     * until the volume's close or its recovery frees it; the call answers the fault.
     */
    public CompletionStage<Void> release(String owner, List<Extent> extents) {
        return release(owner, extents, plain);
    }

    /**
     * As {@link #release(String, List)}, the blocks given to {@code via}: the actors ({@link #plain}), or a
     * session, which keeps blocks it handed out in its loan (no group frees them: they stay claimed, used and owned
     * by no one, which recovery frees) and passes the rest to the groups. The owner's record is appended before
     * {@code via} sees the blocks, so before any of them can be handed out again; a session's release completes
     * once that record is durable.
     */
    CompletionStage<Void> release(String owner, List<Extent> extents, AllocationSession via) {
        AllocationException bad = checkRelease(owner, extents);
        if (bad != null) return failed(bad);
        if (extents.isEmpty()) return CompletableFuture.completedFuture(null);
        List<Extent> list = List.copyOf(extents);
        long id, freed;
        synchronized (owned) {
            ExtentMap m = owned.get(owner);
            for (Extent e : list) {
                if (m == null || !m.holdsIdentity(e.start(), e.blocks()))
                    return failed(new AllocationException.InvalidRequest("extent " + e + " is not held by owner '"
                            + owner + "': refused, nothing freed"));
            }
            id = catalog.existing(Metadata.KIND_OWNER, owner);
            int before = m.size();
            for (Extent e : list) m.remove(e.start(), e.blocks(), false);
            AllocationException.NoSpace refused = catalog.grow(m, before, m.size(), Metadata.KIND_OWNER, owner);
            if (refused != null) {
                for (Extent e : list) m.put(e.start(), e.start(), e.blocks(), false); // as it was
                return failed(refused);
            }
            freed = journal.append(new JournalRecord.Owner(id, list, false));
            catalog.counted(m);
        }
        return via.release(list).handle((v, err) -> {
            if (err == null) return acknowledged(via == plain ? journal.sync() : journal.durableThrough(freed), (Void) null);
            Throwable cause = err instanceof CompletionException && err.getCause() != null ? err.getCause() : err;
            if (!freedNothing(cause)) {
                AllocationException told = cause instanceof AllocationException.Closed
                        ? new AllocationException.Closed(partly(owner, list, cause))
                        : new AllocationException.Failed(partly(owner, list, cause));
                return journal.sync().<Void>handle((x, e) -> { throw told; });
            }
            long record;
            synchronized (owned) {
                ExtentMap m = owned.get(owner);
                int before = m.size();
                for (Extent e : list) m.put(e.start(), e.start(), e.blocks(), false);
                AllocationException.NoSpace full = catalog.grow(m, before, m.size(), Metadata.KIND_OWNER, owner);
                if (full != null) { // what the owner took meanwhile leaves no room: the extents stay released
                    for (Extent e : list) m.remove(e.start(), e.blocks(), false);
                    AllocationException told = new AllocationException.Failed(partly(owner, list, cause)
                            + "; with what it took meanwhile, its file-table entry could not hold them again");
                    return journal.sync().<Void>handle((x, e) -> { throw told; });
                }
                record = journal.append(new JournalRecord.Owner(id, list, true));
            }
            return journal.durableThrough(record).<Void>handle((x, e) -> {
                if (e != null) throw new AllocationException.Failed(e.getMessage());
                throw cause instanceof RuntimeException r ? r : new CompletionException(cause);
            });
        }).thenCompose(s -> s);
    }

    /** The refusal of a release with a null argument or extents that overlap each other, else null. */
    private static AllocationException checkRelease(String owner, List<Extent> extents) {
        if (owner == null) return new AllocationException.InvalidRequest("a release needs an owner, not null");
        if (extents == null) return new AllocationException.InvalidRequest("a release needs a list of extents, not null");
        List<Extent> sorted = new ArrayList<>(extents.size());
        for (Extent e : extents) {
            if (e == null) return new AllocationException.InvalidRequest("a null extent in a release of owner '"
                    + owner + "': refused, nothing freed");
            sorted.add(e);
        }
        sorted.sort(null);
        for (int i = 1; i < sorted.size(); i++)
            if (sorted.get(i - 1).end() > sorted.get(i).start())
                return new AllocationException.DoubleFree("extents " + sorted.get(i - 1) + " and " + sorted.get(i)
                        + " overlap: the release would free blocks twice");
        return null;
    }

    /**
     * Whether a release the actors failed freed nothing: the refusals of their checks and of the groups, which
     * free all of a release or none of it (across groups, none is freed before every group agreed).
     */
    private static boolean freedNothing(Throwable e) {
        return e instanceof AllocationException.DoubleFree || e instanceof AllocationException.OutOfRange
                || e instanceof AllocationException.SystemZone;
    }

    private static String partly(String owner, List<Extent> extents, Throwable cause) {
        return "the release of " + extents.size() + " extents of owner '" + owner + "' did not complete (" + cause
                + "): they are no longer the owner's; whatever of them no group freed is freed when the volume is "
                + "closed or recovered";
    }

    @Override
    public CompletionStage<FreeExtentPage> freeExtents(long fromBlock, long toBlock, int maxCount) {
        return actors.freeExtents(fromBlock, toBlock, maxCount);
    }

    @Override
    public CompletionStage<Long> freeBlocks() {
        return actors.freeBlocks();
    }

    @Override
    public CompletionStage<Double> fragmentationScore() {
        return actors.fragmentationScore();
    }

    @Override
    public CompletionStage<AllocatorStats> stats() {
        return actors.stats();
    }
}
