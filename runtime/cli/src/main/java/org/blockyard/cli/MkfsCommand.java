package org.blockyard.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

import com.typesafe.config.Config;

import org.blockyard.api.alloc.Geometry;
import org.blockyard.benches.BadOption;
import org.blockyard.benches.Sizes;
import org.blockyard.runtime.volume.Layout;
import org.blockyard.runtime.volume.Superblock;
import org.blockyard.runtime.volume.Volume;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code blockyard mkfs IMAGE --size SIZE}: makes a durable volume (docs/volume-format.md) in an image file,
 * or on a device the user names. Stride and stripe come from the options or, with --from-device-hints, from
 * the device's minimum and optimal I/O sizes, taken only when larger than one block (seed 001).
 */
@Command(name = "mkfs", mixinStandardHelpOptions = true,
        description = "Make a durable volume in IMAGE (a file or a block device). A volume or other data already "
                + "there is refused unless --force; a new, empty or zero-filled file is taken as it is.")
public final class MkfsCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "IMAGE", description = "Image file or block device.")
    Path image;

    @Option(names = "--size", required = true, paramLabel = "SIZE", converter = Sizes.Converter.class,
            description = "Volume size (4096, 64MiB, 1GiB, ...); rounded down to whole blocks and groups.")
    long sizeBytes;

    @Option(names = "--block-size", paramLabel = "SIZE", converter = Sizes.Converter.class,
            description = "Bytes per block, a power of two: 4096, 4KiB, ... (default: blockyard.volume.block-size).")
    Long blockSize;

    @Option(names = "--blocks-per-group", paramLabel = "N", description = "Blocks per group, a multiple of 64 (default: blockyard.volume.blocks-per-group).")
    Integer blocksPerGroup;

    @Option(names = "--journal-blocks", paramLabel = "N", description = "Blocks of the metadata journal (default: mke2fs's size for the volume, 4 MiB to 1 GiB, at most half of what group 0 has beside its other metadata, at least blockyard.volume.journal-blocks).")
    Integer journalBlocks;

    @Option(names = "--file-table-blocks", paramLabel = "N", description = "Blocks of the file table (default: blockyard.volume.file-table-blocks).")
    Integer fileTableBlocks;

    @ArgGroup(exclusive = true)
    Stripes stripes;

    static final class Stripes {
        @ArgGroup(exclusive = false)
        Explicit explicit;

        @Option(names = "--from-device-hints", description = "Take stride and stripe from the device's minimum and optimal I/O sizes (sysfs).")
        boolean fromHints;
    }

    static final class Explicit {
        @Option(names = "--stride", required = true, paramLabel = "BLOCKS", description = "RAID chunk in blocks (not 1).")
        int stride;

        @Option(names = "--stripe-width", required = true, paramLabel = "BLOCKS", description = "Full stripe in blocks (not 1).")
        int stripe;
    }

    @Option(names = "--mmp", description = "Multi-mount protection (as ext4's): for an image that several hosts "
            + "reach; every open waits about twice the interval to see that no other host holds the volume.")
    boolean mmp;

    @Option(names = "--mmp-interval", paramLabel = "MS", description = "With --mmp: how often, in milliseconds, the "
            + "holder updates its MMP block (default 5000).")
    Integer mmpInterval;

    @Option(names = "--config", paramLabel = "FILE", description = "Configuration layered over the defaults.")
    Path config;

    @Option(names = "--force", description = "Overwrite IMAGE even when it holds a volume or other data (never one "
            + "a process has open).")
    boolean force;

    @Override
    public Integer call() throws Exception {
        Config c = BadOption.config(config);
        if (blockSize != null && (blockSize < 1024 || blockSize > (1 << 20) || Long.bitCount(blockSize) != 1))
            throw new BadOption("--block-size", blockSize, "must be a power of two from 1024 to 1 MiB");
        int bs = blockSize != null ? blockSize.intValue() : c.getInt("blockyard.volume.block-size");
        int bpg = blocksPerGroup != null ? blocksPerGroup : c.getInt("blockyard.volume.blocks-per-group");
        int table = fileTableBlocks != null ? fileTableBlocks : c.getInt("blockyard.volume.file-table-blocks");
        if (bs < 1024 || Integer.bitCount(bs) != 1) throw new BadOption("--block-size", bs, "must be a power of two of at least 1024");
        long total = sizeBytes / bs;
        if (bpg < 64 || bpg % 64 != 0) throw new BadOption("--blocks-per-group", bpg, "must be a positive multiple of 64");
        if (journalBlocks != null) BadOption.atLeast("--journal-blocks", journalBlocks, 1);
        BadOption.atLeast("--file-table-blocks", table, 1);
        if (mmpInterval != null && !mmp) throw new BadOption("--mmp-interval", mmpInterval, "needs --mmp");
        if (mmpInterval != null) BadOption.atLeast("--mmp-interval", mmpInterval, 1);
        long rest = total % bpg;
        int sysPerGroup = Geometry.of(bs, Math.max(total, bpg), bpg).systemBlocksPerGroup();
        if (total > bpg && rest != 0 && rest <= sysPerGroup + 64) total -= rest; // a last group of nothing but its system zone
        if (total < bpg) throw new BadOption("--size", sizeBytes, sizeBytes + " bytes is smaller than one group of "
                + bpg + " blocks of " + bs + " bytes (" + Sizes.format((long) bpg * bs) + "); use a bigger size or a smaller"
                + " --blocks-per-group");
        int stride = 0, stripe = 0;
        String hintNote = null;
        if (stripes != null && stripes.explicit != null) {
            stride = stripes.explicit.stride;
            stripe = stripes.explicit.stripe;
        } else if (stripes != null && stripes.fromHints) {
            long[] hints = deviceHints(image);
            Geometry g = Geometry.of(bs, total, bpg).fromDeviceHints(hints[0], hints[1]);
            stride = g.strideBlocks();
            stripe = g.stripeBlocks();
            hintNote = "device hints: minimum_io_size " + hints[0] + ", optimal_io_size " + hints[1] + " bytes -> stride "
                    + stride + ", stripe " + stripe + (stride == 0 && stripe == 0 ? " (hints of one block or less mean no stripe)" : "");
        }
        int journal = journalBlocks != null ? journalBlocks
                : Layout.defaultJournalBlocks(bs, total, bpg, table, c.getInt("blockyard.volume.journal-blocks"));
        Layout layout = Layout.make(bs, total, bpg, table, journal, stride, stripe, mmp);
        Superblock sb = Volume.mkfs(image, layout, force,
                mmpInterval != null ? mmpInterval : Superblock.DEFAULT_MMP_INTERVAL_MILLIS);
        Geometry g = layout.geometry();
        List<String> backups = new ArrayList<>();
        for (int grp = 1; grp < g.groups(); grp++) if (Layout.hasBackup(grp)) backups.add(Integer.toString(grp));
        System.out.printf("Made a Blockyard volume in %s%n", image);
        System.out.printf("  %d blocks of %d bytes (%s) in %d groups of %d; %d data blocks%n", g.totalBlocks(), bs,
                Sizes.format(g.bytes()), g.groups(), bpg, g.dataBlocks());
        System.out.printf("  superblock backups in groups: %s%n", backups.isEmpty() ? "none" : String.join(", ", backups));
        System.out.printf("  group descriptors: block %d (%d); file table: blocks %d..%d; journal: blocks %d..%d%n",
                layout.gdtStart(), layout.gdtBlocks(), layout.fileTableStart(), layout.journalStart() - 1,
                layout.journalStart(), layout.journalStart() + layout.journalBlocks() - 1);
        if (g.stripeBlocks() > 0 || g.strideBlocks() > 0)
            System.out.printf("  stride %d blocks, stripe width %d blocks%n", g.strideBlocks(), g.stripeBlocks());
        if (layout.mmp())
            System.out.printf("  multi-mount protection: block %d, updated every %d ms%n", layout.mmpBlock(),
                    sb.mmpIntervalMillis());
        if (hintNote != null) System.out.println("  " + hintNote);
        System.out.printf("  uuid %s%n", sb.uuid());
        return 0;
    }

    /** minimum_io_size and optimal_io_size of a block device from sysfs; 0 for a regular file. */
    private static long[] deviceHints(Path image) throws Exception {
        Path real = Files.exists(image) ? image.toRealPath() : image;
        if (!real.startsWith("/dev/")) return new long[] {0, 0};
        Path queue = Path.of("/sys/class/block", real.getFileName().toString(), "queue");
        if (!Files.isDirectory(queue)) queue = Path.of("/sys/class/block", real.getFileName().toString(), "..", "queue");
        long min = Long.parseLong(Files.readString(queue.resolve("minimum_io_size")).trim());
        long opt = Long.parseLong(Files.readString(queue.resolve("optimal_io_size")).trim());
        return new long[] {min, opt};
    }
}
