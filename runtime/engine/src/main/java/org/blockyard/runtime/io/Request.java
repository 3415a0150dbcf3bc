package org.blockyard.runtime.io;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.BiConsumer;

import org.blockyard.api.io.BlockRequest;
import org.blockyard.api.io.Elevator;
import org.blockyard.api.io.IoCompletion;
import org.blockyard.api.io.IoFlag;
import org.blockyard.api.io.IoOp;
import org.blockyard.api.io.IoRequest;

/**
 * A device request: one or more submissions ({@link Bio}s) of one kind covering
 * {@code [sector, sector + sectors)} in ascending order without gaps. Only {@link RequestQueue} changes it.
 */
public final class Request implements BlockRequest {

    /** One submission inside a request, with the callback that receives its completion. */
    public record Bio(IoRequest io, long queuedNanos, BiConsumer<IoCompletion, Throwable> done) {}

    private final long seq;
    private long sector;
    private int sectors;
    private final IoOp op;
    private final Set<IoFlag> flags;
    private final long owner;
    private long arrivalNanos;
    final List<Bio> bios = new ArrayList<>(4);

    /** Set when issued: it may no longer merge. */
    boolean started;
    long issuedNanos;
    /** The elevator that handed it out, told of its completion; null for requests that bypassed it. */
    Elevator issuedBy;
    /**
     * The guard whose elevator holds it (given by {@code add}, not yet handed back by {@code dispatch} or
     * {@code drainAll}), else null; {@code heldPrev}/{@code heldNext} link it into that guard's list of held
     * requests in the order they were given, so the queue can recover them without the elevator's help.
     */
    GuardedElevator holder;
    Request heldPrev, heldNext;

    Request(long seq, Bio first) {
        this.seq = seq;
        IoRequest io = first.io();
        this.sector = io.sector();
        this.sectors = io.sectors();
        this.op = io.op();
        this.flags = io.flags();
        this.owner = io.owner();
        this.arrivalNanos = first.queuedNanos();
        bios.add(first);
    }

    void appendBack(Bio bio) {
        bios.add(bio);
        sectors += bio.io().sectors();
    }

    void prependFront(Bio bio) {
        bios.add(0, bio);
        sector = bio.io().sector();
        sectors += bio.io().sectors();
    }

    /** Absorbs {@code next}, which starts where this one ends. */
    void absorb(Request next) {
        bios.addAll(next.bios);
        sectors += next.sectors;
        arrivalNanos = Math.min(arrivalNanos, next.arrivalNanos);
    }

    /** Absorbs {@code prev}, which ends where this one starts. */
    void absorbFront(Request prev) {
        bios.addAll(0, prev.bios);
        sector = prev.sector;
        sectors += prev.sectors;
        arrivalNanos = Math.min(arrivalNanos, prev.arrivalNanos);
    }

    public List<Bio> bios() {
        return List.copyOf(bios);
    }

    public boolean isFlush() {
        return op == IoOp.FLUSH;
    }

    @Override public long seq() { return seq; }
    @Override public long sector() { return sector; }
    @Override public int sectors() { return sectors; }
    @Override public IoOp op() { return op; }
    @Override public Set<IoFlag> flags() { return flags; }
    @Override public long owner() { return owner; }
    @Override public long arrivalNanos() { return arrivalNanos; }
    @Override public int submissions() { return bios.size(); }

    @Override
    public String toString() {
        return "rq#" + seq + "[" + op + flags + " " + sector + "+" + sectors + "]";
    }

    /** The submissions this request carries, in sector order (read-only view, for observers). */
    public List<IoRequest> submissionRequests() {
        List<IoRequest> out = new ArrayList<>(bios.size());
        for (Bio b : bios) out.add(b.io());
        return out;
    }
}
