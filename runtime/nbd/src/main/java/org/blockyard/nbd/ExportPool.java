package org.blockyard.nbd;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.typesafe.config.Config;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.BlockAllocator;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.runtime.alloc.AllocatorSettings;
import org.blockyard.runtime.alloc.FileState;
import org.blockyard.runtime.io.IoSettings;
import org.blockyard.runtime.io.MemoryDevice;
import org.blockyard.runtime.store.FileStore;
import org.blockyard.runtime.volume.Volume;

/**
 * The exports of one pool: a durable volume, or memory. Each export is the volume file {@code nbd/NAME}; the
 * names and sizes are the volume file {@value #TABLE_FILE}, the export table (the file table keeps names and
 * maps, not sizes), so they persist with the volume and its journal. An in-memory pool keeps its table in
 * memory.
 *
 * <p>The table file is UTF-8 text, whole blocks padded with zero bytes: a first line
 * {@code blockyard-nbd-exports 1}, then one line per export, {@code SIZE_BYTES TAB NAME}. It is rewritten whole
 * and flushed on every change, and only {@code export create} and {@code export delete} change it, on a volume
 * no server holds (the volume's lock says so), so a change never meets an open connection.
 *
 * <p>Export names are 1 to {@value #MAX_NAME_BYTES} bytes of UTF-8 without control characters. Sizes are whole
 * blocks, at most {@link FileState#MAX_LOGICAL_BLOCKS} blocks (the largest logical block a file may have).
 */
public final class ExportPool implements AutoCloseable {
    public static final String TABLE_FILE = "nbd.exports";
    static final String FILE_PREFIX = "nbd/";
    public static final int MAX_NAME_BYTES = 200;
    private static final String HEADER = "blockyard-nbd-exports 1";

    private final Volume volume; // null for memory
    private final FileStore store;
    private final BlockAllocator files;
    private final Map<String, ThinExport> exports = new LinkedHashMap<>();
    private final List<String> opened = new ArrayList<>();

    private ExportPool(Volume volume, FileStore store, BlockAllocator files) {
        this.volume = volume;
        this.store = store;
        this.files = files;
    }

    /** The exports of the volume in {@code image} (opened, so locked, until {@link #close}). */
    public static ExportPool open(Path image, Config config) {
        Volume v = Volume.open(image, config);
        ExportPool pool = new ExportPool(v, v.fileStore(), v.allocator());
        try {
            pool.openFile(TABLE_FILE);
            for (Map.Entry<String, Long> e : pool.readTable().entrySet()) pool.add(e.getKey(), e.getValue());
            return pool;
        } catch (RuntimeException e) {
            pool.close();
            throw e;
        }
    }

    /** A pool of {@code poolBytes} in memory with one export, {@code exportName}, as large as the pool. */
    public static ExportPool memory(Config config, long poolBytes, String exportName) {
        int blockBytes = config.getInt("blockyard.volume.block-size");
        int perGroup = config.getInt("blockyard.volume.blocks-per-group");
        long blocks = Math.max(perGroup, poolBytes / blockBytes / perGroup * perGroup);
        AllocatorSettings base = AllocatorSettings.fromConfig(config, blocks);
        Geometry g = base.geometry();
        FileStore store = FileStore.start(base, IoSettings.fromConfig(config), new MemoryDevice(g.bytes()), config);
        ExportPool pool = new ExportPool(null, store, store.allocator());
        pool.add(exportName, blocks * blockBytes);
        return pool;
    }

    public int blockBytes() {
        return files.geometry().blockSizeBytes();
    }

    /** The exports, in the order they were created. */
    public synchronized List<ThinExport> exports() {
        return List.copyOf(exports.values());
    }

    /** The export of that name, or null. */
    public synchronized ThinExport find(String name) {
        return exports.get(name);
    }

    /** Blocks of the pool not allocated. */
    public long freeBlocks() {
        return ThinExport.await(files.freeBlocks());
    }

    /** Blocks the export holds (its file's mapped blocks). */
    public long mappedBlocks(ThinExport e) {
        long n = 0;
        for (org.blockyard.api.alloc.Extent x : extents(e)) n += x.blocks();
        return n;
    }

    /** The physical extents of the export's file, in logical order. */
    public List<org.blockyard.api.alloc.Extent> extents(ThinExport e) {
        return List.copyOf(ThinExport.await(files.fileExtents(e.file())));
    }

    /** The pool's geometry (block size, groups). */
    public Geometry geometry() {
        return files.geometry();
    }

