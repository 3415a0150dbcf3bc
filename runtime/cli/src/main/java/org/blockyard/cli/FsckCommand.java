package org.blockyard.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;

import org.blockyard.runtime.volume.Fsck;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code blockyard fsck IMAGE [--repair]}: e2fsck's passes over a closed volume; exit 0 clean, 1 repaired, 4 left. */
@Command(name = "fsck", mixinStandardHelpOptions = true,
        description = {"Check a closed volume: superblock and backups, descriptors, bitmaps and file table against their "
                + "checksums, every file's extents, blocks owned twice, bitmaps against the owners, free counts.",
                "Exit code: 0 clean, 1 every problem repaired, 4 problems left (as e2fsck)."})
public final class FsckCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "IMAGE", description = "The volume's image file or device.")
    Path image;

    @Option(names = {"--repair", "-y"}, description = "Repair what is safe: free leaks, mark owned blocks used, rebuild "
            + "counts and checksums, restore the superblock from a backup, empty the journal. Double ownership is left to you.")
    boolean repair;

    @Override
    public Integer call() {
        Fsck.Result r = Fsck.check(image, repair);
        System.out.print(r.report());
        return r.exitCode();
    }
}
