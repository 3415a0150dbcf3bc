package org.blockyard.benches;

import java.nio.file.Path;

import picocli.CommandLine.Option;

/** {@code --plot DIR}, taken by the benches that draw their figures ({@link Plots}). */
public final class PlotOption {
    @Option(names = "--plot", paramLabel = "DIR",
            description = "also write PNG plots into DIR (made if missing): latency CDFs, and figures over time where the bench samples them")
    Path dir;

    /** The directory, checked and made before the bench runs; null without {@code --plot}. */
    public Path directory() {
        return dir == null ? null : Plots.directory(dir);
    }
}