    /** A new empty export; refused (nothing changed) for a bad or taken name or a size the format cannot hold. */
    public synchronized ThinExport create(String name, long sizeBytes) {
        checkName(name);
        if (exports.containsKey(name)) throw new IllegalArgumentException("export " + name + " exists already");
        int bs = blockBytes();
        if (sizeBytes <= 0 || sizeBytes % bs != 0)
            throw new IllegalArgumentException("an export's size is a positive whole number of " + bs
                    + "-byte blocks, not " + sizeBytes + " bytes");
        if (sizeBytes / bs > FileState.MAX_LOGICAL_BLOCKS)
            throw new IllegalArgumentException("an export holds at most " + FileState.MAX_LOGICAL_BLOCKS + " blocks ("
                    + FileState.MAX_LOGICAL_BLOCKS * bs + " bytes), not " + sizeBytes + " bytes");
        ThinExport e = add(name, sizeBytes);
        try {
            writeTable();
        } catch (RuntimeException failed) {
            exports.remove(name);
            throw failed;
        }
        return e;
    }

    /** Deletes the export and frees its blocks; refused for a name that is no export. */
    public synchronized void delete(String name) {
        ThinExport e = exports.get(name);
        if (e == null) throw new IllegalArgumentException("no export named " + name);
        exports.remove(name);
        writeTable();
        ThinExport.await(files.close(e.file()));
        opened.remove(e.file());
        try {
            ThinExport.await(files.delete(e.file()));
        } catch (NbdError unknown) {
            // never written: the file was only opened, and delete found nothing to free
        }
    }

    static void checkName(String name) {
        if (name == null || name.isEmpty()) throw new IllegalArgumentException("an export needs a name");
        if (name.getBytes(StandardCharsets.UTF_8).length > MAX_NAME_BYTES)
            throw new IllegalArgumentException("an export's name is at most " + MAX_NAME_BYTES + " bytes: " + name);
        for (int i = 0; i < name.length(); i++)
            if (Character.isISOControl(name.charAt(i)))
                throw new IllegalArgumentException("an export's name has no control characters");
    }

    private ThinExport add(String name, long sizeBytes) {
        String file = FILE_PREFIX + name;
        openFile(file);
        ThinExport e = new ThinExport(name, file, sizeBytes, store, files);
        exports.put(name, e);
        return e;
    }

    private void openFile(String file) {
        ThinExport.await(files.open(file));
        opened.add(file);
    }

    private Map<String, Long> readTable() {
        Map<String, Long> out = new LinkedHashMap<>();
        int bs = blockBytes();
        byte[] first = ThinExport.await(store.read(TABLE_FILE, 0, bs)).array();
        if (first[0] == 0) return out; // a volume without exports yet
        StringBuilder text = new StringBuilder();
        for (long at = 0; ; at += bs) {
            byte[] b = at == 0 ? first : ThinExport.await(store.read(TABLE_FILE, at, bs)).array();
            int n = 0;
            while (n < b.length && b[n] != 0) n++;
            text.append(new String(b, 0, n, StandardCharsets.UTF_8));
            if (n < b.length) break;
        }
        String[] lines = text.toString().split("\n");
        if (!lines[0].equals(HEADER))
            throw new IllegalArgumentException("the volume's " + TABLE_FILE + " is not an export table: " + lines[0]);
        for (int i = 1; i < lines.length; i++) {
            int tab = lines[i].indexOf('\t');
            if (tab < 0) throw new IllegalArgumentException("the volume's export table has a bad line " + i);
            out.put(lines[i].substring(tab + 1), Long.parseLong(lines[i].substring(0, tab)));
        }
        return out;
    }

    private void writeTable() {
        if (volume == null) return;
        StringBuilder text = new StringBuilder(HEADER).append('\n');
        for (ThinExport e : exports.values()) text.append(e.sizeBytes()).append('\t').append(e.name()).append('\n');
        byte[] bytes = text.toString().getBytes(StandardCharsets.UTF_8);
        int bs = blockBytes();
        byte[] padded = new byte[(bytes.length / bs + 1) * bs]; // at least one zero byte ends the text
        System.arraycopy(bytes, 0, padded, 0, bytes.length);
        ThinExport.await(store.write(TABLE_FILE, 0, ByteBuffer.wrap(padded)));
        ThinExport.await(store.truncate(TABLE_FILE, padded.length));
        ThinExport.await(store.flush(TABLE_FILE));
    }

    /** Closes the exports' files and the volume (which makes everything durable), or the memory pool. */
    @Override
    public synchronized void close() {
        try {
            for (String f : opened) {
                try {
                    ThinExport.await(files.close(f));
                } catch (NbdError | AllocationException ignored) {
                    // the volume's close below settles every file
                }
            }
            opened.clear();
        } finally {
            if (volume != null) volume.close();
            else store.close();
        }
    }
}
