package org.blockyard.benches.io;

import java.nio.file.Path;

import org.blockyard.benches.DeployOption;
import org.blockyard.benches.JsonOutput;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** Options every block-I/O benchmark takes. */
public final class IoBenchOptions {
    @Spec(Spec.Target.MIXEE)
    CommandSpec command;

    @Option(names = "--elevator", paramLabel = "NAME",
            description = "Elevator id or alias, such as none (noop) or mq-deadline (deadline) (default: blockyard.io.scheduler). "
                    + "A name that is not registered is an error.")
    String elevator;

    @Option(names = "--device", paramLabel = "sim|file|mem",
            description = "Device under the queue (default: blockyard.io.device). sim runs on the virtual clock.")
    String device;

    @Option(names = "--seed", defaultValue = "1", description = "Seed for placement of the workload (default: ${DEFAULT-VALUE}).")
    long seed;

    @Mixin
    JsonOutput json;

    @Option(names = "--trace", paramLabel = "FILE",
            description = "Write a binary blktrace of the run to FILE (read it with: blkparse -i - < FILE).")
    Path trace;

    @Option(names = "--builtin-only",
            description = "Run without the plugin elevators (anticipatory, cfq, fifo and --deploy's), like a kernel built "
                    + "without them: asking for one is an error.")
    boolean builtinOnly;

    @Mixin
    DeployOption deploy;

    @Option(names = "--config", paramLabel = "FILE", description = "Configuration layered over the defaults.")
    Path config;

    // For a bench outside this package (bench randomreads, a job file) that takes the same options.

    /** The elevator asked for, or null. */
    public String elevator() {
        return elevator;
    }

    /** The device asked for, or null. */
    public String device() {
        return device;
    }

    public long seed() {
        return seed;
    }

    public JsonOutput json() {
        return json;
    }

    /** The blktrace file, or null. */
    public Path trace() {
        return trace;
    }

    public boolean builtinOnly() {
        return builtinOnly;
    }

    /** The configuration file (null: the defaults) with the plugin folders of {@code --deploy}. */
    public com.typesafe.config.Config config() {
        return deploy.applyTo(org.blockyard.benches.BadOption.config(config));
    }
}
