package org.blockyard.api.alloc;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

import org.osgi.annotation.versioning.ProviderType;

/**
 * The allocator service. Every call is asynchronous; a refused call completes exceptionally with an
 * {@link AllocationException} and changes nothing.
 *
 * <p>Two ways in:
 * <ul>
 * <li><b>Files</b>, as a file system uses ext3: {@link #open}, {@link #getBlocks} (map or allocate a
 * contiguous run), {@link #truncate}, {@link #close}, {@link #delete}. Each file keeps a goal and a reservation window;
 * calls on one file are served in order, calls on different files run concurrently.</li>
 * <li><b>Extents</b>, as a storage engine uses Ceph BlueStore's allocator: {@link #allocate},
 * {@link #release}, {@link #freeExtents}, {@link #freeBlocks}, {@link #fragmentationScore}.</li>
 * </ul>
 * Block numbers are absolute on the volume; extents are {@code [start, start + blocks)}.
 *
 * <p><b>Write before you read.</b> The allocator hands out blocks as they are on the device: a block
 * freed by one owner and allocated to the next still holds the first owner's bytes. Extents from
 * {@link #allocate} are the caller's to write before anything reads them. A run that {@link #getBlocks}
 * allocates is mapped <em>unwritten</em> (ext4's unwritten extents): lookups answer it with
 * {@link BlockRun#unwritten()} set, and whoever reads the file must read such a run as zeros. The caller
 * that allocated it writes its data, then converts the run with {@link #markWritten}; if the write fails it
 * gives the run back with {@link #discardUnwritten}. A file's logical blocks lie in
 * {@code [0, 2^48)}; a call beyond that is refused.
 */
@ProviderType
public interface BlockAllocator {

    Geometry geometry();

    /** The id of the allocation policy in force (e.g. {@code reservation}). */
    String policy();

    /** Opens {@code file} for writing; opening an open file adds a writer. */
    CompletionStage<Void> open(String file);

    /**
     * Maps logical blocks of {@code file} starting at {@code logicalBlock}: answers the already mapped
     * contiguous run there, or with {@code create} allocates up to {@code maxBlocks} new contiguous blocks
     * in one message (ext3_new_blocks). With {@code create == false} a hole answers a run of 0 blocks.
     */
    CompletionStage<BlockRun> getBlocks(String file, long logicalBlock, int maxBlocks, boolean create);

    /**
     * Several {@code getBlocks} calls on one file in one hand-over: served in order, exactly as the same
     * calls made one after the other, and answered together, one run per request in request order. A
     * caller on its own thread pays one hand-over to the allocator and one wake-up per batch instead of one
     * per call. If a request is refused, the batch fails with its error and the requests after it are not
     * served; the runs of the requests before it stay mapped (look them up with {@code create == false}).
     * At most {@link #MAX_BATCH} requests.
     */
    default CompletionStage<List<BlockRun>> getBlocks(String file, List<MapRequest> requests) {
        if (requests == null || requests.size() > MAX_BATCH) return CompletableFuture.failedFuture(badBatch(requests));
        CompletableFuture<List<BlockRun>> out = new CompletableFuture<>();
        List<BlockRun> runs = new ArrayList<>(requests.size());
        new Object() {
            void next() {
                while (runs.size() < requests.size()) {
                    MapRequest r = requests.get(runs.size());
                    CompletableFuture<BlockRun> f =
                            getBlocks(file, r.logicalBlock(), r.maxBlocks(), r.create()).toCompletableFuture();
                    if (!f.isDone()) {
                        f.whenComplete((run, e) -> {
                            if (e != null) out.completeExceptionally(e);
                            else {
                                runs.add(run);
                                next();
                            }
                        });
                        return;
                    }
                    try {
                        runs.add(f.join());
                    } catch (CompletionException e) {
                        out.completeExceptionally(e.getCause());
                        return;
                    }
                }
                out.complete(List.copyOf(runs));
            }
        }.next();
        return out;
    }

    /**
     * A file written whole in one hand-over, as {@code tar} writes one: {@link #open} (adding a writer, creating
     * the file on its first open), the batch as {@link #getBlocks(String, List)} serves it, then {@link #close},
     * which runs whatever the batch's outcome. Answers the batch's runs once the close is done, or the first
     * error (the open's, the batch's, then the close's); a refused batch leaves the runs before the refused
     * request mapped, as the batch does. The same calls one after the other give the same layout: an
     * implementation only saves the hand-overs between them.
     */
    default CompletionStage<List<BlockRun>> writeFile(String file, List<MapRequest> requests) {
        if (requests == null || requests.size() > MAX_BATCH) return CompletableFuture.failedFuture(badBatch(requests));
        return open(file).thenCompose(opened -> getBlocks(file, requests).handle((runs, error) -> {
            CompletableFuture<List<BlockRun>> out = new CompletableFuture<>();
            close(file).whenComplete((closed, closeError) -> {
                Throwable e = error != null ? error : closeError;
                if (e instanceof CompletionException && e.getCause() != null) e = e.getCause();
                if (e != null) out.completeExceptionally(e);
                else out.complete(runs);
            });
            return out;
        }).thenCompose(f -> f));
    }

