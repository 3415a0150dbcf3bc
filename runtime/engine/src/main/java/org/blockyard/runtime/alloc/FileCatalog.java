package org.blockyard.runtime.alloc;

/**
 * Makes the {@link FileState} of a file the allocator has not seen yet in this run. In memory every file
 * starts empty; a durable volume answers the file's stored extent map and id, and a listener that journals
 * its changes. Called by the file's shard.
 */
@FunctionalInterface
public interface FileCatalog {
    FileCatalog MEMORY = FileState::new;

    /**
     * @param id a fresh id the allocator would give the file (a catalog with stored files may give its own;
     *           ids must stay unique)
     */
    FileState create(long id, String name, int homeGroup, int initialWindowBlocks);

    /** Whether a file {@code name} exists that the allocator has not seen in this run (a stored one). */
    default boolean stored(String name) {
        return false;
    }

    /** {@code file}, closed and holding no blocks, is deleted: its name is free for a new file. */
    default void deleted(FileState file) {}
}
