package org.blockyard.runtime.alloc;

import static org.blockyard.runtime.alloc.AllocatorChecks.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import akka.actor.testkit.typed.javadsl.BehaviorTestKit;
import akka.actor.testkit.typed.javadsl.TestInbox;
import org.junit.jupiter.api.Test;

import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.api.alloc.MapRequest;

/**
 * A file written whole asks its group for the rest of its blocks with a {@code closing} claim: when the claim
 * holds everything it wanted, the group drops the file's window at once, as the close would, so the close
 * sends the group nothing; a claim that came short keeps the window for the requests still to come.
 */
class ClosingClaimTest {
    private static final Geometry G = Geometry.of(4096, 32768, 32768);

    private record Setup(BlockGroup state, BehaviorTestKit<GroupActor.Command> group,
                         TestInbox<GroupFileProtocol.Allocated> answers) {}

    private static Setup group() {
        BlockGroup state = new BlockGroup(G, 0, ReservationPolicy.of(ReservationPolicy.Mode.EXT3, 8, 8));
        VolumeState volume = new VolumeState(G);
        return new Setup(state, BehaviorTestKit.create(GroupActor.create(state, volume, 64, 100)), TestInbox.create());
    }

    /** One block and {@code prefetch} more for file 1, in a window of {@code windowBlocks}. */
    private static BlockGroup.Outcome claim(Setup s, int prefetch, int windowBlocks, boolean closing) {
        long goal = s.state().firstDataBlock() + 100;
        s.group().run(new GroupFileProtocol.Allocate(BlockGroup.Request.of(1, goal, 1, prefetch, windowBlocks, true,
                false), s.answers().getRef(), null, closing));
        return s.answers().receiveMessage().outcome();
    }

    @Test
    void aClosingClaimThatGetsAllItWantedDropsTheWindow() {
        Setup s = group();
        long free = s.state().freeBlocks();
        BlockGroup.Outcome o = claim(s, 3, 8, true);
        assertEquals(4, o.blocks(), "the block asked for and the three the batch still needs");
        assertEquals(BlockGroup.Outcome.DROPPED_WINDOW, o.windowBlocks(), "the answer says the window is gone: " + o);
        assertEquals(List.of(), s.state().windows(), "no window is left booked for the file");
        assertEquals(free - 4, s.state().freeBlocks());
    }

    @Test
    void aClosingClaimThatCameShortKeepsTheWindowForTheRequestsStillToCome() {
        Setup s = group();
        BlockGroup.Outcome o = claim(s, 7, 4, true); // a window of 4 holds fewer than the 8 wanted
        assertEquals(4, o.blocks());
        assertTrue(o.windowBlocks() > 0, "the window stays mirrored: " + o);
        assertEquals(1, s.state().windows().size());
    }

    /**
     * End to end, against twins that open, send the same calls as one batch and close: a small file written whole
     * costs three messages fewer (no open, no close, and nothing for the group at the close), and the same
     * blocks. A file that another writer holds open keeps its window for that writer's close.
     */
    @Test
    void aSmallFileWrittenWholeSendsTheGroupNothingAtItsClose() {
        Geometry g = Geometry.of(4096, 4 * 32768, 32768);
        try (ActorBlockAllocator whole = ActorBlockAllocator.start(AllocatorSettings.of(g, ReservationPolicy.extended()));
             ActorBlockAllocator twin = ActorBlockAllocator.start(AllocatorSettings.of(g, ReservationPolicy.extended()))) {
            List<MapRequest> calls = List.of(MapRequest.allocate(0, 1), MapRequest.allocate(1, 1), MapRequest.allocate(2, 1));
            for (int i = 0; i < 8; i++) {
                String f = "/f" + i;
                long before = whole.volume().messages();
                List<BlockRun> runs = await(whole.writeFile(f, calls));
                long wholeMessages = whole.volume().messages() - before;
                before = twin.volume().messages();
                await(twin.open(f));
                assertEquals(runs, await(twin.getBlocks(f, calls)), f);
                await(twin.close(f));
                long twinMessages = twin.volume().messages() - before;
                assertEquals(twinMessages - 3, wholeMessages, f + ": messages served");
            }
            assertEquals(await(twin.freeBlocks()), await(whole.freeBlocks()));

            await(whole.open("/held"));
            await(twin.open("/held"));
            long before = whole.volume().messages();
            await(whole.writeFile("/held", calls));
            long wholeMessages = whole.volume().messages() - before;
            before = twin.volume().messages();
            await(twin.getBlocks("/held", calls));
            assertEquals(twin.volume().messages() - before, wholeMessages, "held open: the batch's messages only");
            await(whole.close("/held"));
            await(twin.close("/held"));
            assertEquals(g.dataBlocks() - 27, (long) await(whole.freeBlocks()), "every window and preallocation back");
            assertEquals(await(twin.freeBlocks()), await(whole.freeBlocks()));
        }
    }

    @Test
    void anOrdinaryClaimKeepsTheWindowUntilTheClose() {
        Setup s = group();
        BlockGroup.Outcome o = claim(s, 3, 8, false);
        assertEquals(4, o.blocks());
        assertEquals(8, o.windowBlocks());
        List<Extent> windows = s.state().windows();
        assertEquals(1, windows.size());
        assertEquals(o.start(), windows.get(0).start());
    }
}