    /** The refusal of a batch that is null or holds more than {@link #MAX_BATCH} requests. */
    private static AllocationException badBatch(List<MapRequest> requests) {
        return new AllocationException.InvalidRequest("a batch holds 0 to " + MAX_BATCH + " requests, not "
                + (requests == null ? "null" : requests.size()));
    }

    /** The most requests one {@link #getBlocks(String, List)} batch may hold. */
    int MAX_BATCH = 65_536;

    /**
     * Frees every block of {@code file} at logical {@code fromLogicalBlock} and beyond; answers how many.
     * Every block is checked with its group first: a refused truncate leaves the file as it was.
     */
    CompletionStage<Long> truncate(String file, long fromLogicalBlock);

    /**
     * Converts the unwritten runs of {@code file} inside {@code [logicalBlock, logicalBlock + blocks)} to
     * written (ext4_convert_unwritten_extents), once their data is on the device; answers how many blocks
     * changed state. Holes and written runs in the range are left alone.
     */
    CompletionStage<Long> markWritten(String file, long logicalBlock, long blocks);

    /**
     * Unmaps and frees the blocks of {@code file} inside {@code [logicalBlock, logicalBlock + blocks)} that
     * are still unwritten (a write that failed gives back what it allocated); written blocks stay mapped.
     * Answers how many blocks were freed.
     */
    CompletionStage<Long> discardUnwritten(String file, long logicalBlock, long blocks);

    /**
     * Unmaps and frees every block of {@code file} inside {@code [logicalBlock, logicalBlock + blocks)}, written
     * or unwritten (fallocate's PUNCH_HOLE); the range is a hole from then on, and reads as zeros. Answers how
     * many blocks were freed. Refused as {@link #discardUnwritten} is; every block is checked with its group
     * first, so a refused punch leaves the file as it was.
     */
    CompletionStage<Long> punchHole(String file, long logicalBlock, long blocks);

    /** Drops one writer; the last writer's close discards the file's reservation window. */
    CompletionStage<Void> close(String file);

    /**
     * Deletes a closed file (unlink): frees every block it maps and forgets it, so its name opens a new, empty
     * file. A file with a writer is refused with {@link AllocationException.InvalidRequest}, a name that is no
     * file with {@link AllocationException.UnknownFile}; either changes nothing.
     */
    CompletionStage<Void> delete(String file);

    /** The file's mapped extents in logical order, as {@code filefrag} would list them. */
    CompletionStage<List<Extent>> fileExtents(String file);

    /**
     * Allocates {@code wantBlocks} (a multiple of {@code unitBlocks}) as extents that start on a unit
     * boundary, are a multiple of the unit long, and are at most {@code maxExtentBlocks} long (0 = no
     * limit). {@code hint} is the preferred start block, or -1 for none. A partial result is a success;
     * nothing free is {@link AllocationException.NoSpace}.
     */
    CompletionStage<List<Extent>> allocate(long wantBlocks, int unitBlocks, long maxExtentBlocks, long hint);

    /** Frees the extents; all of them are checked first, so a bad one frees none. */
    CompletionStage<Void> release(List<Extent> extents);

    /** Free extents inside {@code [fromBlock, toBlock)}, ascending, at most {@code maxCount}; resumable. */
    CompletionStage<FreeExtentPage> freeExtents(long fromBlock, long toBlock, int maxCount);

    CompletionStage<Long> freeBlocks();

    /**
     * The Ceph v3 free-space fragmentation score: 0 when all free space is one extent, 1 when every free
     * extent is a single block.
     */
    CompletionStage<Double> fragmentationScore();

    CompletionStage<AllocatorStats> stats();

    /**
     * A session for the calling thread's extent calls ({@link AllocationSession}): where the allocator lends
     * sessions free space, the calls a loan can serve complete on the caller's thread without a hand-over.
     * Callers that allocate and release from their own threads, many times a second, should make those calls
     * through a session; the calls on this interface stay as they are for everyone else. An allocator without
     * loans answers a session that forwards every call here.
     */
    default AllocationSession openSession() {
        return AllocationSession.forwarding(this);
    }
}
