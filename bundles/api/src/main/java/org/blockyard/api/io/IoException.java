package org.blockyard.api.io;

/** Why a block-I/O call was refused or failed. A refused call changed nothing. */
public abstract sealed class IoException extends RuntimeException
        permits IoException.InvalidRequest, IoException.UnknownElevator, IoException.InvalidTunable,
        IoException.SwitchFailed, IoException.DeviceError, IoException.Closed, IoException.ElevatorFailed {

    protected IoException(String message, Throwable cause) {
        super(message, cause, false, false);
    }

    /** A submission outside the device, or larger than the queue can ever issue. */
    public static final class InvalidRequest extends IoException {
        public InvalidRequest(String message) { super(message, null); }
    }

    /** No elevator of that name or alias is registered (sysfs: "elevator: type X not found"). */
    public static final class UnknownElevator extends IoException {
        public UnknownElevator(String message) { super(message, null); }
    }

    /** A tunable that the elevator does not have, or a value outside its range. */
    public static final class InvalidTunable extends IoException {
        public InvalidTunable(String message) { super(message, null); }
    }

    /** The new elevator could not be started; the old one still runs. */
    public static final class SwitchFailed extends IoException {
        public SwitchFailed(String message, Throwable cause) { super(message, cause); }
    }

    /**
     * The elevator asked for was retired after a fault (it threw, broke the queue's contract or stalled) and
     * cannot be selected again until its factory is registered anew.
     */
    public static final class ElevatorFailed extends IoException {
        public ElevatorFailed(String message) { super(message, null); }
    }

    /** The device reported an error for a request. */
    public static final class DeviceError extends IoException {
        public DeviceError(String message, Throwable cause) { super(message, cause); }
    }

    /** The queue was closed before the request completed; a write may or may not have reached the device. */
    public static final class Closed extends IoException {
        public Closed(String message) { super(message, null); }
    }
}
