package org.blockyard.testkit;

import static org.blockyard.testkit.AllocatorChecks.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import org.junit.jupiter.api.Test;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.AllocationPolicyFactory;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.runtime.alloc.ActorBlockAllocator;
import org.blockyard.runtime.alloc.AllocatorSettings;

/**
 * What every allocation policy must keep, whatever it decides: the randomised conservation check. Many
 * files allocate, extend, truncate, close and re-open concurrently, while extents are allocated and released
 * beside them; after each round, no block is owned twice, free plus allocated equals capacity, group free
 * counts equal their bitmaps, windows neither overlap nor leave their group, and no system-zone block was
 * handed out. A policy's test extends this class and names its factory (and tunables); the built-in
 * policy's tests do the same in this module.
 *
 * <pre>{@code
 * class MyPolicyContractTest extends PolicyContract {
 *     @Override protected AllocationPolicyFactory factory() { return new MyPolicyFactory(); }
 * }
 * }</pre>
 */
public abstract class PolicyContract {

    /** The policy under test. */
    protected abstract AllocationPolicyFactory factory();

    /** Tunables to build it with; none (its defaults) unless overridden. */
    protected Map<String, Long> tunables() {
        return Map.of();
    }

    private AllocationPolicy policy(Geometry g) {
        return factory().create(g, factory().descriptor().resolve(tunables()));
    }

    @Test
    public void concurrentFilesAndExtentsConserveEveryBlock() {
        conserve(policy(Geometry.of(4096, 8 * 2048, 2048).withJournal(16)), 1L, 512);
    }

    @Test
    public void concurrentFilesAndExtentsConserveEveryBlockWithOneWordSearchSlices() {
        conserve(policy(Geometry.of(4096, 8 * 2048, 2048).withJournal(16)), 2L, 1);
    }

    /** Runs the check with {@code seed}, group actors scanning {@code sliceWords} bitmap words per slice. */
    protected void conserve(AllocationPolicy policy, long seed, int sliceWords) {
        // 8 groups of 2048 blocks: small enough to run full, so the "no space" paths are exercised too.
        Geometry g = Geometry.of(4096, 8 * 2048, 2048).withJournal(16);
        AllocatorSettings settings = AllocatorSettings.of(g, policy).withSliceWords(sliceWords);
        Random rnd = new Random(seed);
        try (ActorBlockAllocator a = ActorBlockAllocator.start(settings)) {
            int files = 24;
            List<String> names = new ArrayList<>();
            Map<String, Long> size = new HashMap<>();
            Map<String, Boolean> open = new HashMap<>();
            for (int i = 0; i < files; i++) {
                String f = "/dir" + (i % 3) + "/file" + i;
                names.add(f);
                await(a.open(f));
                open.put(f, true);
                size.put(f, 0L);
            }
            List<Extent> extentOwned = new ArrayList<>();
            for (int round = 0; round < 40; round++) {
                List<CompletionStage<?>> ops = new ArrayList<>();
                for (String f : names) {
                    int op = rnd.nextInt(100);
                    if (!open.get(f)) {
                        if (op < 50) {
                            ops.add(a.open(f));
                            open.put(f, true);
                        }
                        continue;
                    }
                    if (op < 55) { // append a burst of calls, the way a writer would
                        long from = size.get(f);
                        int calls = 1 + rnd.nextInt(8), chunk = 1 + rnd.nextInt(rnd.nextBoolean() ? 4 : 300);
                        CompletionStage<Long> chain = CompletableFuture.completedFuture(from);
                        for (int c = 0; c < calls; c++) {
                            chain = chain.thenCompose(l -> a.getBlocks(f, l, chunk, true)
                                    .thenApply(run -> l + run.blocks()));
                        }
                        ops.add(chain.thenAccept(end -> size.merge(f, end, Math::max)));
                    } else if (op < 65) { // a sparse write somewhere
                        long l = rnd.nextInt(4000);
                        ops.add(a.getBlocks(f, l, 1 + rnd.nextInt(16), true));
                    } else if (op < 72) { // a read of a mapped run or a hole
                        long l = rnd.nextInt(4000);
                        ops.add(a.getBlocks(f, l, 8, false).thenAccept(run -> {
                            if (!run.isHole()) assertTrue(run.physicalStart() >= 0 && !run.fresh());
                        }));
                    } else if (op < 82) {
                        long at = rnd.nextInt((int) Math.max(1, size.get(f) + 1));
                        ops.add(a.truncate(f, at));
                        size.put(f, Math.min(size.get(f), at));
                    } else if (op < 90) {
                        ops.add(a.close(f));
                        open.put(f, false);
                    }
                }
                // Extents beside the files.
                if (rnd.nextBoolean()) {
                    int unit = 1 << rnd.nextInt(4);
                    ops.add(a.allocate(unit * (1 + rnd.nextInt(64)), unit, rnd.nextBoolean() ? 0 : unit * 4, -1)
                            .thenAccept(ext -> {
                                synchronized (extentOwned) {
                                    for (Extent e : ext) {
                                        assertEquals(0, e.start() % unit, "extent " + e + " not on the unit");
                                        assertEquals(0, e.blocks() % unit);
                                    }
                                    extentOwned.addAll(ext);
                                }
                            }));
                } else if (!extentOwned.isEmpty()) {
                    List<Extent> give = new ArrayList<>();
                    for (int k = rnd.nextInt(extentOwned.size()) + 1; k > 0; k--)
                        give.add(extentOwned.remove(rnd.nextInt(extentOwned.size())));
                    ops.add(a.release(give));
                }
                for (CompletionStage<?> op : ops) {
                    try {
                        await(op);
                    } catch (AllocationException.NoSpace e) {
                        // the volume ran full this round: allowed, and the invariants must still hold
                    }
                }
                List<Extent> owned = new ArrayList<>(extentOwned);
                for (String f : names) owned.addAll(await(a.heldExtents(f)));
                AllocatorChecks.checkInvariants(a, owned);
            }
            // Tidy up: every file truncated and every extent released gives all blocks back.
            for (String f : names) {
                if (!open.get(f)) await(a.open(f));
                await(a.truncate(f, 0));
                await(a.close(f));
            }
            await(a.release(extentOwned));
            assertEquals(g.dataBlocks(), (long) await(a.freeBlocks()), "every block is free again");
            assertEquals(0, await(a.stats()).windows(), "no window outlives its file's close");
        }
    }
}
