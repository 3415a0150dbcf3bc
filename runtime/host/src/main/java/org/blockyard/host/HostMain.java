package org.blockyard.host;

import org.blockyard.runtime.cli.Main;
import picocli.CommandLine;

/** The {@code blockyard} command line with {@code run} added: every engine command, plus the OSGi host. */
public final class HostMain {
    private HostMain() {}

    public static CommandLine commandLine() {
        return Main.commandLine().addSubcommand("run", new RunCommand());
    }

    public static void main(String[] args) {
        // Bind SLF4J before any actor system starts logging from its own threads (see Main.main).
        org.slf4j.LoggerFactory.getLogger(HostMain.class);
        System.exit(commandLine().execute(args));
    }
}
