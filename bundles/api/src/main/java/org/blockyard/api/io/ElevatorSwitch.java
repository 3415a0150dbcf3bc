package org.blockyard.api.io;

/**
 * The outcome of selecting an elevator.
 *
 * @param requested      the name asked for, as given
 * @param active         id of the elevator now running
 * @param fellBack       true when {@code requested} was not available and the default runs instead
 * @param movedRequests  queued requests handed from the old elevator to the new one
 */
public record ElevatorSwitch(String requested, String active, boolean fellBack, int movedRequests) {}
