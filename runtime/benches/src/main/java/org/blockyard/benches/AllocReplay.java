package org.blockyard.benches;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Consumer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.typesafe.config.Config;

import org.blockyard.api.alloc.AllocationException;
import org.blockyard.api.alloc.BlockAllocator;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.runtime.alloc.ActorBlockAllocator;
import org.blockyard.runtime.alloc.AllocatorSettings;
import org.blockyard.runtime.alloc.BlockGroup;
import org.blockyard.runtime.alloc.GlobalLockAllocator;

/**
 * {@code ceph_test_alloc_replay replay_alloc} for the extent interface: a volume whose free space is a
 * BlueStore allocator dump ({@code ceph daemon osd.N bluestore allocator dump block}: {@code capacity},
 * {@code alloc_unit}, {@code extents} as hex {@code offset}/{@code length} in bytes), and a file of
 * allocation requests replayed against it one after another, each line {@code want unit [max] [hint]} in
 * bytes (decimal or {@code 0x} hex; max 0 = no limit, hint -1 or absent = none). Each request's duration
 * and fragment count are recorded; a request that finds no space is counted as such and the replay goes on.
 *
 * <p>The volume has this project's layout: groups of {@code blocks-per-group} blocks whose first blocks are
 * their system zone, so free space of the dump that falls in a system zone is left out (and counted).
 * Blocks are {@code alloc_unit} bytes when that is a power of two of at least 4 KiB, else 4 KiB.
 */
public final class AllocReplay {
    private AllocReplay() {}

    /** A free-space dump: capacity and unit in bytes, free extents in bytes, ascending. */
    public record Dump(long capacityBytes, long allocUnitBytes, List<long[]> freeBytes) {}

    /** One request, in bytes; {@code hint} -1 for none. */
    public record Request(long want, long unit, long max, long hint) {}

    private static final ObjectMapper JSON = new ObjectMapper();

    static long number(String s) {
        s = s == null ? "" : s.trim();
        if (s.startsWith("0x") || s.startsWith("0X")) return Long.parseUnsignedLong(s.substring(2), 16);
        return Long.parseLong(s);
    }

    public static Dump readDump(Path file) throws IOException {
        if (!Files.isRegularFile(file)) throw new BadOption("--dump", file, "no such file");
        JsonNode root;
        try {
            root = JSON.readTree(file.toFile());
        } catch (IOException e) {
            throw new IllegalArgumentException("--dump " + file + " is not JSON: " + e.getMessage().lines().findFirst().orElse(""));
        }
        if (root == null || !root.has("capacity") || !root.has("alloc_unit") || !root.has("extents"))
            throw new IllegalArgumentException("--dump " + file + ": expected a BlueStore allocator dump with capacity, "
                    + "alloc_unit and extents");
        long capacity = number(root.get("capacity").asText()), unit = number(root.get("alloc_unit").asText());
        if (capacity <= 0 || unit <= 0) throw new IllegalArgumentException("--dump " + file + ": capacity and alloc_unit must be positive");
        List<long[]> free = new ArrayList<>();
        long last = 0;
        for (JsonNode e : root.get("extents")) {
            long off = number(e.get("offset").asText()), len = number(e.get("length").asText());
            if (len <= 0 || off < last || off + len > capacity)
                throw new IllegalArgumentException("--dump " + file + ": extent 0x" + Long.toHexString(off) + "+0x"
                        + Long.toHexString(len) + " overlaps another, is not ascending or passes the capacity");
            free.add(new long[] {off, len});
            last = off + len;
        }
        return new Dump(capacity, unit, free);
    }

