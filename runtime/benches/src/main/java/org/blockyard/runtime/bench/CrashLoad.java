package org.blockyard.runtime.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.MapRequest;
import org.blockyard.runtime.config.BlockyardConfig;
import org.blockyard.runtime.volume.Volume;
import org.blockyard.runtime.volume.VolumeAllocator;

/**
 * The child process of {@code bench crash}: mixed load on a volume from several threads until it is killed.
 * Before each call it prints {@code GO <key> ...}, after the acknowledgement {@code ACK <key> ...}:
 * {@code MAP file logical physical blocks}, {@code MAPS file} and then {@code logical physical blocks} for each
 * run of a batch (getBlocks(file, List), or a small file written whole with writeFile: one line), {@code TRUNC
 * file from}, {@code DEL file} (a small file deleted), {@code EXT owner start blocks} (one line per extent),
 * {@code REL owner start blocks}. Arguments: IMAGE PREFIX WRITERS SEED.
 */
public final class CrashLoad {
    private CrashLoad() {}

    /** Small files each writer keeps writing whole, in turn. */
    private static final int SMALL_FILES = 16;

    public static void main(String[] args) throws Exception {
        Volume v = Volume.open(Path.of(args[0]), BlockyardConfig.load());
        String prefix = args[1];
        int writers = Integer.parseInt(args[2]);
        long seed = Long.parseLong(args[3]);
        for (int t = 0; t < writers; t++) {
            int id = t;
            Thread th = new Thread(() -> load(v.allocator(), prefix + "f" + id, prefix + "o" + id, new Random(seed * 31 + id)));
            th.setDaemon(true);
            th.start();
        }
        say("READY");
        Thread.sleep(Long.MAX_VALUE);
    }

    private static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    private static void load(VolumeAllocator a, String file, String owner, Random rnd) {
        try {
            a.open(file).toCompletableFuture().join();
            long next = 0;
            List<Extent> held = new ArrayList<>();
            long[] smallNext = new long[SMALL_FILES]; // each small file's end, appended to whole
            int small = 0;
            while (true) {
                int pick = rnd.nextInt(20);
                if (pick < 2 && next > 0) {
                    long from = rnd.nextLong(next);
                    say("GO " + file + " TRUNC " + from);
                    a.truncate(file, from).toCompletableFuture().join();
                    next = from;
                    say("ACK " + file + " TRUNC " + from);
                } else if (pick < 4) {
                    say("GO " + owner + " EXT");
                    List<Extent> got = a.allocate(owner, 1 + rnd.nextInt(16), 1, 0, -1).toCompletableFuture().join();
                    StringBuilder b = new StringBuilder("ACK " + owner + " EXT");
                    for (Extent e : got) b.append(' ').append(e.start()).append(' ').append(e.blocks());
                    say(b.toString());
                    held.addAll(got);
                } else if (pick < 6 && !held.isEmpty()) {
                    Extent e = held.remove(rnd.nextInt(held.size()));
                    say("GO " + owner + " REL " + e.start() + " " + e.blocks());
                    a.release(owner, List.of(e)).toCompletableFuture().join();
                    say("ACK " + owner + " REL " + e.start() + " " + e.blocks());
                } else if (pick == 9 && smallNext[small] > 0 && rnd.nextInt(4) == 0) {
                    // A small file deleted; the next writeFile of its name makes a new one.
                    String name = file + "w" + small;
                    say("GO " + name + " DEL");
                    a.delete(name).toCompletableFuture().join();
                    smallNext[small] = 0;
                    say("ACK " + name + " DEL");
                    small = (small + 1) % SMALL_FILES;
                } else if (pick == 9) {
                    // One of a few small files, opened, appended to and closed in one call (writeFile).
                    String name = file + "w" + small;
                    List<MapRequest> calls = new ArrayList<>();
                    int size = 1 + rnd.nextInt(8);
                    for (long l = smallNext[small]; calls.size() < size; l++) calls.add(MapRequest.allocate(l, 1));
                    say("GO " + name + " MAP " + smallNext[small]);
                    List<BlockRun> runs = a.writeFile(name, calls).toCompletableFuture().join();
                    StringBuilder b = new StringBuilder("ACK " + name + " MAPS");
                    for (BlockRun r : runs) {
                        b.append(' ').append(r.logicalStart()).append(' ').append(r.physicalStart())
                                .append(' ').append(r.blocks());
                        smallNext[small] = Math.max(smallNext[small], r.logicalStart() + r.blocks());
                    }
                    say(b.toString());
                    small = (small + 1) % SMALL_FILES;
                } else if (pick < 9) {
                    // A batch of appends from next on (a short run leaves a hole the file keeps).
                    List<MapRequest> batch = new ArrayList<>();
                    int size = 2 + rnd.nextInt(7);
                    for (long l = next; batch.size() < size; ) {
                        int want = 1 + rnd.nextInt(16);
                        batch.add(MapRequest.allocate(l, want));
                        l += want;
                    }
                    say("GO " + file + " MAP " + next);
                    List<BlockRun> runs = a.getBlocks(file, batch).toCompletableFuture().join();
                    StringBuilder b = new StringBuilder("ACK " + file + " MAPS");
                    for (BlockRun r : runs) {
                        b.append(' ').append(r.logicalStart()).append(' ').append(r.physicalStart()).append(' ').append(r.blocks());
                        next = Math.max(next, r.logicalStart() + r.blocks());
                    }
                    say(b.toString());
                } else {
                    int want = 1 + rnd.nextInt(16);
                    say("GO " + file + " MAP " + next);
                    BlockRun r = a.getBlocks(file, next, want, true).toCompletableFuture().join();
                    say("ACK " + file + " MAP " + next + " " + r.physicalStart() + " " + r.blocks());
                    next += r.blocks();
                }
            }
        } catch (RuntimeException e) {
            say("STOPPED " + file + " " + e);
        }
    }
}
