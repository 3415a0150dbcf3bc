/**
 * The anticipatory I/O scheduler plugin (alias {@code as}): one DS component registering its
 * {@link org.blockyard.api.io.ElevatorFactory}.
 */
package org.blockyard.plugin.anticipatory;