    public static List<Request> readRequests(Path file) throws IOException {
        if (!Files.isRegularFile(file)) throw new BadOption("--requests", file, "no such file");
        List<Request> out = new ArrayList<>();
        int n = 0;
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            n++;
            String t = line.strip();
            if (t.isEmpty() || t.startsWith("#")) continue;
            String[] f = t.split("\\s+");
            try {
                if (f.length < 2 || f.length > 4) throw new NumberFormatException("2 to 4 fields");
                long want = number(f[0]), unit = number(f[1]);
                long max = f.length > 2 ? number(f[2]) : 0, hint = f.length > 3 ? number(f[3]) : -1;
                if (want <= 0 || unit <= 0 || max < 0) throw new NumberFormatException("want and unit above 0, max 0 or more");
                out.add(new Request(want, unit, max, hint));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--requests " + file + " line " + n + ": '" + t
                        + "' is not 'want unit [max] [hint]' in bytes (" + e.getMessage() + ")");
            }
        }
        return out;
    }

    static int blockBytes(Dump d) {
        long u = d.allocUnitBytes();
        return u >= 4096 && u <= (1 << 20) && Long.bitCount(u) == 1 ? (int) u : 4096;
    }

    /** Replays {@code requests} against {@code dump} on {@code allocator} (actors, global-lock or group-locks); the row of figures. */
    public static Map<String, Object> run(Dump dump, List<Request> requests, String allocator, Config config,
                                          Consumer<String> perRequest) {
        int bs = blockBytes(dump);
        int bpg = config.getInt("blockyard.volume.blocks-per-group");
        long blocks = dump.capacityBytes() / bs;
        if (blocks < bpg) bpg = (int) Math.max(1024, Long.highestOneBit(blocks));
        Geometry g;
        try {
            g = Geometry.of(bs, blocks, bpg);
        } catch (IllegalArgumentException tooSmallALastGroup) {
            g = Geometry.of(bs, blocks / bpg * bpg, bpg); // the dump's last, partial group is left out
        }
        AllocatorSettings settings = AllocatorSettings.fromConfig(config, g.totalBlocks()).withGeometry(g)
                .withPolicy(BenchPolicies.byId("reservation", config, g));
        long[] lost = new long[1];
        Consumer<BlockGroup> prepare = group -> lost[0] += prepare(group, dump, bs);
        Map<String, Object> row = Report.row();
        row.put("workload", "replay");
        row.put("allocator", allocator);
        row.put("capacity_bytes", dump.capacityBytes());
        row.put("alloc_unit_bytes", dump.allocUnitBytes());
        row.put("block_size_bytes", bs);
        row.put("requests", requests.size());
        if (LockPeer.is(allocator)) {
            replay(LockPeer.open(allocator, g, settings.policy(), settings.preallocMinWindowBlocks(), prepare).api(),
                    requests, bs, row, perRequest);
        } else if (allocator.equals("actors")) {
            try (ActorBlockAllocator a = ActorBlockAllocator.start(settings, config, prepare)) {
                replay(a, requests, bs, row, perRequest);
            }
        } else {
            throw new IllegalArgumentException("--allocator must be actors, global-lock or group-locks, not " + allocator);
        }
        row.put("dump_free_in_system_zones_bytes", lost[0] * bs);
        return row;
    }

    /** Marks every data block of {@code group} used but the dump's free ones; answers free blocks left out. */
    static long prepare(BlockGroup group, Dump dump, int bs) {
        long from = group.firstDataBlock(), to = group.end(), used = from, leftOut = 0;
        for (long[] e : dump.freeBytes()) {
            long s = (e[0] + bs - 1) / bs, end = (e[0] + e[1]) / bs; // whole blocks only
            if (end <= group.start() || s >= to) continue;
            leftOut += Math.max(0, Math.min(end, from) - Math.max(s, group.start()));
            s = Math.max(s, from);
            end = Math.min(end, to);
            if (s >= end) continue;
            if (s > used) group.markUsed(used, (int) (s - used));
            used = Math.max(used, end);
        }
        if (to > used) group.markUsed(used, (int) (to - used));
        return leftOut;
    }

    private static void replay(BlockAllocator a, List<Request> requests, int bs, Map<String, Object> row,
                               Consumer<String> perRequest) {
        Latency latency = new Latency();
        long served = 0, noSpace = 0, split = 0, fragments = 0, blocksGot = 0;
        long t0 = System.nanoTime();
        for (int i = 0; i < requests.size(); i++) {
            Request r = requests.get(i);
            int unit = (int) Math.max(1, r.unit() / bs);
            long want = Math.max(unit, (r.want() + (long) unit * bs - 1) / ((long) unit * bs) * unit);
            long max = r.max() == 0 ? 0 : Math.max(unit, r.max() / bs / unit * unit);
            long hint = r.hint() < 0 ? -1 : r.hint() / bs;
            long s = System.nanoTime();
            List<Extent> got;
            try {
                got = a.allocate(want, unit, max, hint).toCompletableFuture().join();
            } catch (java.util.concurrent.CompletionException e) {
                if (!(e.getCause() instanceof AllocationException.NoSpace)) throw e;
                got = List.of();
                noSpace++;
            }
            long us = (System.nanoTime() - s) / 1000;
            latency.record(System.nanoTime() - s);
            long b = 0;
            for (Extent e : got) b += e.blocks();
            if (!got.isEmpty()) served++;
            if (got.size() > 1) split++;
            fragments += got.size();
            blocksGot += b;
            perRequest.accept(i + " want 0x" + Long.toHexString(r.want()) + " unit 0x" + Long.toHexString(r.unit())
                    + " -> " + got.size() + " extents, " + b * bs + " bytes, " + us + " us");
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        latency.correctClosedLoop(System.nanoTime() - t0, 1);
        row.put("served", served);
        row.put("no_space", noSpace);
        row.put("split_fraction", served == 0 ? 0.0 : (double) split / served);
        row.put("extents_per_split_alloc", split == 0 ? 0.0 : (double) (fragments - (served - split)) / split);
        row.put("fragments", fragments);
        row.put("bytes_allocated", blocksGot * bs);
        row.put("allocs_per_s", requests.size() / seconds);
        row.put("alloc_latency_us", latency.summaryMicros());
        row.put("fragmentation_score_after", Math.round(a.fragmentationScore().toCompletableFuture().join() * 10000) / 10000.0);
        row.put("free_extent_histogram", FreeExtentHistogram.of(new BlockAllocatorAdapter(a, null), bs));
    }

    /**
     * Writes a dump of an aged volume and a request file for it, both made by this project: a volume of
     * {@code bytes} filled to about {@code fill} by random 4 KiB–64 KiB allocations, then a random third of
     * them released; requests of 4 KiB to 2 MiB in 4 KiB units.
     */
    public static void makeSample(Path dump, Path requests, long bytes, double fill, int requestCount, long seed)
            throws IOException {
        int bs = 4096;
        Geometry g = Geometry.of(bs, bytes / bs / 8192 * 8192, 8192);
        GlobalLockAllocator a = new GlobalLockAllocator(g, org.blockyard.runtime.alloc.ReservationPolicy.extended());
        Random rnd = new Random(seed);
        List<List<Extent>> objects = new ArrayList<>();
        long target = (long) (g.dataBlocks() * fill);
        for (long used = 0; used < target; ) {
            List<Extent> got = a.allocate(1 + rnd.nextInt(16), 1, 0, -1).toCompletableFuture().join();
            objects.add(got);
            for (Extent e : got) used += e.blocks();
        }
        for (List<Extent> o : objects) if (rnd.nextInt(3) == 0) a.release(o).toCompletableFuture().join();
        ObjectNode root = JSON.createObjectNode();
        root.put("alloc_name", "block");
        root.put("alloc_type", "blockyard");
        root.put("alloc_unit", bs);
        root.put("capacity", g.totalBlocks() * bs);
        ArrayNode ext = root.putArray("extents");
        new BlockAllocatorAdapter(a, null).forEachFree(e -> {
            ObjectNode n = ext.addObject();
            n.put("offset", "0x" + Long.toHexString(e.start() * bs));
            n.put("length", "0x" + Long.toHexString(e.blocks() * bs));
        });
        Files.writeString(dump, JSON.writerWithDefaultPrettyPrinter().writeValueAsString(root) + "\n");
        StringBuilder lines = new StringBuilder("# want unit [max] [hint], in bytes: four in five requests of 4 KiB to 64 KiB,\n"
                + "# one in five of 4 KiB to 2 MiB (Ceph's two churn shapes), in 4 KiB units; every fourth at most 64 KiB an extent\n");
        for (int i = 0; i < requestCount; i++) {
            long want = (1 + rnd.nextInt(rnd.nextInt(5) == 0 ? 512 : 16)) * 4096L;
            lines.append("0x").append(Long.toHexString(want)).append(" 0x1000");
            if (i % 4 == 0) lines.append(" 0x10000");
            lines.append('\n');
        }
        Files.writeString(requests, lines.toString());
    }
}
