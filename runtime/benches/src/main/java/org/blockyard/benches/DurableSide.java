package org.blockyard.benches;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Function;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import com.typesafe.config.Config;

import org.blockyard.api.alloc.Geometry;
import org.blockyard.runtime.alloc.AllocatorSettings;
import org.blockyard.runtime.alloc.BlockGroup;
import org.blockyard.runtime.alloc.Reply;
import org.blockyard.runtime.volume.Journal;
import org.blockyard.runtime.volume.Metadata;
import org.blockyard.runtime.volume.Volume;

/**
 * The durable side of an allocator benchmark given {@code --volume IMAGE}: the volume as found before the run
 * (its geometry and used blocks, so the in-memory run starts from the same state), the volume opened with the
 * benchmark's policy, and the journal's counts around the durable run. Each durable run adds its files to
 * the volume under a name of its own.
 */
final class DurableSide {
    private final Path image;
    private final Metadata before;
    /** Prefix of this run's file names on the volume. */
    final String prefix = "/run-" + Long.toString(System.nanoTime() & 0xFFFFFF, 36);

    private DurableSide(Path image) {
        this.image = image;
        this.before = Volume.inspect(image);
    }

    /** The volume in {@code image} as it is now; {@code option} names it in errors. */
    static DurableSide of(String option, Path image) {
        if (!Files.isRegularFile(image) && !image.toString().startsWith("/dev/"))
            throw new BadOption(option, image, "must be a volume made by mkfs");
        return new DurableSide(image);
    }

    Geometry geometry() {
        return before.geometry;
    }

    long freeBlocks() {
        return before.freeBlocks();
    }

    /**
     * Refuses a run of {@code files} new files that the volume's file table cannot hold (each takes at least one
     * of its blocks, and a reserve is kept for the entries' growth): the files past it would be refused.
     */
    void requireTableRoom(long files) {
        int used = 0;
        for (Metadata.Entry e : before.entries()) used += e.slots().size();
        int reserve = before.layout.fileTableGrowthReserve();
        long free = before.layout.fileTableBlocks() - reserve - used;
        if (files > free) {
            long need = used + files;
            throw new IllegalArgumentException("the volume's file table has room for " + Math.max(0, free)
                    + " new files (each takes one of its blocks; " + reserve + " are kept for growth); " + files
                    + " files need a volume made with mkfs --file-table-blocks " + (need + Math.max(1, (need + 14) / 15))
                    + " or more");
        }
    }

    boolean isUsed(long block) {
        return before.isUsed(block);
    }

    /** The in-memory allocator's settings: the volume's geometry, {@code policy}. */
    AllocatorSettings memorySettings(Config config, String policy) {
        Geometry g = geometry();
        return AllocatorSettings.fromConfig(config, g.totalBlocks()).withGeometry(g)
                .withPolicy(BenchPolicies.byId(policy, config, g));
    }

    /** Marks the blocks the volume had in use in {@code group} of an in-memory allocator. */
    void markUsed(BlockGroup group) {
        before.forEachUsedDataRun(group.group(), group::markUsed);
    }

    /** Opens the volume with {@code policy}; {@code memoryOnly} as in {@link Volume#open}. */
    Volume open(Config config, String policy, Consumer<BlockGroup> memoryOnly) {
        Volume v = Volume.open(image, config, Volume.settingsFrom(config), memoryOnly);
        try {
            BenchPolicies.registerWith(v.actors(), config);
            v.actors().setPolicy(policy).toCompletableFuture().join();
            return v;
        } catch (RuntimeException e) {
            v.close();
            throw e;
        }
    }

    /** How an actor client on {@code v} gets its replies: through {@link Volume#allocator()}'s acknowledgement. */
    static Function<ActorRef<Reply<?>>, Behavior<Object>> acknowledging(Volume v, String file) {
        return replyTo -> v.allocator().acknowledging(file, replyTo);
    }

    /** The columns {@link #put} fills, for a table; none when no row has them (a run in memory only). */
    static List<String> columns(List<Map<String, Object>> rows, String unit) {
        if (rows.stream().noneMatch(r -> r.containsKey("durable_vs_memory"))) return List.of();
        return List.of("durable_" + unit + "_per_s", "durable_vs_memory", "forces_per_" + unit.replaceAll("s$", ""),
                "records_per_transaction", "force_ms", "device_flush_ms");
    }

    /**
     * The durable figures of a run beside the in-memory ones: {@code unit} names what was acknowledged
     * ({@code calls}, {@code allocs}); rates per second; the journal's forces and records between {@code s0} and
     * {@code s1}, and the force's time with the device's part of it.
     */
    static void put(Map<String, Object> row, String unit, long acknowledged, double memoryPerSecond,
                    double durablePerSecond, Journal.Stats s0, Journal.Stats s1) {
        long forces = s1.forces() - s0.forces(), transactions = s1.transactions() - s0.transactions();
        row.put("durable_" + unit + "_per_s", durablePerSecond);
        row.put("durable_vs_memory", durablePerSecond / memoryPerSecond);
        row.put("forces", forces);
        row.put("transactions", transactions);
        row.put("forces_per_" + unit.replaceAll("s$", ""), (double) forces / Math.max(1, acknowledged));
        row.put("records_per_transaction", (double) (s1.records() - s0.records()) / Math.max(1, transactions));
        row.put("logged_blocks", s1.loggedBlocks() - s0.loggedBlocks());
        row.put("checkpoints", s1.checkpoints() - s0.checkpoints());
        row.put("home_writes", s1.homeWrites() - s0.homeWrites());
        row.put("home_steps", s1.homeSteps() - s0.homeSteps());
        row.put("force_ms", (s1.barrierNanos() - s0.barrierNanos()) / 1e6 / Math.max(1, forces));
        row.put("device_flush_ms", (s1.flushNanos() - s0.flushNanos()) / 1e6 / Math.max(1, forces));
    }
}
