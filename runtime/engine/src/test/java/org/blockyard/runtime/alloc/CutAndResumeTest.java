package org.blockyard.runtime.alloc;

import static org.blockyard.runtime.alloc.AllocatorChecks.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.blockyard.api.alloc.BlockAllocator;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.FreeExtentPage;
import org.blockyard.api.alloc.Geometry;

/**
 * Two edges every allocator must keep, over the actors and both lock peers: a truncate of an open file gives back
 * the preallocation past the cut at once, not at the close; and a free-extent page resumes exactly where its last
 * extent ended, so a block freed there between two pages is found.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class CutAndResumeTest {
    /** One group of 4,094 data blocks. */
    private static final Geometry ONE_GROUP = Geometry.of(4096, 4096, 4096);

    static List<Arguments> allocators() {
        Function<Geometry, BlockAllocator> actors = g -> ActorBlockAllocator.start(AllocatorSettings.of(g,
                ReservationPolicy.extended()));
        Function<Geometry, BlockAllocator> locked = g -> new GlobalLockAllocator(g, ReservationPolicy.extended());
        Function<Geometry, BlockAllocator> groupLocks = g -> new GroupLockAllocator(g, ReservationPolicy.extended());
        return List.of(Arguments.of("actors", actors), Arguments.of("global-lock", locked),
                Arguments.of("group-locks", groupLocks));
    }

    private static void closing(BlockAllocator a) {
        if (a instanceof AutoCloseable c) {
            try {
                c.close();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("allocators")
    void aTruncateOfAnOpenFileGivesBackThePreallocationPastTheCut(String name, Function<Geometry, BlockAllocator> impl) {
        BlockAllocator a = impl.apply(ONE_GROUP);
        try {
            long data = await(a.freeBlocks());
            await(a.open("/f"));
            // Appends until the window is big enough to preallocate.
            for (long l = 0; l < 130; l++) await(a.getBlocks("/f", l, 1, true));
            long mapped = 0;
            for (Extent e : await(a.fileExtents("/f"))) mapped += e.blocks();
            assertEquals(130, mapped);
            assertTrue(data - mapped > await(a.freeBlocks()), "the file holds a preallocation past its end");

            await(a.truncate("/f", 50));
            assertEquals(data - 50, (long) await(a.freeBlocks()),
                    "the open file holds its 50 mapped blocks and nothing past the cut");
            await(a.close("/f"));
            assertEquals(data - 50, (long) await(a.freeBlocks()));
        } finally {
            closing(a);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("allocators")
    void aFreeExtentPageResumesWhereItsLastExtentEnded(String name, Function<Geometry, BlockAllocator> impl) {
        BlockAllocator a = impl.apply(ONE_GROUP);
        try {
            long total = ONE_GROUP.totalBlocks();
            // Everything in one-block extents, then every third block back: free runs of one block, a used pair
            // between each two.
            List<Extent> all = new ArrayList<>();
            for (long left = await(a.freeBlocks()); left > 0; left--) all.addAll(await(a.allocate(1, 1, 1, -1)));
            List<Extent> back = new ArrayList<>();
            for (int i = 0; i < all.size(); i += 3) back.add(all.get(i));
            await(a.release(back));

            FreeExtentPage first = await(a.freeExtents(0, total, 1));
            assertEquals(1, first.extents().size());
            Extent last = first.extents().get(0);
            assertEquals(last.end(), first.nextCursor(), "the cursor is the end of the page's last extent");

            // The block right after the page's last extent is freed before the next page is asked for.
            Extent after = all.stream().filter(e -> e.start() == last.end()).findFirst().orElseThrow();
            await(a.release(List.of(after)));
            FreeExtentPage second = await(a.freeExtents(first.nextCursor(), total, 1));
            assertEquals(after.start(), second.extents().get(0).start(),
                    "the next page starts at the cursor: " + second.extents());
        } finally {
            closing(a);
        }
    }
}
