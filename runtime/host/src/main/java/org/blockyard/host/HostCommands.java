package org.blockyard.host;

import java.util.Map;

/**
 * What the host adds to the {@code blockyard} command line, by name; the launcher puts them beside the CLI's
 * commands. The host knows no command line of its own.
 */
public final class HostCommands {
    private HostCommands() {}

    /** Commands of their own: {@code run}, the OSGi host. */
    public static Map<String, Object> commands() {
        return Map.of("run", new RunCommand());
    }

    /** Bench workloads that take the place of the engine's of the same name: {@code swap}, with bundle events. */
    public static Map<String, Object> workloads() {
        return Map.of("swap", new SwapCommand());
    }
}
