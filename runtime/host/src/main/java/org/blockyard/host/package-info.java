/**
 * The OSGi host ({@code blockyard run}): one engine, an embedded Felix with Declarative Services, FileInstall
 * and the Gogo shell, and the glue between them.
 *
 * <table>
 * <caption>Pieces</caption>
 * <tr><td>{@link org.blockyard.host.Host}</td><td>starts and stops the engine and the framework</td></tr>
 * <tr><td>{@code PluginTracker}</td><td>plugin services (elevators, policies) to the engine's binders (tell only)</td></tr>
 * <tr><td>{@link org.blockyard.host.BlockyardCommands}</td><td>the {@code blockyard:} shell commands</td></tr>
 * <tr><td>{@code DeployWatch}</td><td>one-line reasons for jars in the deploy folder that did not start</td></tr>
 * <tr><td>{@link org.blockyard.host.RunCommand}</td><td>{@code run [--config] [--deploy] [--exec]}</td></tr>
 * </table>
 *
 * <p>Rules: the ActorSystem lives here, never in a bundle; the API packages reach the framework once,
 * exported by the system bundle with their versions; framework callbacks only tell actors.
 */
package org.blockyard.host;
