package org.blockyard.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;

import org.blockyard.runtime.volume.Filefrag;
import org.blockyard.runtime.volume.Volume;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code blockyard filefrag IMAGE FILE}: a file's extents as {@code filefrag -v} prints them. */
@Command(name = "filefrag", mixinStandardHelpOptions = true,
        description = "Print the extents of FILE on the volume in IMAGE, as Linux filefrag -v does.")
public final class FilefragCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "IMAGE", description = "The volume's image file or device.")
    Path image;

    @Parameters(index = "1", paramLabel = "FILE", description = "A file name on the volume.")
    String file;

    @Override
    public Integer call() {
        // What the path is, or why it cannot be opened, the engine says (a FIFO, a directory, permission denied).
        if (!java.nio.file.Files.exists(image))
            throw new org.blockyard.benches.BadOption("IMAGE", image, "no such volume image or device");
        System.out.print(Filefrag.format(Volume.inspect(image), file));
        return 0;
    }
}
