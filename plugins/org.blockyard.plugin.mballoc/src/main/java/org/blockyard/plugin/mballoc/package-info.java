/** The mballoc allocation policy plugin: one DS component registering its {@link org.blockyard.api.alloc.AllocationPolicyFactory}. */
package org.blockyard.plugin.mballoc;
