package org.blockyard.runtime.alloc;

import com.typesafe.config.Config;

import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.Geometry;

/**
 * What an allocator is built from: the volume geometry, the policy, and the actor tunables.
 *
 * @param searchSliceWords bitmap words a group actor scans per message during a window search
 * @param stashCapacity    requests a group actor may hold back behind provisional windows
 * @param files            makes the state of each file the allocator meets (in memory: empty)
 * @param preallocMinWindowBlocks once a file's window goal reaches this, the file claims the rest of its
 *                         window with each allocation and serves sequential appends from it; 0 = never
 */
public record AllocatorSettings(Geometry geometry, AllocationPolicy policy, int searchSliceWords, int stashCapacity,
                                int preallocMinWindowBlocks, FileCatalog files) {
    public AllocatorSettings(Geometry geometry, AllocationPolicy policy, int searchSliceWords, int stashCapacity,
                             int preallocMinWindowBlocks) {
        this(geometry, policy, searchSliceWords, stashCapacity, preallocMinWindowBlocks, FileCatalog.MEMORY);
    }

    public AllocatorSettings {
        if (files == null) files = FileCatalog.MEMORY;
        if (preallocMinWindowBlocks < 0) throw new IllegalArgumentException("prealloc-min-window-blocks below 0");
        if (searchSliceWords < 1) throw new IllegalArgumentException("search-slice-words must be at least 1");
        if (stashCapacity < 1) throw new IllegalArgumentException("stash-capacity must be at least 1");
    }

    public static AllocatorSettings of(Geometry geometry, AllocationPolicy policy) {
        return new AllocatorSettings(geometry, policy, 512, 100_000, 8);
    }

    public AllocatorSettings withSliceWords(int words) {
        return new AllocatorSettings(geometry, policy, words, stashCapacity, preallocMinWindowBlocks, files);
    }

    public AllocatorSettings withPreallocMinWindowBlocks(int blocks) {
        return new AllocatorSettings(geometry, policy, searchSliceWords, stashCapacity, blocks, files);
    }

    /** Files come from {@code catalog} (a durable volume's file table) instead of starting empty. */
    public AllocatorSettings withFiles(FileCatalog catalog) {
        return new AllocatorSettings(geometry, policy, searchSliceWords, stashCapacity, preallocMinWindowBlocks, catalog);
    }

    public AllocatorSettings withGeometry(Geometry g) {
        return new AllocatorSettings(g, policy, searchSliceWords, stashCapacity, preallocMinWindowBlocks, files);
    }

    public AllocatorSettings withPolicy(AllocationPolicy p) {
        return new AllocatorSettings(geometry, p, searchSliceWords, stashCapacity, preallocMinWindowBlocks, files);
    }

    /** Settings from {@code blockyard.volume} and {@code blockyard.alloc}, for a volume of {@code totalBlocks}. */
    public static AllocatorSettings fromConfig(Config config, long totalBlocks) {
        Config v = config.getConfig("blockyard.volume");
        Config a = config.getConfig("blockyard.alloc");
        Geometry g = Geometry.of(v.getInt("block-size"), totalBlocks, v.getInt("blocks-per-group"))
                .withJournal(v.getInt("journal-blocks"))
                .withStripe(v.getInt("stride-blocks"), v.getInt("stripe-blocks"));
        return new AllocatorSettings(g, Policies.configured(config, g),
                a.getInt("search-slice-words"), a.getInt("stash-capacity"), a.getInt("prealloc-min-window-blocks"));
    }
}
