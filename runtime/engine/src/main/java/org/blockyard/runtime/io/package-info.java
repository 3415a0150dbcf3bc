/**
 * The block-I/O queue: {@link org.blockyard.runtime.io.RequestQueue} (merging, plugging, FLUSH ordering,
 * SYNC and META priority, elevator switching; its header has the invariants), the guard every call into the
 * elevator goes through ({@code GuardedElevator}: checks, retiring a faulty one), the two clocks that drive
 * it ({@link org.blockyard.runtime.io.QueueActor} in real time, {@link org.blockyard.runtime.io.Simulation} on
 * a virtual clock), the devices (memory, image file, simulated disk), the elevators' registry (the plugin
 * registry of {@code org.blockyard.runtime.plugin} with the elevators' reserved alias and last resort) and
 * the queue as a plugin binder's target, and the {@link org.blockyard.api.io.BlockQueue} service over the
 * actor.
 */
package org.blockyard.runtime.io;
