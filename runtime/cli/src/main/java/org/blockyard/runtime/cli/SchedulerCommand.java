package org.blockyard.runtime.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;

import org.blockyard.api.io.ElevatorDescriptor;
import org.blockyard.api.plugin.Tunable;
import org.blockyard.api.io.IoException;
import org.blockyard.runtime.config.BlockyardConfig;
import org.blockyard.runtime.io.IoSettings;
import org.blockyard.runtime.io.MemoryDevice;
import org.blockyard.runtime.io.Simulation;
import org.blockyard.runtime.io.bench.BenchElevators;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code blockyard scheduler [NAME]}: like {@code cat} and {@code echo NAME >} on
 * {@code /sys/block/DEV/queue/scheduler}. Without NAME it lists the registered elevators (the built-in ones
 * and the plugins the CLI is built with, unless {@code --builtin-only}) with the configured one in brackets
 * (after fallback). With NAME it switches a queue built from the configuration to it, as a
 * running queue would, and lists again; an unknown name is an error and changes nothing.
 */
@Command(name = "scheduler", mixinStandardHelpOptions = true,
        description = "List the I/O schedulers (the active one in brackets) or switch to NAME.")
public final class SchedulerCommand implements Callable<Integer> {

    @Parameters(index = "0", arity = "0..1", paramLabel = "NAME", description = "Elevator id or alias to switch to.")
    String name;

    @Option(names = "--config", paramLabel = "FILE", description = "Configuration layered over the defaults.")
    Path config;

    @Option(names = "--builtin-only", description = "Without the plugin elevators (anticipatory, cfq) the CLI is built with.")
    boolean builtinOnly;

    @Option(names = {"-v", "--verbose"}, description = "Also show each elevator's tunables with default, unit and reason.")
    boolean verbose;

    @Override
    public Integer call() {
        IoSettings s = IoSettings.fromConfig(BlockyardConfig.load(config));
        if (!builtinOnly) BenchElevators.registerWith(s.setup().registry());
        Simulation queue = new Simulation(s.setup(), new MemoryDevice(1 << 20));
        if (name != null) {
            try {
                queue.setElevator(name);
            } catch (IoException.UnknownElevator | IoException.SwitchFailed e) {
                System.err.println(e.getMessage());
                System.err.println(queue.listing());
                return 2;
            }
        }
        System.out.println(queue.listing());
        if (verbose) {
            for (String id : s.setup().registry().ids()) {
                ElevatorDescriptor d = s.setup().registry().factory(id).descriptor();
                System.out.printf("%s%s: %s%n", id, d.aliases().isEmpty() ? "" : " (alias " + String.join(", ", d.aliases()) + ")",
                        d.description());
                for (Tunable t : d.tunables())
                    System.out.printf("  %-18s %8d %-9s %s%n", t.name(), t.defaultValue(), t.unit(), t.reason());
            }
        }
        return 0;
    }
}
