package org.blockyard.plugin.mballoc;

import java.util.List;
import java.util.Map;

import org.blockyard.api.alloc.AllocationPolicy;
import org.blockyard.api.alloc.AllocationPolicyFactory;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.api.alloc.PolicyDescriptor;
import org.blockyard.api.plugin.Tunable;
import org.osgi.service.component.annotations.Component;

/** The mballoc policy's descriptor and factory, an {@link AllocationPolicyFactory} service while active. */
@Component(service = AllocationPolicyFactory.class, property = "blockyard.policy.id=" + MballocPolicy.ID)
public final class MballocPolicyFactory implements AllocationPolicyFactory {

    static final String STREAM_REQ = "stream_req_blocks";
    static final String MIN_WINDOW = "min_window_kib";
    static final String MAX_WINDOW = "max_window_kib";
    static final String LOCALITY_MAX_OPEN = "locality_max_open";
    static final String SCAN_GROUPS = "orlov_scan_groups";
    static final String STREAM_MIN_FREE = "stream_min_free_kib";

    static final PolicyDescriptor DESCRIPTOR = new PolicyDescriptor(MballocPolicy.ID, List.of(),
            "ext4 mballoc-like: power-of-two preallocation 16 KiB..8 MiB, per-writer locality groups near the"
                    + " directory, streams move to the emptiest group",
            List.of(new Tunable(STREAM_REQ, 16, 1, 1 << 20, "blocks",
                            "ext4 mb_stream_req: below it a file is small (packed in its locality group, never"
                                    + " moved); from it on a stream (aligned windows, may move to the emptiest group)"),
                    new Tunable(MIN_WINDOW, 16, 1, 1 << 20, "KiB",
                            "smallest normalised window, ext4's first bucket (16 KiB); rounded up to a power of two blocks"),
                    new Tunable(MAX_WINDOW, 8192, 1, 1 << 30, "KiB",
                            "largest normalised window (ext4: 8 MiB); bounds what an idle file holds as preallocation;"
                                    + " a bigger request is taken as it is"),
                    new Tunable(LOCALITY_MAX_OPEN, 1, 1, 1 << 20, "files",
                            "open files a home group takes before the next file of the directory goes to the next"
                                    + " group: stands in for ext4's per-CPU locality groups (1: one per concurrent writer)"),
                    new Tunable(SCAN_GROUPS, 64, 1, 1 << 24, "groups",
                            "groups read to choose a home or a stream's new group; bounds the cost of an open on"
                                    + " volumes of many groups (ext4 scans flex groups the same bounded way)"),
                    new Tunable(STREAM_MIN_FREE, 8192, 0, 1L << 40, "KiB",
                            "a stream whose goal group has less free than this (default one largest window) moves"
                                    + " to the emptiest scanned group instead of the next; 0 never moves")));

    @Override
    public PolicyDescriptor descriptor() {
        return DESCRIPTOR;
    }

    @Override
    public AllocationPolicy create(Geometry geometry, Map<String, Long> t) {
        return new MballocPolicy(geometry, (int) (long) t.get(STREAM_REQ), t.get(MIN_WINDOW), t.get(MAX_WINDOW),
                (int) (long) t.get(LOCALITY_MAX_OPEN), (int) (long) t.get(SCAN_GROUPS), t.get(STREAM_MIN_FREE));
    }
}
