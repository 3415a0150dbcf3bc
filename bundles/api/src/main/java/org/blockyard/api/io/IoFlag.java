package org.blockyard.api.io;

/**
 * Request classification, after Linux {@code BIO_RW_SYNC}, {@code BIO_RW_META} and {@code BIO_RW_AHEAD}
 * (seed 004, notes/elevators.md §3).
 */
public enum IoFlag {
    /** Someone waits on it (journal/log writes): it unplugs the queue and is issued ahead of all else. */
    SYNC,
    /** Asynchronous metadata: it merges like bulk data but is issued ahead of bulk data. */
    META,
    /** Read-ahead: nobody waits on it yet; it is only a hint in the trace. */
    AHEAD
}
