package org.blockyard.host;

import org.blockyard.runtime.cli.Main;
import picocli.CommandLine;

/**
 * The {@code blockyard} command line with {@code run} added: every engine command, plus the OSGi host; and
 * {@code bench swap} runs with a host, so plugin bundles come and go between the switches.
 */
public final class HostMain {
    private HostMain() {}

    public static CommandLine commandLine() {
        CommandLine cli = Main.commandLine().addSubcommand("run", new RunCommand());
        CommandLine bench = cli.getSubcommands().get("bench");
        // picocli has no replace: drop the engine's swap (no host, no bundle events) for the host's.
        bench.getCommandSpec().removeSubcommand("swap");
        bench.addSubcommand("swap", new SwapCommand());
        return Main.configure(cli);
    }

    public static void main(String[] args) {
        // Bind SLF4J before any actor system starts logging from its own threads (see Main.main).
        org.slf4j.LoggerFactory.getLogger(HostMain.class);
        System.exit(commandLine().execute(args));
    }
}
