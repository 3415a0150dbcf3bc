package org.blockyard.runtime.volume;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.runtime.alloc.FileState;
import org.blockyard.runtime.volume.VolumeException.Structure;

/**
 * The volume's metadata as it is (or is about to be) on disk: one bitmap per group, the group descriptors
 * derived from them, and the file table. The journal's commit thread owns the live copy and applies the
 * records groups and files append; it never reads an actor's state. It also serialises every metadata
 * block ({@link #image}) and remembers which blocks changed since the last commit.
 *
 * <p>Invariants: {@code free[g]} is the number of clear bits in group g's data area; every block of the
 * system zone and the padding past a short last group is set; each file-table slot belongs to at most one
 * entry, and an entry's slots hold its runs in order.
 */
public final class Metadata {
    public static final int KIND_FILE = 1, KIND_OWNER = 2;
    /**
     * The kind of a free file-table slot: the table magic, entry id 0, nothing else, and the checksum every table
     * block carries. A slot that reads as zeros, has no magic or fails its checksum is damage, never a free slot.
     */
    static final int KIND_FREE = 0;
    static final int TABLE_MAGIC = 0x54465942; // "BYFT"

    /** A named file (logical map) or an extent-API owner (logical == physical). */
    public static final class Entry {
        public final long id;
        public final int kind;
        public final String name;
        public final ExtentMap map = new ExtentMap();
        int[] slots = new int[0];
        /** Per slot, the logical block of its first run (slot i holds the runs from there, as many as fit). */
        long[] firstLogical = new long[0];
        /** Every slot is rewritten at the next layout: the entry is new, loaded, or marked for a rewrite. */
        boolean relayAll = true;
        /** The lowest logical block whose run changed since the last layout (from its map); MAX_VALUE: none. */
        long changedFrom = Long.MAX_VALUE;
        /** The table blocks the next layout rewrites, as counted in {@link #pendingBlocks()}. */
        int dirtyBlocks;

        Entry(long id, int kind, String name) {
            this.id = id;
            this.kind = kind;
            this.name = name;
        }

        public List<Integer> slots() {
            List<Integer> out = new ArrayList<>();
            for (int s : slots) out.add(s);
            return out;
        }
    }

    /** Where a lenient load (fsck) reports what a strict one would throw. */
    public interface Problems {
        void corrupt(Structure structure, long block, String what);

        /**
         * A structure that is damaged but whose pieces each check: answers whether to rebuild it from them
         * (fsck) rather than leave it out. By default it is corrupt (a strict load throws).
         */
        default boolean salvage(Structure structure, long block, String what) {
            corrupt(structure, block, what);
            return false;
        }
    }

    /** Reads one block of the image (with the journal's replay applied, when it has one). */
    public interface BlockReader {
        byte[] read(long block);
    }

    public final Superblock superblock;
    public final Layout layout;
    public final Geometry geometry;
    private final byte[] seed;
    private final long[][] bitmaps;
    private final long[][] initialRows; // read-only, see row()
    private final long[] free;
    private final int[] bitmapCrc;
    private final boolean[] bitmapCrcValid;
    /** Per group: its bitmap was never written (descriptor flag {@link #FLAG_UNINIT}); set only by mkfs. */
    private final boolean[] uninit;
    private final Map<Long, Entry> entries = new LinkedHashMap<>();
    private final Map<String, Entry> byName = new HashMap<>();
    private final long[] slotOwner; // entry id per file-table slot; 0 = free
    private final int[] slotIndex; // per owned slot, its position in its entry's chain
    private int freeSlotHint; // no slot below it is free
    private final TreeSet<Long> txDirty = new TreeSet<>();
    private final long[] groupDirtyIn;
    /** Per descriptor block, its image as last built; a group's 32 bytes in it are current while its flag is set. */
    private final byte[][] descriptorImages;
    private final boolean[] descriptorCurrent; // the commit number in which a group's bitmap and descriptor went into txDirty
    private long commitNumber = 1;
    private final java.util.Set<Entry> dirtyEntries = new java.util.LinkedHashSet<>();
    /** The table blocks the dirty entries' next layouts rewrite, summed: their {@link Entry#dirtyBlocks}. */
    private long entryDirtyBlocks;

    private Metadata(Superblock sb) {
        this.superblock = sb;
        this.layout = sb.layout();
        this.geometry = layout.geometry();
        this.seed = sb.uuidBytes();
        int groups = geometry.groups();
        this.bitmaps = new long[groups][]; // null: the group's initial bitmap (row), until it changes
        this.initialRows = new long[][] {
            initialRow(0), initialRow(Math.min(1, groups - 1)), initialRow(groups - 1)};
        this.free = new long[groups];
        this.bitmapCrc = new int[groups];
        this.bitmapCrcValid = new boolean[groups];
        this.uninit = new boolean[groups];
        this.groupDirtyIn = new long[groups];
        this.descriptorImages = new byte[layout.gdtBlocks()][];
        this.descriptorCurrent = new boolean[groups];
        this.slotOwner = new long[layout.fileTableBlocks()];
        this.slotIndex = new int[layout.fileTableBlocks()];
    }

    /** Descriptor flag: the group's bitmap was never written; it is the initial one ({@link #row}), not read. */
    static final int FLAG_UNINIT = 1;

