/**
 * Block I/O: the request model ({@link org.blockyard.api.io.IoRequest}: start sector in 512-byte units,
 * length, READ/WRITE/FLUSH, SYNC/META/AHEAD flags, owning io context), the queue limits, the
 * {@link org.blockyard.api.io.BlockQueue} service that storage code submits to, and the
 * {@link org.blockyard.api.io.Elevator} SPI through which I/O schedulers are plugged in. The SPI follows
 * the Linux 2.6 {@code elevator_ops}: the queue owns merging, plugging and the dispatch list; an elevator
 * keeps the requests it was given in its own order, is told when they grow or coalesce, hands the next one
 * out when asked (given the current time; it never reads a clock), and gives everything back when it is
 * switched out. An elevator that throws, breaks these rules or stalls is retired by the queue,
 * which recovers the requests it held from its own bookkeeping. Each elevator is described by an {@link org.blockyard.api.io.ElevatorDescriptor} and built
 * by an {@link org.blockyard.api.io.ElevatorFactory}, which plugins register as an OSGi service.
 */
@Export
@Version("0.5.0")
package org.blockyard.api.io;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
