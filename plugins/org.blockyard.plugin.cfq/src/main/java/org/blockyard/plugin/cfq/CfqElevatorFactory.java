package org.blockyard.plugin.cfq;

import java.util.List;
import java.util.Map;

import org.blockyard.api.io.Elevator;
import org.blockyard.api.io.ElevatorDescriptor;
import org.blockyard.api.io.ElevatorFactory;
import org.blockyard.api.io.QueueLimits;
import org.blockyard.api.plugin.Tunable;
import org.osgi.service.component.annotations.Component;

/**
 * The cfq elevator's descriptor and factory, registered as an {@link ElevatorFactory} service while this
 * bundle is active. Tunables carry the sysfs names and Linux 2.6.20 defaults at HZ = 1000.
 */
@Component(service = ElevatorFactory.class, property = "blockyard.elevator.id=cfq")
public final class CfqElevatorFactory implements ElevatorFactory {

    static final String QUANTUM = "quantum";
    static final String FIFO_EXPIRE_SYNC = "fifo_expire_sync";
    static final String FIFO_EXPIRE_ASYNC = "fifo_expire_async";
    static final String BACK_SEEK_MAX = "back_seek_max";
    static final String BACK_SEEK_PENALTY = "back_seek_penalty";
    static final String SLICE_SYNC = "slice_sync";
    static final String SLICE_ASYNC = "slice_async";
    static final String SLICE_ASYNC_RQ = "slice_async_rq";
    static final String SLICE_IDLE = "slice_idle";

    static final ElevatorDescriptor DESCRIPTOR = new ElevatorDescriptor("cfq", List.of(),
            "completely fair queueing: a time slice per owner's sync queue, one shared async queue, META first",
            List.of(
            new Tunable(QUANTUM, CfqElevator.QUANTUM, 1, 64, "requests",
                    "requests a queue may have on the device while others wait; more raises throughput, hurts fairness"),
            new Tunable(FIFO_EXPIRE_SYNC, CfqElevator.FIFO_EXPIRE_SYNC_MS, 1, 600_000, "ms",
                    "a sync request older than this goes first, once per slice (HZ/8)"),
            new Tunable(FIFO_EXPIRE_ASYNC, CfqElevator.FIFO_EXPIRE_ASYNC_MS, 1, 600_000, "ms",
                    "async writes are not waited on, so they may wait twice as long (HZ/4)"),
            new Tunable(BACK_SEEK_MAX, CfqElevator.BACK_SEEK_MAX_KIB, 0, 1 << 30, "KiB",
                    "a request this far behind the head is still taken without wrapping: 16 MiB is a short seek"),
            new Tunable(BACK_SEEK_PENALTY, CfqElevator.BACK_SEEK_PENALTY, 1, 1_000, "factor",
                    "a backward seek costs this many times a forward one of the same length"),
            new Tunable(SLICE_SYNC, CfqElevator.SLICE_SYNC_MS, 1, 600_000, "ms",
                    "time a sync queue owns the disk (HZ/10): long enough to amortise the seek to it"),
            new Tunable(SLICE_ASYNC, CfqElevator.SLICE_ASYNC_MS, 1, 600_000, "ms",
                    "time the async queue owns the disk (HZ/25): shorter, nobody waits on writes"),
            new Tunable(SLICE_ASYNC_RQ, CfqElevator.SLICE_ASYNC_RQ, 1, 1_000, "requests",
                    "scales the async requests per slice (16 at the default) so writes cannot flood the device"),
            new Tunable(SLICE_IDLE, CfqElevator.SLICE_IDLE_MS, 0, 1_000, "ms",
                    "idle this long for the active owner's next request (HZ/125) rather than seek away; 0 = off")));

    @Override
    public ElevatorDescriptor descriptor() {
        return DESCRIPTOR;
    }

    @Override
    public Elevator create(QueueLimits limits, Map<String, Long> tunables) {
        return new CfqElevator(tunables);
    }
}
