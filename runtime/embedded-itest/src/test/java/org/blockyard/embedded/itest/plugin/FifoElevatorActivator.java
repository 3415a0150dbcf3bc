package org.blockyard.embedded.itest.plugin;

import java.util.ArrayList;
import java.util.Hashtable;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

import org.osgi.framework.BundleActivator;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;

import org.blockyard.api.io.BlockRequest;
import org.blockyard.api.io.Dispatch;
import org.blockyard.api.io.Elevator;
import org.blockyard.api.io.ElevatorDescriptor;
import org.blockyard.api.io.ElevatorFactory;
import org.blockyard.api.io.IoRequest;
import org.blockyard.api.io.MergeKind;
import org.blockyard.api.io.QueueLimits;
import org.blockyard.api.plugin.Tunable;

/**
 * The activator of an elevator plugin bundle the tests build: it offers elevator {@value #ID} (first come,
 * first served, no merging) as an {@link ElevatorFactory} service while it runs. Its one tunable, {@code tag},
 * changes nothing but what its {@code stats()} report, so a test sees which value the running elevator got.
 */
public final class FifoElevatorActivator implements BundleActivator, ElevatorFactory {
    public static final String ID = "fifo-test";
    private static final ElevatorDescriptor DESCRIPTOR = new ElevatorDescriptor(ID, List.of(),
            "first come, first served, no merging (a test plugin)", List.of(new Tunable("tag", 1, 0, 1000, "count",
                    "read back from stats(): which value the running elevator was built with")));

    private ServiceRegistration<ElevatorFactory> registration;

    @Override
    public void start(BundleContext context) {
        registration = context.registerService(ElevatorFactory.class, this, new Hashtable<>());
    }

    @Override
    public void stop(BundleContext context) {
        registration.unregister();
    }

    @Override
    public ElevatorDescriptor descriptor() {
        return DESCRIPTOR;
    }

    @Override
    public Elevator create(QueueLimits limits, Map<String, Long> tunables) {
        return new Fifo(tunables.get("tag"));
    }

    private static final class Fifo implements Elevator {
        private final LinkedHashSet<BlockRequest> fifo = new LinkedHashSet<>();
        private final long tag;
        private long dispatched;

        Fifo(long tag) {
            this.tag = tag;
        }

        @Override public void add(BlockRequest request, long nowNanos) { fifo.add(request); }
        @Override public boolean allowMerge(BlockRequest request, IoRequest submission, MergeKind kind) { return false; }
        @Override public void merged(BlockRequest request, MergeKind kind, long previousSector) {}
        @Override public void mergedRequests(BlockRequest request, BlockRequest next, long previousSector) { fifo.remove(next); }
        @Override public void completed(BlockRequest request, long nowNanos) {}
        @Override public int queued() { return fifo.size(); }
        @Override public Map<String, Object> stats() {
            return Map.of("queued", fifo.size(), "dispatched", dispatched, "tag", tag);
        }

        @Override
        public Dispatch dispatch(long nowNanos) {
            Iterator<BlockRequest> it = fifo.iterator();
            if (!it.hasNext()) return Dispatch.IDLE;
            BlockRequest rq = it.next();
            it.remove();
            dispatched++;
            return Dispatch.issue(rq);
        }

        @Override
        public List<BlockRequest> drainAll() {
            List<BlockRequest> all = new ArrayList<>(fifo);
            fifo.clear();
            return all;
        }
    }
}
