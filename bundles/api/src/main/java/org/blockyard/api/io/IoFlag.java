package org.blockyard.api.io;

/**
 * Request classification, after Linux {@code BIO_RW_SYNC}, {@code BIO_RW_META} and {@code BIO_RW_AHEAD}
 * (seed 004, notes/elevators.md §3), and Linux {@code REQ_FUA}.
 */
public enum IoFlag {
    /** Someone waits on it (journal/log writes): it unplugs the queue and is issued ahead of all else. */
    SYNC,
    /** Asynchronous metadata: it merges like bulk data but is issued ahead of bulk data. */
    META,
    /** Read-ahead: nobody waits on it yet; it is only a hint in the trace. */
    AHEAD,
    /**
     * Forced unit access, Linux {@code REQ_FUA}, on a WRITE only: the write is on stable storage when it
     * completes, with whatever completed before it (the device writes, then flushes its cache; so a FUA write
     * also does what {@code REQ_PREFLUSH} would). A journal's commit written this way needs no FLUSH request
     * of its own. It never merges with a request without it.
     */
    FUA
}
