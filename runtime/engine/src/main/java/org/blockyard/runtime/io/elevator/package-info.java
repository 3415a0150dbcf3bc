/** The built-in elevators, noop and deadline (the default), as Linux 2.6.20 has them. */
package org.blockyard.runtime.io.elevator;
