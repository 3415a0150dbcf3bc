package org.blockyard.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.runtime.alloc.ActorBlockAllocator;
import org.blockyard.runtime.alloc.GroupActor;

/**
 * Waiting on stages, and the allocator's invariants as one check: what the suites use, for a plugin's own
 * tests too. Every wait has a deadline of {@value #DEADLINE_SECONDS} s.
 */
public final class AllocatorChecks {
    /** How long a stage may take before the check fails: the engine answers in microseconds when well. */
    public static final int DEADLINE_SECONDS = 60;

    private AllocatorChecks() {}

    /** The stage's value; its failure rethrown (an {@link AllocationException} as itself). */
    public static <T> T await(CompletionStage<T> stage) {
        try {
            return stage.toCompletableFuture().get(DEADLINE_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) throw r;
            throw new IllegalStateException(e.getCause());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** The error a refused call completed with. */
    public static <E extends AllocationException> E refused(Class<E> type, CompletionStage<?> stage) {
        try {
            stage.toCompletableFuture().get(DEADLINE_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException | CompletionException e) {
            return assertInstanceOf(type, e.getCause(), "refused with the wrong error");
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        return fail("expected " + type.getSimpleName() + ", but the call succeeded");
    }

    /**
     * Checks, on consistent snapshots of every group: no block owned twice; every owned block is used
     * and no system-zone block is owned; free plus owned equals the data blocks; each group's free count
     * equals its bitmap; windows never overlap and never leave their group.
     */
    public static void checkInvariants(ActorBlockAllocator allocator, Collection<Extent> owned) {
        Geometry g = allocator.geometry();
        List<GroupActor.Snapshot> snaps = await(allocator.inspectAll());
        List<Extent> sorted = new ArrayList<>(owned);
        sorted.sort(null);
        long ownedBlocks = 0;
        for (int i = 0; i < sorted.size(); i++) {
            Extent e = sorted.get(i);
            if (i > 0) assertTrue(sorted.get(i - 1).end() <= e.start(),
                    "blocks owned twice: " + sorted.get(i - 1) + " and " + e);
            ownedBlocks += e.blocks();
            for (long b = e.start(); b < e.end(); b++) {
                assertFalse(g.isSystemZone(b), "system-zone block " + b + " was handed out in " + e);
                GroupActor.Snapshot s = snaps.get(g.groupOf(b));
                assertTrue(s.bitmap().isUsed((int) (b - s.start())), "owned block " + b + " is free in the bitmap");
            }
        }
        long free = 0;
        for (GroupActor.Snapshot s : snaps) {
            long counted = 0;
            int dataFrom = (int) (s.firstDataBlock() - s.start()), dataTo = (int) (s.end() - s.start());
            for (int b = dataFrom; b < dataTo; b++) if (!s.bitmap().isUsed(b)) counted++;
            assertEquals(counted, s.freeBlocks(), "group " + s.group() + " free count differs from its bitmap");
            for (int b = 0; b < dataFrom; b++)
                assertTrue(s.bitmap().isUsed(b), "system-zone block " + (s.start() + b) + " is marked free");
            free += s.freeBlocks();
            Extent prev = null;
            for (GroupActor.WindowInfo w : s.windows()) {
                Extent e = w.extent();
                assertTrue(e.start() >= s.firstDataBlock() && e.end() <= s.end(),
                        "window " + e + " leaves group " + s.group());
                if (prev != null) assertTrue(prev.end() <= e.start(), "windows overlap: " + prev + " and " + e);
                prev = e;
            }
        }
        assertEquals(g.dataBlocks(), free + ownedBlocks, "free + allocated != capacity");
    }
}