    /**
     * A freshly made volume: system zones set, everything else free, no files. With the superblock's
     * {@link Superblock#INCOMPAT_UNINIT_BITMAPS} every group's bitmap is left unwritten (only its descriptor
     * says so), as mke2fs leaves ext4's: mkfs of a 13 TiB volume then writes a few thousand blocks, not 106,496
     * scattered bitmaps, and an open reads the bitmaps of the groups that were ever used.
     */
    public static Metadata fresh(Superblock sb) {
        Metadata m = new Metadata(sb);
        for (int g = 0; g < m.geometry.groups(); g++) {
            m.free[g] = m.geometry.groupBlocks(g) - m.geometry.systemBlocks(g);
            m.uninit[g] = sb.uninitBitmaps();
        }
        return m;
    }

    /**
     * Group {@code g}'s bitmap words, to read only. A group's row stays null until it first changes, and reads
     * one of three shared initial rows (group 0's, the last group's, and every other group's, which are all
     * alike): an 8 TiB volume's 65,536 groups no longer take 256 MiB here while most of them are empty.
     */
    private long[] row(int g) {
        long[] r = bitmaps[g];
        if (r != null) return r;
        return g == 0 ? initialRows[0] : g == geometry.groups() - 1 ? initialRows[2] : initialRows[1];
    }

    private long[] initialRow(int g) {
        long[] w = new long[geometry.blocksPerGroup() / 64];
        int blocks = geometry.groupBlocks(g);
        setBits(w, 0, geometry.systemBlocks(g), true);
        setBits(w, blocks, geometry.blocksPerGroup() - blocks, true);
        return w;
    }

    /** Group {@code g}'s own bitmap words, to change: a copy of the initial row the first time. */
    private long[] writableRow(int g) {
        if (bitmaps[g] == null) bitmaps[g] = row(g).clone();
        return bitmaps[g];
    }

    /**
     * Reads descriptors, bitmaps and the file table, checking every checksum. Strict ({@code problems ==
     * null}): the first bad block throws {@link VolumeException.Corrupt}. Lenient: each is reported and the
     * block's content is used as it is (fsck compares it with what the files say).
     */
    public static Metadata load(Superblock sb, BlockReader reader, Problems problems) {
        Metadata m = new Metadata(sb);
        Problems p = problems != null ? problems : (s, b, w) -> { throw new VolumeException.Corrupt(s, b, w); };
        Geometry g = m.geometry;
        long[] storedFree = new long[g.groups()];
        int[] storedCrc = new int[g.groups()];
        for (int k = 0; k < m.layout.gdtBlocks(); k++) {
            long block = m.layout.gdtStart() + k;
            byte[] b = reader.read(block);
            ByteBuffer o = Layout.le(b);
            for (int i = 0; i < m.layout.descriptorsPerBlock(); i++) {
                int group = k * m.layout.descriptorsPerBlock() + i;
                if (group >= g.groups()) break;
                int off = i * Layout.DESCRIPTOR_BYTES;
                if (o.getInt(off + 28) != Layout.crc(m.seed, group, b, off, 28))
                    p.corrupt(Structure.GROUP_DESCRIPTOR, block, "descriptor of group " + group + " fails its checksum");
                else if (o.getLong(off) != m.layout.bitmapBlock(group))
                    p.corrupt(Structure.GROUP_DESCRIPTOR, block, "descriptor of group " + group + " puts its bitmap at "
                            + o.getLong(off) + ", not " + m.layout.bitmapBlock(group));
                storedFree[group] = Integer.toUnsignedLong(o.getInt(off + 8));
                storedCrc[group] = o.getInt(off + 16);
                int flags = o.getInt(off + 12);
                if ((flags & ~FLAG_UNINIT) != 0 || (flags != 0 && !sb.uninitBitmaps()))
                    p.corrupt(Structure.GROUP_DESCRIPTOR, block, "descriptor of group " + group + " has flags 0x"
                            + Integer.toHexString(flags) + ", which this volume's features do not allow");
                else m.uninit[group] = flags == FLAG_UNINIT;
            }
        }
        try (BitmapReadahead ahead = new BitmapReadahead(m, reader)) {
            m.loadBitmaps(ahead, p, problems == null, storedFree, storedCrc);
        }
        m.storedFree = storedFree;
        m.loadTable(reader, p);
        return m;
    }

    /** Reads, checks and counts every group's bitmap; {@code strict}: a stored free count must agree too. */
    private void loadBitmaps(BitmapReadahead ahead, Problems p, boolean strict, long[] storedFree, int[] storedCrc) {
        for (int group = 0; group < geometry.groups(); group++) {
            if (!uninit[group]) { // else never written: nothing on disk to read or check, its row the initial one
                byte[] bytes = ahead.next(group);
                int crc = Layout.crc(seed, group, bytes, 0, layout.bitmapBytes());
                if (crc != storedCrc[group])
                    p.corrupt(Structure.BITMAP, layout.bitmapBlock(group), "bitmap of group " + group
                            + " fails its checksum (descriptor says " + Integer.toHexString(storedCrc[group])
                            + ", block has " + Integer.toHexString(crc) + ")");
                bitmaps[group] = new long[geometry.blocksPerGroup() / 64];
                Layout.le(bytes).asLongBuffer().get(bitmaps[group]);
                bitmapCrc[group] = crc;
                bitmapCrcValid[group] = true;
            }
            free[group] = countFree(group);
            if (strict && free[group] != storedFree[group])
                p.corrupt(Structure.GROUP_DESCRIPTOR, layout.descriptorBlock(group), "group " + group + " counts "
                        + storedFree[group] + " free blocks, its " + (uninit[group] ? "unwritten " : "") + "bitmap "
                        + free[group]);
        }
    }

