/**
 * Block-layer event traces in Linux blktrace's binary format, so that a simulated run can be read
 * with the standard {@code blkparse} and {@code btt}. {@link org.blockyard.runtime.io.trace.BlktraceWriter}
 * documents the record layout and how to run the tools on its files.
 */
package org.blockyard.runtime.io.trace;
