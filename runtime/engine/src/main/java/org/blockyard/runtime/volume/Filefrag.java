package org.blockyard.runtime.volume;

import java.util.List;

/**
 * A file's extents printed the way Linux {@code filefrag -v} prints them (e2fsprogs misc/filefrag.c): one
 * line per extent with logical and physical ranges (inclusive), length, the physical block a contiguous file
 * would have continued at when this extent does not, and flags ({@code unwritten}, {@code last}, {@code eof}).
 * The size is the end of the last mapped block: the volume stores blocks, not byte lengths.
 */
public final class Filefrag {
    private Filefrag() {}

    public static String format(Metadata meta, String file) {
        Metadata.Entry e = meta.entry(file);
        if (e == null) throw new VolumeException.NoSuchFile("no file '" + file + "' on this volume (files: "
                + String.join(", ", meta.entries().stream().filter(x -> x.kind == Metadata.KIND_FILE).map(x -> x.name).sorted().toList())
                + ")");
        int bs = meta.layout.blockSize();
        List<ExtentMap.Run> runs = e.map.runs();
        long blocks = runs.isEmpty() ? 0 : runs.get(runs.size() - 1).logical() + runs.get(runs.size() - 1).blocks();
        StringBuilder b = new StringBuilder();
        b.append("Filesystem type is: blockyard (").append(meta.superblock.uuid()).append(")\n");
        b.append(String.format("File size of %s is %d (%d block%s of %d bytes)%n", file, blocks * bs, blocks,
                blocks == 1 ? "" : "s", bs));
        b.append(" ext:     logical_offset:        physical_offset: length:   expected: flags:\n");
        long expected = -1;
        for (int i = 0; i < runs.size(); i++) {
            ExtentMap.Run r = runs.get(i);
            String exp = i > 0 && r.physical() != expected ? Long.toString(expected) : "";
            StringBuilder flags = new StringBuilder();
            if (r.unwritten()) flags.append("unwritten");
            if (i == runs.size() - 1) flags.append(flags.isEmpty() ? "" : ",").append("last,eof");
            b.append(String.format("%4d: %8d..%8d: %10d..%10d: %6d: %10s %s%n", i, r.logical(), r.logical() + r.blocks() - 1,
                    r.physical(), r.physicalEnd() - 1, r.blocks(), exp, flags));
            expected = r.physicalEnd() + (i + 1 < runs.size() ? runs.get(i + 1).logical() - (r.logical() + r.blocks()) : 0);
        }
        b.append(String.format("%s: %d extent%s found%n", file, runs.size(), runs.size() == 1 ? "" : "s"));
        return b.toString();
    }
}
