package org.blockyard.api.io;

/** What an elevator answers when the queue asks for the next request. */
public sealed interface Dispatch permits Dispatch.Issue, Dispatch.WakeAt, Dispatch.Idle {

    /** Issue this request now; the elevator has removed it from its own lists. */
    record Issue(BlockRequest request) implements Dispatch {
        public Issue {
            if (request == null) throw new IllegalArgumentException("nothing to issue");
        }
    }

    /** Requests are held back on purpose (anticipation); ask again at {@code nanos} or on the next event. */
    record WakeAt(long nanos) implements Dispatch {}

    /** Nothing queued. */
    record Idle() implements Dispatch {}

    Idle IDLE = new Idle();

    static Dispatch issue(BlockRequest request) {
        return new Issue(request);
    }

    static Dispatch wakeAt(long nanos) {
        return new WakeAt(nanos);
    }
}
