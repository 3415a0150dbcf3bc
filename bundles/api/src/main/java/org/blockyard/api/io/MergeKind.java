package org.blockyard.api.io;

/** How a submission joined a queued request (Linux {@code ELEVATOR_BACK_MERGE} / {@code FRONT_MERGE}). */
public enum MergeKind {
    /** The submission starts where the request ends; the request keeps its start sector. */
    BACK,
    /** The submission ends where the request starts; the request's start sector moves down. */
    FRONT
}
