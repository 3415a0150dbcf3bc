package org.blockyard.runtime.volume;

import java.nio.file.Path;
import java.util.List;
import java.util.Random;

import org.blockyard.api.alloc.BlockRun;
import org.blockyard.api.alloc.Extent;

/**
 * The child of {@link ChildJvmCrashTest}: opens a volume and runs mixed load on it from three threads until it
 * is killed, printing "GO ..." before each call and "ACK ..." once the call is acknowledged (durable).
 * Lines: {@code GO|ACK MAP file logical physical blocks}, {@code GO|ACK TRUNC file from},
 * {@code GO|ACK EXT owner start blocks}.
 */
public final class CrashChild {
    public static void main(String[] args) throws Exception {
        Volume v = Volumes.open(Path.of(args[0]));
        VolumeAllocator a = v.allocator();
        for (int t = 0; t < 3; t++) {
            int id = t;
            Thread th = new Thread(() -> load(a, id));
            th.setDaemon(true);
            th.start();
        }
        Thread.sleep(Long.MAX_VALUE);
    }

    private static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    private static void load(VolumeAllocator a, int id) {
        String file = "f" + id, owner = "o" + id;
        Random rnd = new Random(id);
        Volumes.join(a.open(file));
        long next = 0;
        for (int op = 0; ; op++) {
            if (op % 11 == 10 && next > 0) {
                long from = next / 2;
                say("GO TRUNC " + file + " " + from);
                Volumes.join(a.truncate(file, from));
                next = from;
                say("ACK TRUNC " + file + " " + from);
            } else if (op % 7 == 6) {
                say("GO EXT " + owner);
                List<Extent> got = Volumes.join(a.allocate(owner, 1 + rnd.nextInt(8), 1, 0, -1));
                for (Extent e : got) say("ACK EXT " + owner + " " + e.start() + " " + e.blocks());
            } else {
                int want = 1 + rnd.nextInt(8);
                say("GO MAP " + file + " " + next);
                BlockRun r = Volumes.join(a.getBlocks(file, next, want, true));
                say("ACK MAP " + file + " " + next + " " + r.physicalStart() + " " + r.blocks());
                next += r.blocks();
            }
        }
    }
}
