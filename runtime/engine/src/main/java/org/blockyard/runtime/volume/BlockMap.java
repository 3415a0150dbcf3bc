package org.blockyard.runtime.volume;

import java.awt.image.BufferedImage;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A picture of a volume's blocks: one band per group, left to right through the group; each pixel shows what
 * most of its blocks are: free (white), system zone (dark grey), used by no one (red: a leak), or the file or
 * owner holding them, each of the largest in a colour of its own (smaller ones share a grey-blue). Drawn
 * with java.awt.image only, so it works headless.
 */
public final class BlockMap {
    public static final int FREE = 0xFFFFFF, SYSTEM = 0x404040, LEAK = 0xE00000, OTHER = 0x8090A8;
    /** Distinct colours for the largest files (Tableau 10 and a few more). */
    private static final int[] PALETTE = {0x4E79A7, 0xF28E2B, 0x59A14F, 0xB07AA1, 0xEDC948, 0x76B7B2, 0xFF9DA7,
            0x9C755F, 0xBAB0AC, 0x1F77B4, 0x2CA02C, 0x9467BD, 0x8C564B, 0x17BECF, 0xBCBD22, 0xD62728};

    /** The picture and which colour each named entry got. */
    public record Picture(BufferedImage image, Map<String, Integer> legend) {}

    private BlockMap() {}

    public static Picture draw(Metadata meta, int width, int bandHeight) {
        var g = meta.geometry;
        int bpg = g.blocksPerGroup();
        width = Math.max(1, Math.min(width, bpg));
        List<Metadata.Entry> bySize = new ArrayList<>(meta.entries());
        bySize.sort(Comparator.comparingLong((Metadata.Entry e) -> -e.map.mappedBlocks()));
        Map<Long, Integer> colour = new LinkedHashMap<>();
        Map<String, Integer> legend = new LinkedHashMap<>();
        for (int i = 0; i < bySize.size(); i++) {
            int c = i < PALETTE.length ? PALETTE[i] : OTHER;
            colour.put(bySize.get(i).id, c);
            if (i < PALETTE.length) legend.put((bySize.get(i).kind == Metadata.KIND_FILE ? "" : "owner ") + bySize.get(i).name, c);
        }
        legend.put("free", FREE);
        legend.put("system zone", SYSTEM);
        legend.put("used, no owner", LEAK);
        // Per group, the colour of each block: fill from the owners' runs.
        int[][] blockColour = new int[g.groups()][];
        for (int grp = 0; grp < g.groups(); grp++) {
            int[] c = new int[bpg];
            int sys = g.systemBlocks(grp), n = g.groupBlocks(grp);
            long base = g.groupStart(grp);
            for (int i = 0; i < bpg; i++)
                c[i] = i < sys || i >= n ? SYSTEM : meta.isUsed(base + i) ? LEAK : FREE;
            blockColour[grp] = c;
        }
        for (Metadata.Entry e : meta.entries())
            for (ExtentMap.Run r : e.map.runs())
                for (long b = Math.max(0, r.physical()); b < Math.min(r.physicalEnd(), g.totalBlocks()); b++) {
                    int grp = g.groupOf(b), i = (int) (b - g.groupStart(grp));
                    if (blockColour[grp][i] != SYSTEM) blockColour[grp][i] = colour.get(e.id);
                }
        BufferedImage img = new BufferedImage(width, g.groups() * (bandHeight + 1), BufferedImage.TYPE_INT_RGB);
        for (int grp = 0; grp < g.groups(); grp++) {
            int[] c = blockColour[grp];
            for (int x = 0; x < width; x++) {
                int from = (int) ((long) x * bpg / width), to = (int) ((long) (x + 1) * bpg / width);
                int rgb = dominant(c, from, Math.max(from + 1, to));
                for (int y = 0; y < bandHeight; y++) img.setRGB(x, grp * (bandHeight + 1) + y, rgb);
            }
            for (int x = 0; x < width; x++) img.setRGB(x, grp * (bandHeight + 1) + bandHeight, 0xC0C0C0); // group boundary
        }
        return new Picture(img, legend);
    }

    /** The colour most blocks in {@code [from, to)} have; used beats free on a tie. */
    private static int dominant(int[] c, int from, int to) {
        Map<Integer, Integer> count = new LinkedHashMap<>();
        for (int i = from; i < to; i++) count.merge(c[i], 1, Integer::sum);
        int best = FREE, n = -1;
        for (Map.Entry<Integer, Integer> e : count.entrySet()) {
            int v = e.getValue() * 2 + (e.getKey() == FREE ? 0 : 1);
            if (v > n) {
                n = v;
                best = e.getKey();
            }
        }
        return best;
    }
}
