package org.blockyard.api.alloc;

import java.util.List;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * An allocation policy: the decisions that differ between allocators, leaving the mechanism (bitmaps,
 * windows, actors, the retry pass) to the runtime. One instance serves the whole volume: group and file
 * actors call it concurrently from their own threads, so it must be thread-safe, and it must never block.
 *
 * <p><b>State.</b> A policy may keep state that steers its next answers, such as a next-fit cursor or a
 * round-robin counter of home groups, in fields safe for concurrent calls (an {@code AtomicLong}; never a
 * lock held across a call). Such state is a hint: nothing the runtime guarantees depends on it, every answer
 * is checked (one that cannot be retires a plugin's policy for the default), and it lives exactly as long as
 * the instance. The runtime asks the factory for a new instance, with fresh state, whenever it starts using
 * the policy: when it is selected, when one of its tunables changes while it runs (the new values reach only
 * the new instance), when its plugin comes back after an update or a fault, and when the allocator starts.
 * At each such switch every actor takes the new instance at its next message boundary, and the reservation
 * windows and preallocations made under the old one are given back; extents already allocated, and a file's
 * home group, stay. What must outlive an instance is the volume's, not the policy's: read it from
 * {@link Volume} and {@link GroupView}.
 *
 * <p>The runtime calls, per request:
 * <ol>
 * <li>{@link #homeGroup} once, when a file is first opened;</li>
 * <li>{@link #goal} to pick the goal block of each allocating {@code getBlocks};</li>
 * <li>{@link #groupAfter} to walk the other groups when the goal group cannot serve, together with
 *     {@link #mayReserveIn} to skip groups too full to hold a window;</li>
 * <li>inside a group, {@link #nextWindowBlocks} to size a new window and {@link #windowSearchStart}
 *     to say where its search begins.</li>
 * </ol>
 */
@ConsumerType
public interface AllocationPolicy {

    /** Stable short id, e.g. {@code reservation}, used in configuration and on the command line. */
    String id();

    /** Size of a file's first window in blocks; 0 turns reservation windows off (ext3 {@code noreservation}). */
    int initialWindowBlocks();

    /**
     * Size of a file's next window. ext3: doubled when more than half of the previous window was used,
     * capped at 1027, and at least the request.
     *
     * @param previousBlocks the file's current window goal size
     * @param usedBlocks     blocks allocated from the window being replaced (0 if there was none)
     * @param windowBlocks   length of the window being replaced (0 if there was none)
     * @param requestBlocks  blocks the current request asks for
     * @param groupDataBlocks data blocks of the group the window goes to (a window never leaves its group)
     */
    int nextWindowBlocks(int previousBlocks, long usedBlocks, long windowBlocks, int requestBlocks,
                         int groupDataBlocks);

    /** The home group of a newly opened file (where its first blocks go when nothing else says). */
    int homeGroup(String file, Volume volume);

    /**
     * ext3 find_goal: the block the next allocation of a file should start at.
     *
     * @param logicalBlock       the logical block being allocated
     * @param lastLogical        the file's last allocated logical block, or -1
     * @param lastPhysical       the physical block it was given, or -1
     * @param precedingPhysical  the physical block of the nearest mapped logical block before
     *                           {@code logicalBlock}, or -1
     * @param homeGroup          the file's home group
     */
    long goal(long logicalBlock, long lastLogical, long lastPhysical, long precedingPhysical, int homeGroup,
              Volume volume);

    /** The {@code attempt}-th group (1-based) to try after {@code goalGroup}; ext3 walks round-robin. */
    default int groupAfter(int goalGroup, int attempt, int groups) {
        return (goalGroup + attempt) % groups;
    }

    /**
     * Whether a group with {@code freeBlocks} free may be asked for a window of {@code windowBlocks}.
     * ext3: the goal group is skipped for reservation when free &lt; window (it is still tried without);
     * other groups are skipped when free &le; window / 2.
     */
    default boolean mayReserveIn(long freeBlocks, int windowBlocks, boolean goalGroup) {
        return goalGroup ? freeBlocks >= windowBlocks : freeBlocks > windowBlocks / 2;
    }

    /**
     * Where the search for a new window of {@code windowBlocks} starts inside a group: the goal when there
     * is one, else a block the policy prefers (ext3: the group's first data block).
     *
     * @param goal    absolute goal block inside the group, or -1 when the request has none here
     * @param group   a read-only view of the group, valid only during the call
     */
    long windowSearchStart(long goal, int windowBlocks, GroupView group);

    /** The policy's own figures for a listing (the shell's {@code stats}); none by default. */
    default java.util.Map<String, Object> stats() {
        return java.util.Map.of();
    }

    /** Read-only facts about the whole volume, for home-group and goal choice. */
    interface Volume {
        Geometry geometry();

        /** Free blocks of {@code group} as last published by its actor (may lag by a message). */
        long freeBlocks(int group);

        /** Files currently open whose home is {@code group}. */
        int openFiles(int group);
    }

    /** Read-only facts about one group, given to {@link #windowSearchStart} by its actor. */
    interface GroupView {
        int group();

        /** First data block of the group (after its system zone), absolute. */
        long firstDataBlock();

        /** End of the group (exclusive), absolute. */
        long end();

        long freeBlocks();

        /** Booked windows of other files in the group, ascending by start. */
        List<Extent> windows();
    }
}
