package org.blockyard.api.alloc;

/**
 * Why an allocator call was refused. A refused call changed nothing. Callers switch on the subclass; the
 * message says what was asked and what stands in the way.
 */
public abstract sealed class AllocationException extends RuntimeException
        permits AllocationException.NoSpace, AllocationException.OutOfRange, AllocationException.DoubleFree,
        AllocationException.SystemZone, AllocationException.InvalidRequest, AllocationException.UnknownFile,
        AllocationException.Closed, AllocationException.Failed {

    protected AllocationException(String message) {
        super(message, null, false, false);
    }

    /** Not one free block could be found, even after the pass that ignores reservation windows. */
    public static final class NoSpace extends AllocationException {
        public NoSpace(String message) { super(message); }
    }

    /** A block or range lies (partly) outside the volume. */
    public static final class OutOfRange extends AllocationException {
        public OutOfRange(String message) { super(message); }
    }

    /** A release names a block that is already free. */
    public static final class DoubleFree extends AllocationException {
        public DoubleFree(String message) { super(message); }
    }

    /** A release or a claim touches a system-zone block ("Allocating block in system zone"). */
    public static final class SystemZone extends AllocationException {
        public SystemZone(String message) { super(message); }
    }

    /** A count, unit or size that makes no sense: zero, negative, or not a multiple of the unit. */
    public static final class InvalidRequest extends AllocationException {
        public InvalidRequest(String message) { super(message); }
    }

    /** A file call names a file that is not open (never opened, or already closed). */
    public static final class UnknownFile extends AllocationException {
        public UnknownFile(String message) { super(message); }
    }

    /** The allocator (or the queue) was closed before it could answer; the call had no effect. */
    public static final class Closed extends AllocationException {
        public Closed(String message) { super(message); }
    }

    /**
     * An internal fault (a bug in an actor or a plugin) stopped this call. What the call had changed was
     * rolled back, the actor that failed kept (or rebuilt) its state, and the log names the cause.
     */
    public static final class Failed extends AllocationException {
        public Failed(String message) { super(message); }
    }
}
