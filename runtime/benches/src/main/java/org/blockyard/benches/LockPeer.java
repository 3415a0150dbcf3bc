package org.blockyard.benches;

import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.BlockAllocator;
import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.runtime.alloc.BlockGroup;
import org.blockyard.runtime.alloc.CallerThreadAllocator;
import org.blockyard.runtime.alloc.FileState;
import org.blockyard.runtime.alloc.GlobalLockAllocator;
import org.blockyard.runtime.alloc.GroupLockAllocator;

/**
 * The peers that callers call on their own threads, {@value Tiobench#GLOBAL_LOCK} (one lock) and
 * {@value Tiobench#GROUP_LOCKS} (a lock per group and per file), through the handle calls the benchmarks
 * time (no name lookup per call), with the set-up both take: groups prepared before any call, then
 * republished. In memory only: neither has a durable form.
 *
 * @param <H> the peer's file handle
 */
abstract class LockPeer<H> {
    /** The peer ids, in the order the benchmarks list them. */
    static final List<String> IDS = List.of(Tiobench.GLOBAL_LOCK, Tiobench.GROUP_LOCKS);

    /** Whether {@code id} names one of these peers (not a policy of the actors). */
    static boolean is(String id) {
        return IDS.contains(id);
    }

    /** The peer {@code id} over {@code geometry} with {@code policy}, each group passed to {@code prepare} first. */
    static LockPeer<?> open(String id, Geometry geometry, AllocationPolicy policy, int preallocMinWindowBlocks,
                            Consumer<BlockGroup> prepare) {
        LockPeer<?> p = switch (id) {
            case Tiobench.GLOBAL_LOCK -> new Global(new GlobalLockAllocator(geometry, policy, preallocMinWindowBlocks));
            case Tiobench.GROUP_LOCKS -> new Groups(new GroupLockAllocator(geometry, policy, preallocMinWindowBlocks));
            default -> throw new IllegalArgumentException("not a lock peer: " + id + " (" + String.join(", ", IDS) + ")");
        };
        for (int g = 0; g < geometry.groups(); g++) {
            prepare.accept(p.group(g));
            p.republish(g);
        }
        return p;
    }

    /** The peer's allocator: the calls both peers share. */
    final CallerThreadAllocator allocator;

    LockPeer(CallerThreadAllocator allocator) {
        this.allocator = allocator;
    }

    abstract H openFile(String name);

    abstract BlockRun getBlocks(H file, long logical, int max);

    abstract void close(H file);

    /** Every file's extents. */
    final Map<String, List<Extent>> fileExtents() {
        return allocator.fileExtents();
    }

    final BlockGroup group(int g) {
        return allocator.group(g);
    }

    final void republish(int g) {
        allocator.republish(g);
    }

    /** The same allocator through the interface. */
    final BlockAllocator api() {
        return allocator;
    }

    private static final class Global extends LockPeer<FileState> {
        private final GlobalLockAllocator a;

        Global(GlobalLockAllocator a) {
            super(a);
            this.a = a;
        }

        FileState openFile(String name) {
            return a.openFile(name);
        }

        BlockRun getBlocks(FileState f, long logical, int max) {
            return a.getBlocks(f, logical, max);
        }

        void close(FileState f) {
            a.close(f);
        }
    }

    private static final class Groups extends LockPeer<GroupLockAllocator.File> {
        private final GroupLockAllocator a;

        Groups(GroupLockAllocator a) {
            super(a);
            this.a = a;
        }

        GroupLockAllocator.File openFile(String name) {
            return a.openFile(name);
        }

        BlockRun getBlocks(GroupLockAllocator.File f, long logical, int max) {
            return a.getBlocks(f, logical, max);
        }

        void close(GroupLockAllocator.File f) {
            a.close(f);
        }
    }
}
