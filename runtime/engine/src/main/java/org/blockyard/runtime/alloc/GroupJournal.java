package org.blockyard.runtime.alloc;

/**
 * Where a {@link BlockGroup} reports each change of its bitmap, from the one place that makes it (the same
 * place that tells the free-run index). A durable volume appends a journal record here; the default does
 * nothing. Called on the group's owner (its actor), inside the message that changed the bitmap, before the
 * answer goes out: an implementation must only append (no I/O, no lock held across anything long).
 */
@FunctionalInterface
public interface GroupJournal {
    GroupJournal NONE = (group, start, blocks, used) -> {};

    /**
     * Blocks {@code [start, start + blocks)} (absolute) of {@code group} became used ({@code used}) or free.
     * Every block in the range changed state.
     */
    void bitmapChanged(int group, long start, int blocks, boolean used);
}
