/**
 * The block-I/O queue: {@link org.blockyard.runtime.io.RequestQueue} (merging, plugging, FLUSH ordering,
 * SYNC and META priority, elevator switching; its header has the invariants), the two clocks that drive it
 * ({@link org.blockyard.runtime.io.QueueActor} in real time, {@link org.blockyard.runtime.io.Simulation} on a
 * virtual clock), the devices (memory, image file, simulated disk), the elevator registry with its alias and
 * fallback rules, and the {@link org.blockyard.api.io.BlockQueue} service over the actor.
 */
package org.blockyard.runtime.io;
