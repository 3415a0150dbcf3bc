package org.blockyard.runtime.volume;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;

import org.blockyard.api.alloc.AllocationException;
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
 */
public final class VolumeAllocator implements BlockAllocator {
    private final ActorBlockAllocator actors;
    private final Journal journal;
    private final Volume.Catalog catalog;
    /** Extents each owner holds, physical; guarded by itself. */
    private final Map<String, ExtentMap> owned = new HashMap<>();

    VolumeAllocator(ActorBlockAllocator actors, Journal journal, Volume.Catalog catalog) {
        this.actors = actors;
        this.journal = journal;
        this.catalog = catalog;
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
        AllocationException bad = nameTooLong(file);
        return bad != null ? CompletableFuture.failedFuture(bad) : durable(file, actors.open(file));
    }

    /** The refusal of a name the file table cannot hold, else null. */
    private static AllocationException nameTooLong(String file) {
        int bytes = file == null ? 0 : file.getBytes(StandardCharsets.UTF_8).length;
        return bytes <= Layout.MAX_NAME_BYTES ? null : new AllocationException.InvalidRequest("file name of " + bytes
                + " bytes; the file table holds at most " + Layout.MAX_NAME_BYTES);
    }

    @Override
    public CompletionStage<BlockRun> getBlocks(String file, long logicalBlock, int maxBlocks, boolean create) {
        CompletionStage<BlockRun> s = actors.getBlocks(file, logicalBlock, maxBlocks, create);
        return create ? durable(file, s) : s;
    }

    /** The whole batch in one message to the actors, then one wait for the journal: one commit serves it. */
    @Override
    public CompletionStage<List<BlockRun>> getBlocks(String file, List<MapRequest> requests) {
        return durable(file, actors.getBlocks(file, requests));
    }

    /** A file written whole in one message to the actors, then one wait for the journal. */
    @Override
    public CompletionStage<List<BlockRun>> writeFile(String file, List<MapRequest> requests) {
        AllocationException bad = nameTooLong(file);
        return bad != null ? CompletableFuture.failedFuture(bad) : durable(file, actors.writeFile(file, requests));
    }

    @Override
    public CompletionStage<Long> truncate(String file, long fromLogicalBlock) {
        return durable(file, actors.truncate(file, fromLogicalBlock));
    }

    @Override
    public CompletionStage<Long> markWritten(String file, long logicalBlock, long blocks) {
        return durable(file, actors.markWritten(file, logicalBlock, blocks));
    }

    @Override
    public CompletionStage<Long> discardUnwritten(String file, long logicalBlock, long blocks) {
        return durable(file, actors.discardUnwritten(file, logicalBlock, blocks));
    }

    @Override
    public CompletionStage<Void> close(String file) {
        return durable(file, actors.close(file));
    }

    /**
     * Deletes a closed file, stored or opened in this run; complete once the deletion (its blocks freed, its
     * table entry gone) is durable.
     */
    @Override
    public CompletionStage<Void> delete(String file) {
        return actors.delete(file).thenCompose(v -> acknowledged(journal.sync(), v));
    }

    /** A file's extents; for a stored file not opened in this run, from the file table. */
    @Override
    public CompletionStage<List<Extent>> fileExtents(String file) {
        Long id = catalog.existing(Metadata.KIND_FILE, file);
        ExtentMap m = id == null ? null : catalog.mirror(id);
        if (m == null) return actors.fileExtents(file); // not stored, or deleted meanwhile
        List<Extent> out = new ArrayList<>();
        synchronized (m) {
            for (ExtentMap.Run r : m.runs()) out.add(new Extent(r.physical(), r.blocks()));
        }
        return CompletableFuture.completedFuture(out);
    }

    /** The names of the files on the volume, sorted. */
    public List<String> files() {
        return catalog.names(Metadata.KIND_FILE);
    }

    @Override
    public CompletionStage<List<Extent>> allocate(long wantBlocks, int unitBlocks, long maxExtentBlocks, long hint) {
        return allocate(Volume.DEFAULT_OWNER, wantBlocks, unitBlocks, maxExtentBlocks, hint);
    }

    /** As {@link #allocate(long, int, long, long)}, the extents belonging to {@code owner}. */
    public CompletionStage<List<Extent>> allocate(String owner, long wantBlocks, int unitBlocks, long maxExtentBlocks,
                                                  long hint) {
        if (owner == null || owner.isBlank() || owner.getBytes(StandardCharsets.UTF_8).length > Layout.MAX_NAME_BYTES)
            return CompletableFuture.failedFuture(new AllocationException.InvalidRequest("an owner needs a name of 1 to "
                    + Layout.MAX_NAME_BYTES + " bytes"));
        try {
            catalog.checkAdmits(Metadata.KIND_OWNER, owner);
        } catch (AllocationException.NoSpace full) {
            return CompletableFuture.failedFuture(full);
        }
        return actors.allocate(wantBlocks, unitBlocks, maxExtentBlocks, hint).thenCompose(extents -> {
            long id;
            try {
                id = catalog.idOf(Metadata.KIND_OWNER, owner);
            } catch (AllocationException.NoSpace full) { // another owner took the last slot meanwhile
                return actors.release(extents).thenCompose(v -> CompletableFuture.<List<Extent>>failedFuture(full));
            }
            synchronized (owned) {
                ExtentMap m = owned.computeIfAbsent(owner, k -> catalog.mirror(id));
                for (Extent e : extents) m.put(e.start(), e.start(), e.blocks(), false);
                catalog.counted(m);
            }
            return acknowledged(journal.append(new JournalRecord.Owner(id, List.copyOf(extents), true)), extents);
        });
    }

    @Override
    public CompletionStage<Void> release(List<Extent> extents) {
        return release(Volume.DEFAULT_OWNER, extents);
    }

    /**
     * Frees extents {@code owner} holds, all or none: an extent (or part of one) it does not hold is refused
     * with InvalidRequest naming it, and nothing changes.
     */
    public CompletionStage<Void> release(String owner, List<Extent> extents) {
        Long id = catalog.existing(Metadata.KIND_OWNER, owner == null ? "" : owner);
        synchronized (owned) {
            ExtentMap m = owned.get(owner);
            for (Extent e : extents) {
                if (m == null || !m.holdsIdentity(e.start(), e.blocks()))
                    return CompletableFuture.failedFuture(new AllocationException.InvalidRequest("extent " + e
                            + " is not held by owner '" + owner + "': refused, nothing freed"));
            }
            for (Extent e : extents) m.remove(e.start(), e.blocks(), false);
            catalog.counted(m);
        }
        return actors.release(extents).handle((v, err) -> {
            if (err != null) {
                synchronized (owned) {
                    ExtentMap m = owned.get(owner);
                    for (Extent e : extents) m.put(e.start(), e.start(), e.blocks(), false);
                    catalog.counted(m);
                }
                throw err instanceof RuntimeException r ? r : new java.util.concurrent.CompletionException(err);
            }
            return journal.append(new JournalRecord.Owner(id, List.copyOf(extents), false));
        }).thenCompose(record -> acknowledged(record, null));
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
