/**
 * A deterministic rotating-disk model after DiskSim: zoned layout, Ruemmler–Wilkes seek curve,
 * rotational position from the model's virtual clock, head and cylinder switches.
 * {@link org.blockyard.runtime.io.disk.DiskProfile} holds the parameters (defaults: a 7200 rpm
 * Barracuda, configurable under {@code blockyard.io.disk}); {@link org.blockyard.runtime.io.disk.DiskModel}
 * turns requests into service times.
 */
package org.blockyard.runtime.io.disk;