    /**
     * The written bitmaps, read ahead of the loop that checks them, several at a time and a window at a time. A
     * cold open of a big volume waits for one read per written group; a device serves many at once (an SSD's
     * queue, a striped array) where one after another leaves it idle between them. The window bounds the
     * memory (a few MiB whatever the volume). Reads that are under way when the load stops (a corrupt block in
     * a strict load) finish and are dropped; none is interrupted, which would close the image's channel.
     */
    private static final class BitmapReadahead implements AutoCloseable {
        static final int THREADS = 8, GROUPS_PER_TASK = 16, WINDOW_TASKS = 64;

        private final Metadata m;
        private final BlockReader reader;
        private final int[] groups; // the written ones, in order
        private final ExecutorService pool; // null: read in the caller's thread
        private final ArrayDeque<Future<byte[][]>> tasks = new ArrayDeque<>();
        private int submitted; // groups handed to tasks
        private int taken; // groups answered by next()
        private byte[][] current;
        private int currentFrom;

        BitmapReadahead(Metadata m, BlockReader reader) {
            this.m = m;
            this.reader = reader;
            int n = 0;
            for (boolean u : m.uninit) if (!u) n++;
            groups = new int[n];
            n = 0;
            for (int g = 0; g < m.uninit.length; g++) if (!m.uninit[g]) groups[n++] = g;
            pool = groups.length < 2 * GROUPS_PER_TASK ? null : Executors.newFixedThreadPool(THREADS, r -> {
                Thread t = new Thread(r, "blockyard-bitmap-readahead");
                t.setDaemon(true);
                return t;
            });
        }

        /** The bytes of {@code group}'s bitmap: groups are asked for in order, each written one once. */
        byte[] next(int group) {
            if (pool == null) return m.readBitmap(reader, group);
            while (submitted < groups.length && tasks.size() < WINDOW_TASKS) {
                int from = submitted, to = Math.min(groups.length, from + GROUPS_PER_TASK);
                tasks.add(pool.submit(() -> {
                    byte[][] out = new byte[to - from][];
                    for (int i = from; i < to; i++) out[i - from] = m.readBitmap(reader, groups[i]);
                    return out;
                }));
                submitted = to;
            }
            if (current == null || taken - currentFrom >= current.length) {
                currentFrom = taken;
                try {
                    current = tasks.poll().get();
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof RuntimeException r) throw r;
                    if (e.getCause() instanceof Error err) throw err;
                    throw new IllegalStateException(e.getCause());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while reading bitmaps", e);
                }
            }
            if (groups[taken] != group)
                throw new IllegalStateException("bitmap of group " + group + " asked out of order");
            byte[] b = current[taken - currentFrom];
            current[taken - currentFrom] = null;
            taken++;
            return b;
        }

