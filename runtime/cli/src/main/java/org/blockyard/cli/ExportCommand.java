package org.blockyard.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;

import org.blockyard.benches.BadOption;
import org.blockyard.benches.Sizes;
import org.blockyard.nbd.ExportPool;
import org.blockyard.nbd.ThinExport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code blockyard export create|list|delete}: the NBD exports of a volume no server holds (a server holds the
 * volume's lock, and the open is refused). Exports are thin: creating one allocates nothing.
 */
@Command(name = "export", mixinStandardHelpOptions = true,
        description = "Create, list or delete the NBD exports of a volume (thin: an export takes blocks as it is written).",
        subcommands = {ExportCommand.Create.class, ExportCommand.ListExports.class, ExportCommand.Delete.class})
public final class ExportCommand implements Runnable {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }

    /** The volume every export command works on, and the configuration layered over the defaults. */
    static final class VolumeOptions {
        @Option(names = "--volume", required = true, paramLabel = "IMAGE", description = "The volume's image file or device.")
        Path volume;

        @Option(names = "--config", paramLabel = "FILE", description = "Configuration layered over the defaults.")
        Path config;

        ExportPool open() {
            if (!Files.exists(volume)) throw new BadOption("--volume", volume, "no such volume image or device");
            return ExportPool.open(volume, BadOption.config(config));
        }
    }

    @Command(name = "create", mixinStandardHelpOptions = true, description = "Make an empty export NAME of SIZE bytes.")
    static final class Create implements Callable<Integer> {
        @Mixin
        VolumeOptions on;

        @Parameters(index = "0", paramLabel = "NAME", description = "The export's name, as clients ask for it.")
        String name;

        @Option(names = "--size", required = true, paramLabel = "SIZE", converter = Sizes.Converter.class,
                description = "The export's size, whole blocks (64MiB, 100GiB, ...); may exceed the volume's free space.")
        long sizeBytes;

        @Override
        public Integer call() {
            try (ExportPool pool = on.open()) {
                ThinExport e = pool.create(name, sizeBytes);
                System.out.println("export " + e.name() + ": " + e.sizeBytes() + " bytes");
            }
            return 0;
        }
    }

    @Command(name = "list", mixinStandardHelpOptions = true, description = "Print each export's name, size and the blocks it holds.")
    static final class ListExports implements Callable<Integer> {
        @Mixin
        VolumeOptions on;

        @Override
        public Integer call() {
            try (ExportPool pool = on.open()) {
                System.out.printf("%-24s %16s %12s%n", "NAME", "SIZE_BYTES", "BLOCKS");
                for (ThinExport e : pool.exports())
                    System.out.printf("%-24s %16d %12d%n", e.name(), e.sizeBytes(), pool.mappedBlocks(e));
                System.out.printf("free blocks: %d%n", pool.freeBlocks());
            }
            return 0;
        }
    }

    @Command(name = "delete", mixinStandardHelpOptions = true, description = "Delete export NAME and free its blocks.")
    static final class Delete implements Callable<Integer> {
        @Mixin
        VolumeOptions on;

        @Parameters(index = "0", paramLabel = "NAME", description = "The export to delete.")
        String name;

        @Override
        public Integer call() {
            try (ExportPool pool = on.open()) {
                pool.delete(name);
            }
            return 0;
        }
    }
}
