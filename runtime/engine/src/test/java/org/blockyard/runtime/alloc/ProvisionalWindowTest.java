package org.blockyard.runtime.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.BehaviorTestKit;
import akka.actor.testkit.typed.javadsl.TestInbox;
import org.junit.jupiter.api.Test;

import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;

/**
 * Seed 000's provisional windows, on one group actor: a window search that runs in many slices does not
 * hold up an allocation elsewhere in the group, and a request aimed at the space after the provisional
 * window waits until the search is over, then succeeds without overlap.
 */
class ProvisionalWindowTest {
    private static final int STRIDE = 16;
    private static final int HOLDERS = 2000;

    /**
     * A 1,048,576-block group whose middle is full except one free block inside each of 2000 other
     * files' 2-block windows: a new window searched from the start of that stretch slides past every
     * one of them, one slice per slide.
     */
    private static BlockGroup fragmentedGroup(VolumeState volume) {
        Geometry g = Geometry.of(4096, 1 << 20, 1 << 20);
        BlockGroup group = new BlockGroup(g, 0, ReservationPolicy.of(ReservationPolicy.Mode.EXT3, 2, 2));
        long base = group.firstDataBlock() + 1000;
        for (int i = 0; i < HOLDERS; i++) {
            long at = base + (long) STRIDE * i;
            BlockGroup.Outcome o = group.allocate(BlockGroup.Request.of(10_000 + i, at, 1, 0, 2, true, false));
            assertEquals(at, o.start(), "holder " + i + " got its block");
            group.markUsed(at + 2, STRIDE - 2);
        }
        volume.publishFree(0, group.freeBlocks());
        return group;
    }

    /**
     * Run synchronously (BehaviorTestKit), so the interleaving is exact: X's search continues by messages
     * to itself, and Y and Z arrive between its slices.
     */
    @Test
    void aLongSearchLetsOthersThroughAndHoldsBackRequestsAimedAfterIt() {
        VolumeState volume = new VolumeState(Geometry.of(4096, 1 << 20, 1 << 20));
        BlockGroup state = fragmentedGroup(volume);
        long base = state.firstDataBlock() + 1000;
        long stretchEnd = base + (long) STRIDE * HOLDERS;
        BehaviorTestKit<GroupActor.Command> group = BehaviorTestKit.create(GroupActor.create(state, volume, 1, 1000));
        TestInbox<GroupFileProtocol.Allocated> xs = TestInbox.create(), ys = TestInbox.create(), zs = TestInbox.create();

        // X: a window of 8 searched from the start of the fragmented stretch: its first slice only.
        group.run(new GroupFileProtocol.Allocate(BlockGroup.Request.of(1, base, 1, 0, 8, true, false), xs.getRef()));
        assertFalse(xs.hasMessages(), "X's search goes on in slices");
        assertTrue(group.selfInbox().hasMessages(), "X continues by a message to itself");

        // Y: aimed at the free space before the stretch, elsewhere in the group: served at once.
        group.run(new GroupFileProtocol.Allocate(BlockGroup.Request.of(2, state.firstDataBlock(), 1, 0, 8, true, false),
                ys.getRef()));
        BlockGroup.Outcome y = ys.receiveMessage().outcome();
        assertTrue(y.allocated() && y.start() < base, "Y was served while X searched: " + y);

        // Z: aimed right after the stretch, where X's window will end up: it waits.
        group.run(new GroupFileProtocol.Allocate(BlockGroup.Request.of(3, stretchEnd + 2, 1, 0, 8, true, false),
                zs.getRef()));
        assertFalse(zs.hasMessages(), "Z waits behind X's provisional window");

        int slices = 1;
        while (!xs.hasMessages()) {
            group.run(group.selfInbox().receiveMessage());
            slices++;
        }
        BlockGroup.Outcome x = xs.receiveMessage().outcome();
        assertTrue(x.allocated() && x.start() >= stretchEnd, "X's window slid past the stretch: " + x);
        BlockGroup.Outcome z = zs.receiveMessage().outcome();
        assertTrue(z.allocated() && z.start() >= stretchEnd, "Z was served once X was done: " + z);
        assertTrue(slices > HOLDERS, "slices: " + slices);
        assertEquals(1, volume.stashed(), "Z waited in the stash");

        Extent wx = state.windowOf(1), wz = state.windowOf(3);
        assertTrue(wx != null && wz != null, "both kept their windows");
        assertFalse(wx.overlaps(wz), "X's window " + wx + " and Z's window " + wz + " overlap");
        assertTrue(wx.contains(x.start()) && wz.contains(z.start()));
    }

    @Test
    void slicedAndWholeSearchesBookTheSameWindow() {
        VolumeState v1 = new VolumeState(Geometry.of(4096, 1 << 20, 1 << 20));
        VolumeState v2 = new VolumeState(Geometry.of(4096, 1 << 20, 1 << 20));
        BlockGroup whole = fragmentedGroup(v1), sliced = fragmentedGroup(v2);
        long base = whole.firstDataBlock() + 1000;
        BlockGroup.Request r = BlockGroup.Request.of(1, base, 1, 0, 8, true, false);
        BlockGroup.Outcome expected = whole.allocate(r);
        BlockGroup.WindowSearch s = sliced.begin(r).search();
        int slices = 1;
        while (!s.run(1, false)) slices++;
        assertEquals(expected, sliced.finish(s));
        assertTrue(slices > HOLDERS, "slices: " + slices);
        assertEquals(whole.windowOf(1), sliced.windowOf(1));
    }

    /**
     * A slice bounds its time, not only its bitmap words: the stretch is only about 500 words long, so a
     * word budget alone would let the default slice (512 words) run all 2000 slides in one message. Each
     * slide is charged as {@link BlockGroup.WindowSearch#SLIDE_WORDS} words.
     */
    @Test
    void aSliceStopsAfterABoundedNumberOfSlides() {
        BlockGroup group = fragmentedGroup(new VolumeState(Geometry.of(4096, 1 << 20, 1 << 20)));
        long base = group.firstDataBlock() + 1000;
        BlockGroup.WindowSearch s = group.begin(BlockGroup.Request.of(1, base, 1, 0, 8, true, false)).search();
        int words = 512, slices = 1;
        while (!s.run(words, false)) slices++;
        int maxSlidesPerSlice = words / BlockGroup.WindowSearch.SLIDE_WORDS + 1;
        assertTrue(slices >= HOLDERS / maxSlidesPerSlice,
                "2000 slides in " + slices + " slices: more than " + maxSlidesPerSlice + " slides in one");
        assertTrue(group.finish(s).allocated());
    }
}
