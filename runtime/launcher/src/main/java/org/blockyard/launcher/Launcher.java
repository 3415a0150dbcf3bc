package org.blockyard.launcher;

import org.blockyard.host.HostCommands;
import org.blockyard.cli.Main;
import picocli.CommandLine;

/**
 * The {@code blockyard} main: the CLI's commands with the host's beside them, {@code run} (the OSGi host) and
 * {@code bench swap} with plugin bundles coming and going between the switches. Neither module knows the other.
 */
public final class Launcher {
    private Launcher() {}

    public static CommandLine commandLine() {
        return Main.commandLine(HostCommands.commands(), HostCommands.workloads());
    }

    public static void main(String[] args) {
        // Bind SLF4J before any actor system starts logging from its own threads (see Main.main).
        org.slf4j.LoggerFactory.getLogger(Launcher.class);
        System.exit(commandLine().execute(args));
    }
}