        @Override
        public void close() {
            if (pool != null) pool.shutdown();
        }
    }

    /** Free counts as the descriptors stored them (fsck compares them with the bitmaps). */
    private long[] storedFree;

    public long storedFree(int group) {
        return storedFree == null ? free[group] : storedFree[group];
    }

    private byte[] readBitmap(BlockReader reader, int group) {
        if (layout.bitmapBlocks() == 1 && layout.blockSize() >= layout.bitmapBytes())
            return reader.read(layout.bitmapBlock(group)); // only read below
        byte[] out = new byte[Math.max(layout.bitmapBytes(), layout.bitmapBlocks() * layout.blockSize())];
        for (int i = 0; i < layout.bitmapBlocks(); i++)
            System.arraycopy(reader.read(layout.bitmapBlock(group) + i), 0, out, i * layout.blockSize(), layout.blockSize());
        return out;
    }

    /**
     * Reads every slot of the file table. Each one, free or not, carries the magic and its checksum: a slot that
     * is all zeros (a block zeroed or never written), has no magic, fails its checksum, or says free with an
     * entry id or an unknown kind, is damage: reported (strict: thrown), and none of it used.
     */
    private void loadTable(BlockReader reader, Problems p) {
        Map<Long, List<byte[]>> chains = new LinkedHashMap<>();
        Map<Long, List<Integer>> chainSlots = new HashMap<>();
        for (int slot = 0; slot < layout.fileTableBlocks(); slot++) {
            long block = layout.fileTableStart() + slot;
            byte[] b = reader.read(block);
            ByteBuffer o = Layout.le(b);
            int magic = o.getInt(0);
            if (magic != TABLE_MAGIC) {
                p.corrupt(Structure.FILE_TABLE, block, "slot " + slot + (allZero(b) ? " reads as zeros (a free slot"
                        + " has the table magic and a checksum: the block was zeroed or lost)" : " has no file-table magic"));
                continue;
            }
            if (o.getInt(4) != Layout.crc(seed, block, b, 8, b.length - 8)) {
                p.corrupt(Structure.FILE_TABLE, block, "slot " + slot + " fails its checksum");
                continue;
            }
            long id = o.getLong(8);
            int kind = o.getInt(16);
            if (kind == KIND_FREE && id == 0) continue; // a free slot
            if (id == 0 || (kind != KIND_FILE && kind != KIND_OWNER)) {
                p.corrupt(Structure.FILE_TABLE, block, "slot " + slot + " holds entry id " + id + " of kind " + kind);
                continue;
            }
            chains.computeIfAbsent(id, k -> new ArrayList<>()).add(b);
            chainSlots.computeIfAbsent(id, k -> new ArrayList<>()).add(slot);
        }
        for (Map.Entry<Long, List<byte[]>> c : chains.entrySet()) {
            List<byte[]> blocks = c.getValue();
            List<Integer> slots = chainSlots.get(c.getKey());
            byte[][] ordered = new byte[blocks.size()][];
            int[] orderedSlots = new int[blocks.size()];
            boolean ok = true;
            for (int i = 0; i < blocks.size(); i++) {
                ByteBuffer o = Layout.le(blocks.get(i));
                int index = o.getInt(20), count = o.getInt(24);
                if (count != blocks.size() || index < 0 || index >= count || ordered[index] != null) {
                    ok = false;
                    break;
                }
                ordered[index] = blocks.get(i);
                orderedSlots[index] = slots.get(i);
            }
            long firstBlock = layout.fileTableStart() + slots.get(0);
            boolean salvaged = false;
            if (!ok) {
                // Each block checks, but they do not make one chain (blocks of two layouts, as a replay that stopped
                // at a damaged transaction can leave). Salvaged, the entry is its blocks in index order (the first
                // of a repeated index), each run kept unless it overlaps one kept before; the rest is lost.
                if (!p.salvage(Structure.FILE_TABLE, firstBlock, "entry " + c.getKey() + " has an incomplete chain of "
                        + blocks.size() + " blocks")) continue;
                Integer[] byIndex = new Integer[blocks.size()];
                for (int i = 0; i < byIndex.length; i++) byIndex[i] = i;
                java.util.Arrays.sort(byIndex, java.util.Comparator.comparingInt(i -> Layout.le(blocks.get(i)).getInt(20)));
                for (int i = 0; i < byIndex.length; i++) {
                    ordered[i] = blocks.get(byIndex[i]);
                    orderedSlots[i] = slots.get(byIndex[i]);
                }
                salvaged = true;
            }
            ByteBuffer h = Layout.le(ordered[0]);
            int nameLen = Short.toUnsignedInt(h.getShort(32));
            if (nameLen > Layout.MAX_NAME_BYTES) {
                p.corrupt(Structure.FILE_TABLE, firstBlock, "entry " + c.getKey() + " has a name of " + nameLen + " bytes");
                continue;
            }
            String name = new String(ordered[0], 34, nameLen, StandardCharsets.UTF_8);
            Entry e = new Entry(c.getKey(), h.getInt(16), name);
            java.util.TreeMap<Long, Long> kept = new java.util.TreeMap<>(); // salvage: logical start -> end of runs kept
            for (byte[] b : ordered) {
                ByteBuffer o = Layout.le(b);
                int n = o.getInt(28);
                if (n < 0 || n > layout.extentsPerTableBlock()) {
                    p.corrupt(Structure.FILE_TABLE, firstBlock, "entry " + name + " claims " + n + " extents in a block");
                    n = 0;
                }
                for (int i = 0; i < n; i++) {
                    int off = Layout.TABLE_HEADER_BYTES + i * Layout.TABLE_EXTENT_BYTES;
                    long len = Integer.toUnsignedLong(o.getInt(off + 16));
                    if (len == 0) continue;
                    long logical = o.getLong(off);
                    if (salvaged) {
                        var before = kept.floorEntry(logical + len - 1);
                        if (before != null && before.getValue() > logical) continue; // overlaps a run kept
                        kept.put(logical, logical + len);
                    }
                    e.map.put(logical, o.getLong(off + 8), len, (o.getInt(off + 20) & 1) != 0);
                }
            }
            e.slots = orderedSlots;
            e.firstLogical = new long[orderedSlots.length]; // unused until the first layout, which rewrites all
            for (int i = 0; i < orderedSlots.length; i++) {
                slotOwner[orderedSlots[i]] = e.id;
                slotIndex[orderedSlots[i]] = i;
            }
            entries.put(e.id, e);
            byName.put(key(e.kind, e.name), e);
        }
    }

    private static boolean allZero(byte[] b) {
        for (byte x : b) if (x != 0) return false;
        return true;
    }

    // ---- views ----------------------------------------------------------------------------------------

    public Collection<Entry> entries() {
        return entries.values();
    }

    /** The file named {@code name}, or null. */
    public Entry entry(String name) {
        return byName.get(key(KIND_FILE, name));
    }

    /** The extent-API owner named {@code name}, or null. */
    public Entry owner(String name) {
        return byName.get(key(KIND_OWNER, name));
    }

    private static String key(int kind, String name) {
        return kind + ":" + name;
    }

    public Entry entry(long id) {
        return entries.get(id);
    }

    public long maxEntryId() {
        long max = 0;
        for (long id : entries.keySet()) max = Math.max(max, id);
        return max;
    }

    public long free(int group) {
        return free[group];
    }

    public long freeBlocks() {
        long n = 0;
        for (long f : free) n += f;
        return n;
    }

    public boolean isUsed(long block) {
        int g = geometry.groupOf(block);
        int bit = (int) (block - geometry.groupStart(g));
        return (row(g)[bit >>> 6] & (1L << (bit & 63))) != 0;
    }

    /** Calls {@code run(start, blocks)} for each run of used data blocks of {@code group} (absolute). */
    public void forEachUsedDataRun(int group, java.util.function.BiConsumer<Long, Integer> run) {
        long base = geometry.groupStart(group);
        long[] words = row(group);
        int to = geometry.groupBlocks(group);
        for (int i = nextBit(words, geometry.systemBlocks(group), to, true); i < to; ) {
            int end = nextBit(words, i, to, false);
            run.accept(base + i, end - i);
            i = nextBit(words, end, to, true);
        }
    }

    /** The first bit at or after {@code from} and below {@code to} that is {@code set}; {@code to} if none. */
    static int nextBit(long[] words, int from, int to, boolean set) {
        int i = from;
        while (i < to) {
            long w = set ? words[i >>> 6] : ~words[i >>> 6];
            w &= -1L << (i & 63); // the bits at and after i in its word
            if (w != 0) return Math.min(to, (i & ~63) + Long.numberOfTrailingZeros(w));
            i = (i & ~63) + 64;
        }
        return to;
    }

    private long countFree(int group) {
        return countFree(row(group), geometry.systemBlocks(group), geometry.groupBlocks(group));
    }

    /** Clear bits of {@code words} in {@code [from, to)}, a word at a time. */
    static long countFree(long[] words, int from, int to) {
        long used = 0;
        for (int i = from; i < to; ) {
            int n = Math.min(64 - (i & 63), to - i);
            long mask = n == 64 ? -1L : ((1L << n) - 1) << (i & 63);
            used += Long.bitCount(words[i >>> 6] & mask);
            i += n;
        }
        return (to - from) - used;
    }

    // ---- changes (the commit thread) -----------------------------------------------------------------

    /** Sets or clears bits {@code [from, from + count)} of a group (relative); answers how many changed. */
    private int setBits(int group, int from, int count, boolean used) {
        return setBits(writableRow(group), from, count, used);
    }

    /** Sets or clears bits {@code [from, from + count)} of {@code words}, a word at a time; answers how many changed. */
    static int setBits(long[] words, int from, int count, boolean used) {
        int changed = 0;
        for (int i = from; i < from + count; ) {
            int w = i >>> 6, lo = i & 63;
            int n = Math.min(64 - lo, from + count - i);
            long mask = n == 64 ? -1L : ((1L << n) - 1) << lo;
            long before = words[w];
            words[w] = used ? before | mask : before & ~mask;
            changed += Long.bitCount(before ^ words[w]);
            i += n;
        }
        return changed;
    }

    private void dirtyGroup(int group) {
        uninit[group] = false; // its bitmap block goes out with this commit, with the descriptor that says so
        bitmapCrcValid[group] = false;
        descriptorCurrent[group] = false;
        if (groupDirtyIn[group] == commitNumber) return; // its blocks are in this commit already
        groupDirtyIn[group] = commitNumber;
        for (int i = 0; i < layout.bitmapBlocks(); i++) dirty(layout.bitmapBlock(group) + i);
        dirty(layout.descriptorBlock(group));
    }

    private void dirty(long block) {
        txDirty.add(block);
    }

    /** A group's bitmap changed: blocks {@code [start, +blocks)} became used or free. */
    public void bitmapChanged(int group, long start, int blocks, boolean used) {
        int changed = setBits(group, (int) (start - geometry.groupStart(group)), blocks, used);
        free[group] += used ? -changed : changed;
        dirtyGroup(group);
    }

    /** A new table entry (a file opened for the first time, or an extent-API owner). */
    public void created(long id, int kind, String name) {
        if (entries.containsKey(id)) return;
        Entry e = new Entry(id, kind, name);
        entries.put(id, e);
        byName.put(key(kind, name), e);
        changed(e);
    }

    /**
     * Marks {@code e} for the next layout, and counts the table blocks that layout will rewrite, as
     * {@link #layOut} decides them: a transaction's size is known before its entries are laid out.
     */
    private void changed(Entry e) {
        long from = e.map.takeChangedFrom();
        if (from < e.changedFrom) e.changedFrom = from;
        dirtyEntries.add(e);
        int blocks = blocksToRewrite(e);
        entryDirtyBlocks += blocks - e.dirtyBlocks;
        e.dirtyBlocks = blocks;
    }

    /** The table blocks {@link #layOut} rewrites for {@code e} now, its freed ones included. */
    private int blocksToRewrite(Entry e) {
        if (!e.relayAll && e.changedFrom == Long.MAX_VALUE) return 0;
        int need = slotsFor(e.map.size()), old = e.slots.length;
        if (e.relayAll || need != old) return Math.max(need, old);
        return need - slotHolding(e.firstLogical, e.changedFrom);
    }

    /** The table blocks an entry of {@code runs} runs takes: every block but the last is full. */
    private int slotsFor(int runs) {
        int per = layout.extentsPerTableBlock();
        return Math.max(1, (runs + per - 1) / per);
    }

    /**
     * A deleted entry: its name is free, and its file-table blocks with it (written as free slots with this
     * commit, unless a new entry takes them in it). Its map is empty: the records that freed its blocks came first.
     */
    public void deleted(long id) {
        Entry e = entries.remove(id);
        if (e == null) throw new IllegalStateException("journal record deletes unknown entry id " + id);
        if (e.map.size() > 0)
            throw new IllegalStateException("journal record deletes entry " + e.name + " with " + e.map.size()
                    + " runs");
        byName.remove(key(e.kind, e.name), e);
        if (dirtyEntries.remove(e)) entryDirtyBlocks -= e.dirtyBlocks;
        e.dirtyBlocks = 0;
        for (int s : e.slots) {
            slotOwner[s] = 0;
            freeSlotHint = Math.min(freeSlotHint, s);
            dirty(layout.fileTableStart() + s);
        }
        e.slots = new int[0];
    }

    public void fileChanged(long id, FileState.Change change, long logical, long physical, long blocks) {
        Entry e = entries.get(id);
        if (e == null) throw new IllegalStateException("journal record for unknown file id " + id);
        e.map.apply(change, logical, physical, blocks);
        changed(e);
    }

    public void ownerChanged(long id, List<Extent> extents, boolean add) {
        Entry e = entries.get(id);
        if (e == null) throw new IllegalStateException("journal record for unknown owner id " + id);
        for (Extent x : extents) {
            if (add) e.map.put(x.start(), x.start(), x.blocks(), false);
            else e.map.remove(x.start(), x.blocks(), false);
        }
        changed(e);
    }

    /**
     * Blocks a commit of everything applied so far would log, at most: the bitmaps and descriptors changed, and
     * the table blocks the changed entries' layouts will rewrite (an entry changed before its first extent
     * rewrites its whole chain: it counts as that many, not as one).
     */
    public int pendingBlocks() {
        return (int) Math.min(Integer.MAX_VALUE, txDirty.size() + entryDirtyBlocks);
    }

    /**
     * Lays out changed entries in the file table and answers the blocks changed since the last commit, in
     * order; they count as committed from now on.
     *
     * @throws VolumeException.Corrupt when the file table is full (FILE_TABLE)
     */
    public List<Long> takeCommit() {
        // Chains that keep or lose blocks first: a chain that grows may take the blocks another gives up in the
        // same commit (the catalog counted them free once the record that frees them was appended).
        List<Entry> growing = new ArrayList<>();
        for (Entry e : dirtyEntries) {
            if (slotsFor(e.map.size()) > e.slots.length) growing.add(e);
            else layOut(e);
        }
        for (Entry e : growing) layOut(e);
        dirtyEntries.clear();
        entryDirtyBlocks = 0;
        List<Long> out = new ArrayList<>(txDirty);
        txDirty.clear();
        commitNumber++;
        return out;
    }

    /**
     * Gives a changed entry the slots its runs need and marks dirty the slots whose content changed: those
     * from the one holding the entry's lowest changed run on (an append rewrites the last slot, not the
     * whole chain), or every slot when the chain's length changed (each block carries it) or the entry is
     * new, loaded, or marked for a rewrite.
     */
    private void layOut(Entry e) {
        long from = Math.min(e.changedFrom, e.map.takeChangedFrom());
        e.changedFrom = Long.MAX_VALUE;
        e.dirtyBlocks = 0;
        if (!e.relayAll && from == Long.MAX_VALUE) return; // recorded, but nothing in the map changed
        int per = layout.extentsPerTableBlock();
        int k = e.relayAll ? 0 : slotHolding(e.firstLogical, from);
        Iterator<ExtentMap.Run> it = e.map.from(k == 0 ? Long.MIN_VALUE : e.firstLogical[k]);
        long[] starts = new long[Math.max(1, e.slots.length - k)];
        int rest = 0;
        while (it.hasNext()) {
            long logical = it.next().logical();
            if (rest % per == 0) {
                int slot = rest / per;
                if (slot == starts.length) starts = Arrays.copyOf(starts, slot * 2);
                starts[slot] = logical;
            }
            rest++;
        }
        int need = Math.max(1, k + (rest + per - 1) / per);
        int old = e.slots.length;
        int[] slots = Arrays.copyOf(e.slots, need);
        long[] first = Arrays.copyOf(e.firstLogical, need);
        for (int i = k; i < need; i++) first[i] = starts[i - k];
        for (int i = old; i < need; i++) {
            int s = freeSlot();
            if (s < 0) throw new VolumeException.Corrupt(Structure.FILE_TABLE, -1, "the file table is full ("
                    + layout.fileTableBlocks() + " blocks): make the volume with more file-table blocks");
            slots[i] = s;
            slotOwner[s] = e.id;
            slotIndex[s] = i;
        }
        for (int i = need; i < old; i++) {
            slotOwner[e.slots[i]] = 0;
            freeSlotHint = Math.min(freeSlotHint, e.slots[i]);
            dirty(layout.fileTableStart() + e.slots[i]);
        }
        e.slots = slots;
        e.firstLogical = first;
        int dirtyFrom = e.relayAll || need != old ? 0 : k;
        e.relayAll = false;
        for (int i = dirtyFrom; i < need; i++) dirty(layout.fileTableStart() + slots[i]);
    }

    /** The last slot whose first run starts at or below {@code logical}; 0 when none does. */
    private static int slotHolding(long[] firstLogical, long logical) {
        int lo = 0, hi = firstLogical.length - 1;
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (firstLogical[mid] <= logical) lo = mid;
            else hi = mid - 1;
        }
        return lo;
    }

    /** The lowest free slot; below the hint none is free (slots are freed only by a shrinking chain). */
    private int freeSlot() {
        for (int s = freeSlotHint; s < slotOwner.length; s++)
            if (slotOwner[s] == 0) {
                freeSlotHint = s + 1;
                return s;
            }
        return -1;
    }

    /**
     * Makes the bitmaps agree with the owners: a block owned by an entry is used, a used data block no one
     * owns is free (a preallocation or an allocation never acknowledged). Answers {leaks freed, owned set}.
     */
    public long[] reconcile() {
        return reconcile(ownedBitmaps(), 0, geometry.groups());
    }

    /**
     * As {@link #reconcile()}, for groups {@code [fromGroup, toGroup)} only, against {@code owned} (from
     * {@link #ownedBitmaps()}): a volume reconciles in steps, each small enough for one transaction.
     */
    public long[] reconcile(long[][] owned, int fromGroup, int toGroup) {
        long freed = 0, set = 0;
        for (int g = fromGroup; g < toGroup; g++) {
            int from = geometry.systemBlocks(g), to = geometry.groupBlocks(g);
            int group = g;
            long base = geometry.groupStart(g);
            long[] counts = {0, 0}; // freed, set
            forEachDifferingRun(owned[g], row(g), from, to, (i, end, o) -> {
                bitmapChanged(group, base + i, end - i, o);
                counts[o ? 1 : 0] += end - i;
            });
            freed += counts[0];
            set += counts[1];
        }
        return new long[] {freed, set};
    }

    /** A run {@code [from, end)} of a group's blocks where the bitmap disagrees with the owners. */
    interface DifferingRun {
        void run(int from, int end, boolean owned);
    }

    /**
     * Calls {@code run} for each run of bits in {@code [from, to)} where {@code have} (a bitmap) and
     * {@code owned} (the owners' bitmap) differ, in order: compared a word at a time, most words agreeing,
     * and each run wholly owned and marked free or wholly unowned and marked used (it ends where the bits
     * agree again or the owners' bit flips). {@code run} may change {@code have}; the runs were found first.
     */
    static void forEachDifferingRun(long[] owned, long[] have, int from, int to, DifferingRun run) {
        long[] differ = null;
        for (int w = from >>> 6; w <= (to - 1) >>> 6; w++) {
            long d = owned[w] ^ have[w];
            if (w == from >>> 6) d &= -1L << (from & 63);
            if (w == (to - 1) >>> 6 && (to & 63) != 0) d &= (1L << (to & 63)) - 1;
            if (d == 0) continue;
            if (differ == null) differ = new long[owned.length];
            differ[w] = d;
        }
        if (differ == null) return;
        for (int i = nextBit(differ, from, to, true); i < to; ) {
            boolean o = (owned[i >>> 6] & (1L << (i & 63))) != 0;
            int end = Math.min(nextBit(differ, i, to, false), nextBit(owned, i, to, !o));
            run.run(i, end, o);
            i = nextBit(differ, end, to, true);
        }
    }

    /**
     * One bitmap per group of the data blocks some entry owns. The groups no entry owns a block in share one
     * all-clear array (an 8 TiB volume has 65,536 groups of 4 KiB bitmaps): read the rows, never write them.
     */
    public long[][] ownedBitmaps() {
        long[] none = new long[geometry.blocksPerGroup() / 64];
        long[][] owned = new long[geometry.groups()][];
        Arrays.fill(owned, none);
        for (Entry e : entries.values())
            for (ExtentMap.Run r : e.map.runs()) {
                long b = Math.max(0, r.physical()), end = Math.min(geometry.totalBlocks(), r.physicalEnd());
                while (b < end) { // the run's part in each group it crosses, a word at a time
                    int g = geometry.groupOf(b);
                    long groupStart = geometry.groupStart(g);
                    int i = (int) (b - groupStart), stop = (int) Math.min(end - groupStart, geometry.groupBlocks(g));
                    if (owned[g] == none) owned[g] = new long[none.length];
                    setBits(owned[g], i, stop - i, true);
                    b = groupStart + stop;
                }
            }
        return owned;
    }


    /** Rewrites a group's bitmap from {@code want} (fsck --repair). */
    public void replaceBitmap(int group, long[] want) {
        System.arraycopy(want, 0, writableRow(group), 0, want.length);
        free[group] = countFree(group);
        dirtyGroup(group);
    }

    public long[] bitmapWords(int group) {
        return row(group).clone();
    }

    /** Marks every metadata block dirty (fsck --repair rewrites them all with fresh checksums). */
    public void dirtyAll() {
        // A bitmap never written has nothing on disk to rewrite: its descriptor block (below) says what it is.
        for (int g = 0; g < geometry.groups(); g++) if (!uninit[g]) dirtyGroup(g);
        for (int k = 0; k < layout.gdtBlocks(); k++) dirty(layout.gdtStart() + k);
        for (Entry e : entries.values()) {
            e.relayAll = true;
            changed(e);
        }
        for (int s = 0; s < slotOwner.length; s++) if (slotOwner[s] == 0) dirty(layout.fileTableStart() + s);
    }

    // ---- images ---------------------------------------------------------------------------------------

    /** The current content of metadata block {@code block}: a bitmap, descriptor or file-table block. */
    public byte[] image(long block) {
        byte[] b = new byte[layout.blockSize()];
        image(block, b, 0);
        return b;
    }

    /**
     * Writes the current content of metadata block {@code block} into {@code into[at, at + block size)}, which
     * holds zeros (the journal builds a transaction's images in place, in the buffer it writes).
     */
    public void image(long block, byte[] into, int at) {
        int bs = layout.blockSize();
        ByteBuffer o = ByteBuffer.wrap(into, at, bs).slice().order(java.nio.ByteOrder.LITTLE_ENDIAN);
        int g = geometry.groupOf(block);
        long rel = block - geometry.groupStart(g);
        if (rel >= 1 && rel <= layout.bitmapBlocks()) {
            int wordsPerBlock = bs / 8, from = (int) (rel - 1) * wordsPerBlock;
            long[] words = row(g);
            o.asLongBuffer().put(words, from, Math.max(0, Math.min(words.length, from + wordsPerBlock) - from));
            return;
        }
        if (block >= layout.gdtStart() && block < layout.fileTableStart()) {
            // A commit logs the whole block for the few groups that changed: only theirs are rebuilt.
            int k = (int) (block - layout.gdtStart());
            if (descriptorImages[k] == null) descriptorImages[k] = new byte[bs];
            byte[] cached = descriptorImages[k];
            ByteBuffer c = Layout.le(cached);
            for (int i = 0; i < layout.descriptorsPerBlock(); i++) {
                int group = k * layout.descriptorsPerBlock() + i;
                if (group >= geometry.groups()) break;
                if (descriptorCurrent[group]) continue;
                int off = i * Layout.DESCRIPTOR_BYTES;
                c.putLong(off, layout.bitmapBlock(group)).putInt(off + 8, (int) free[group])
                        .putInt(off + 12, uninit[group] ? FLAG_UNINIT : 0)
                        .putInt(off + 16, uninit[group] ? 0 : bitmapCrc(group));
                c.putInt(off + 28, Layout.crc(seed, group, cached, off, 28));
                descriptorCurrent[group] = true;
            }
            System.arraycopy(cached, 0, into, at, bs);
            return;
        }
        if (block >= layout.fileTableStart() && block < layout.journalStart()) {
            int slot = (int) (block - layout.fileTableStart());
            Entry e = entries.get(slotOwner[slot]);
            if (e == null) { // a free slot: the magic, entry id and kind 0, its checksum
                o.putInt(0, TABLE_MAGIC);
                o.putInt(4, Layout.crc(seed, block, into, at + 8, bs - 8));
                return;
            }
            int index = slotIndex[slot];
            int per = layout.extentsPerTableBlock();
            Iterator<ExtentMap.Run> runs = e.map.from(index == 0 ? Long.MIN_VALUE : e.firstLogical[index]);
            int n = 0;
            for (; n < per && runs.hasNext(); n++) {
                ExtentMap.Run r = runs.next();
                int off = Layout.TABLE_HEADER_BYTES + n * Layout.TABLE_EXTENT_BYTES;
                o.putLong(off, r.logical()).putLong(off + 8, r.physical()).putInt(off + 16, (int) r.blocks())
                        .putInt(off + 20, r.unwritten() ? 1 : 0);
            }
            byte[] name = e.name.getBytes(StandardCharsets.UTF_8);
            o.putInt(0, TABLE_MAGIC).putLong(8, e.id).putInt(16, e.kind).putInt(20, index).putInt(24, e.slots.length)
                    .putInt(28, n).putShort(32, (short) name.length);
            System.arraycopy(name, 0, into, at + 34, name.length);
            o.putInt(4, Layout.crc(seed, block, into, at + 8, bs - 8));
            return;
        }
        throw new IllegalArgumentException("block " + block + " is not a bitmap, descriptor or file-table block");
    }

    private byte[] bitmapScratch; // bitmapBytes' buffer: Metadata has one thread at a time (not thread-safe)

    /** Group {@code group}'s bitmap as bytes, in a buffer reused by the next call. */
    private byte[] bitmapBytes(int group) {
        if (bitmapScratch == null)
            bitmapScratch = new byte[Math.max(layout.bitmapBytes(), layout.bitmapBlocks() * layout.blockSize())];
        byte[] out = bitmapScratch;
        Layout.le(out).asLongBuffer().put(row(group));
        return out;
    }

    private int bitmapCrc(int group) {
        if (!bitmapCrcValid[group]) {
            bitmapCrc[group] = Layout.crc(seed, group, bitmapBytes(group), 0, layout.bitmapBytes());
            bitmapCrcValid[group] = true;
        }
        return bitmapCrc[group];
    }

    /** Every metadata block mkfs writes: all but the bitmaps of groups left unwritten. */
    public List<Long> allBlocks() {
        List<Long> out = new ArrayList<>();
        for (int g = 0; g < geometry.groups(); g++)
            if (!uninit[g]) for (int i = 0; i < layout.bitmapBlocks(); i++) out.add(layout.bitmapBlock(g) + i);
        for (int k = 0; k < layout.gdtBlocks(); k++) out.add(layout.gdtStart() + k);
        for (int s = 0; s < layout.fileTableBlocks(); s++) out.add(layout.fileTableStart() + s);
        return out;
    }
}
