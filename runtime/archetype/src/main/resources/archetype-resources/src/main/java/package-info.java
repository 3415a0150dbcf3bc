#if ($kind == "policy")
/** The ${pluginId} allocation policy plugin: one DS component registering its {@link org.blockyard.api.alloc.AllocationPolicyFactory}. */
#else
/** The ${pluginId} I/O scheduler plugin: one DS component registering its {@link org.blockyard.api.io.ElevatorFactory}. */
#end
package ${package};
