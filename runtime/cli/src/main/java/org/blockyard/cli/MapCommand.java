package org.blockyard.cli;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Callable;

import org.blockyard.runtime.volume.BlockMap;
import org.blockyard.runtime.volume.Volume;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code blockyard map IMAGE --png OUT.png}: the volume's block map as a picture, one band per group. */
@Command(name = "map", mixinStandardHelpOptions = true,
        description = {"Draw the volume's block map: one band per group, free white, system zone dark grey, used by no one"
                + " red, each of the largest files in its own colour. Prints the legend."})
public final class MapCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "IMAGE", description = "The volume's image file or device.")
    Path image;

    @Option(names = "--png", required = true, paramLabel = "OUT.png", description = "Where to write the picture (a file; its directory must exist).")
    Path png;

    @Option(names = "--width", paramLabel = "PIXELS", description = "Pixels per group band (default ${DEFAULT-VALUE}).")
    int width = 1024;

    @Option(names = "--band", paramLabel = "PIXELS", description = "Height of a group's band (default ${DEFAULT-VALUE}).")
    int band = 8;

    @Override
    public Integer call() throws Exception {
        org.blockyard.benches.BadOption.atLeast("--width", width, 1);
        org.blockyard.benches.BadOption.atLeast("--band", band, 1);
        // What the path is, or why it cannot be opened, the engine says (a FIFO, a directory, permission denied).
        if (!java.nio.file.Files.exists(image))
            throw new org.blockyard.benches.BadOption("IMAGE", image, "no such volume image or device");
        org.blockyard.benches.BadOption.outputFile("--png", png);
        System.setProperty("java.awt.headless", "true");
        BlockMap.Picture p = BlockMap.draw(Volume.inspect(image), width, band);
        // Into a stream of our own, cached in memory: ImageIO's own file handling prints stack traces, deletes
        // what is at the path first and leaves a temporary file behind on a full disk.
        javax.imageio.ImageIO.setUseCache(false);
        org.blockyard.benches.BadOption.write(png, out -> {
            if (!javax.imageio.ImageIO.write(p.image(), "png", out))
                throw new IllegalStateException("no PNG writer in this Java runtime");
        });
        System.out.printf("%s: %d x %d pixels, %d groups%n", png, p.image().getWidth(), p.image().getHeight(),
                p.image().getHeight() / (band + 1));
        for (Map.Entry<String, Integer> e : p.legend().entrySet())
            System.out.printf("  #%06X  %s%n", e.getValue(), e.getKey());
        return 0;
    }
}
