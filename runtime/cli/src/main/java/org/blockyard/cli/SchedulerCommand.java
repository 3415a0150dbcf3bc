package org.blockyard.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;

import org.blockyard.api.io.ElevatorDescriptor;
import org.blockyard.api.plugin.Tunable;
import org.blockyard.benches.BadOption;
import org.blockyard.runtime.io.IoSettings;
import org.blockyard.runtime.io.MemoryDevice;
import org.blockyard.runtime.io.Simulation;
import org.blockyard.benches.io.BenchElevators;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code blockyard scheduler [NAME]}: like {@code cat} and {@code echo NAME >} on
 * {@code /sys/block/DEV/queue/scheduler}. Without NAME it lists the registered elevators (the built-in ones
 * and the plugins the CLI is built with, unless {@code --builtin-only}) with the configured one in brackets
 * (after fallback). With NAME it only checks the name: it says which elevator the name stands for and how to
 * make it last (the configuration, or {@code blockyard:scheduler NAME} in a running host), and changes
 * nothing; an unknown name is an error (exit code 2).
 */
@Command(name = "scheduler", mixinStandardHelpOptions = true,
        description = {"List the I/O schedulers (the configured one in brackets), or check NAME.",
                "This command changes nothing: a scheduler is chosen with blockyard.io.scheduler in the configuration,"
                        + " or switched in a running host with blockyard:scheduler NAME (./blockyard run)."})
public final class SchedulerCommand implements Callable<Integer> {

    @Parameters(index = "0", arity = "0..1", paramLabel = "NAME",
            description = "Elevator id or alias to check (none is noop, mq-deadline is deadline, as is anticipatory).")
    String name;

    @Option(names = "--config", paramLabel = "FILE", description = "Configuration layered over the defaults.")
    Path config;

    @Option(names = "--builtin-only", description = "Without the plugin elevators (anticipatory, cfq) the CLI is built with.")
    boolean builtinOnly;

    @Option(names = {"-v", "--verbose"}, description = "Also show each elevator's tunables with default, unit and reason.")
    boolean verbose;

    @Override
    public Integer call() {
        IoSettings s = IoSettings.fromConfig(BadOption.config(config));
        if (!builtinOnly) BenchElevators.registerWith(s.setup().registry());
        var registry = s.setup().registry();
        String checked = null;
        if (name != null) {
            checked = registry.resolve(name).orElseThrow(() -> new BadOption("NAME", name, "registered are "
                    + String.join(", ", registry.ids()) + (builtinOnly ? " (--builtin-only leaves out the plugins)" : "")));
        }
        Simulation queue = new Simulation(s.setup(), new MemoryDevice(1 << 20));
        System.out.println(queue.listing());
        if (checked != null) {
            System.out.printf("%s%s is available; nothing was changed. To run it, set blockyard.io.scheduler = %s in the "
                    + "configuration (--config FILE), or in a running host: blockyard:scheduler %s%n",
                    name, name.trim().equalsIgnoreCase(checked) ? "" : " (" + checked + ")", checked, checked);
        }
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
