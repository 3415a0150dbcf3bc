/**
 * The plugin machinery every plugin family shares (elevators and allocation policies; Linux keeps one
 * {@code elv_list}, one {@code elv_register()} and one sysfs mechanism for every elevator).
 *
 * <h2>Data</h2>
 * A {@link org.blockyard.runtime.plugin.PluginRegistry} per engine part (the queue's elevators, the allocator's
 * policies) holds the factories by id and alias, the built-in default, the retired ones with their reasons,
 * and the tunable values set at run time. A {@link org.blockyard.runtime.plugin.PluginFamily} says what one
 * family's factories and products are and which exceptions its callers expect; {@code ElevatorRegistry} and
 * {@code PolicyRegistry} are a registry with their family, nothing more.
 *
 * <h2>Rules</h2> (each in one place, the same for every family)
 * <ul>
 * <li>names: an id or alias is taken once; reserved aliases; built-ins stay ({@code PluginRegistry});</li>
 * <li>selection: configuration falls back to the built-in default, logged; a run-time switch to a name that
 *     is not available is an error ({@code PluginRegistry.select}, {@code lookup});</li>
 * <li>faults: a retired plugin is listed with its reason and not selected until it registers anew
 *     ({@code PluginRegistry.markFailed}); the guards that retire one are the family's, since what a wrong
 *     answer is differs ({@code GuardedPolicy} answers each call with the default, {@code GuardedElevator}
 *     hands the queue's requests to it);</li>
 * <li>tunables: default, configured, set at run time, the last winning, checked against the descriptor
 *     before they are kept ({@code PluginRegistry.setTunable});</li>
 * <li>bundles: a taken name from another bundle is refused naming both, a revision of the same bundle
 *     replaces the one it updates, the selection is remembered by name and a plugin answering to it is
 *     selected when it comes back, configured tunables reach a plugin when it arrives
 *     ({@link org.blockyard.runtime.plugin.PluginBinder}, which the OSGi host's trackers and the embedded
 *     component's references feed).</li>
 * </ul>
 *
 * <h2>Concurrency</h2>
 * Registries and binders are thread-safe: actors, a shell and framework threads call them. A binder's callbacks
 * only update its own map and tell the engine (a message to the queue actor; a registry entry and a message
 * to the allocator's actors); they never wait for an actor.
 */
package org.blockyard.runtime.plugin;
