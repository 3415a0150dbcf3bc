package org.blockyard.api.io;

/**
 * The outcome of selecting an elevator.
 *
 * @param requested      the name asked for, as given
 * @param active         id of the elevator now running
 * @param fellBack       true when {@code requested} was not available and the default runs instead
 * @param movedRequests  queued requests handed from the old elevator to the new one
 * @param pauseNanos     how long the queue stood still for the switch (building the new elevator and moving
 *                       the queued requests, inside one message); 0 when not measured
 */
public record ElevatorSwitch(String requested, String active, boolean fellBack, int movedRequests, long pauseNanos) {
    public ElevatorSwitch(String requested, String active, boolean fellBack, int movedRequests) {
        this(requested, active, fellBack, movedRequests, 0);
    }

    /** This outcome with the queue's pause measured. */
    public ElevatorSwitch withPause(long nanos) {
        return new ElevatorSwitch(requested, active, fellBack, movedRequests, nanos);
    }
}
