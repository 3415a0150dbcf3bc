/** The cfq I/O scheduler plugin: one DS component registering its {@link org.blockyard.api.io.ElevatorFactory}. */
package org.blockyard.plugin.cfq;
