package org.blockyard.nbd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import com.typesafe.config.Config;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import org.blockyard.runtime.volume.Fsck;
import org.blockyard.runtime.volume.Layout;
import org.blockyard.runtime.volume.Volume;

/**
 * The crash promise with a real client: libnbd (python3-libnbd, what nbdsh runs) writes batches of 32 blocks
 * in flight, each batch followed by a FLUSH, to a server in a child JVM, which is killed with SIGKILL a random
 * moment after some flushes were answered; restarted on the same volume, every block reads as the last write
 * to it answered before an answered FLUSH or as a later write to it, never as bytes nobody wrote to it (a block
 * never flushed may read as zeros), and whole (no block mixes two writes). Twice, then a clean stop: fsck is
 * clean, the pool's free count moved by what the export maps, and a block
 * mapped that reads zeros is one a write cut short allocated, unwritten (not data).
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class CrashTest {
    private static final int BLOCK = 4096, BLOCKS = 2048, BATCH = 32, ROUNDS = 2;
    private static final String PYTHON = "/usr/bin/python3";
    private static final String SCRIPT = String.join("\n",
            "import nbd, struct, sys",
            "uri, plan, first = sys.argv[1], sys.argv[2], int(sys.argv[3])",
            "blocks = [int(l) for l in open(plan)]",
            "h = nbd.NBD()",
            "h.connect_uri(uri)",
            "print('CONNECTED', flush=True)",
            "for b in range(len(blocks) // " + BATCH + "):",
            "    bufs, cookies = [], []",
            "    for i in range(b * " + BATCH + ", (b + 1) * " + BATCH + "):",
            "        buf = nbd.Buffer.from_bytearray(bytearray(struct.pack('>QQ', blocks[i] + 1, first + i) * 256))",
            "        bufs.append(buf)",
            "        cookies.append(h.aio_pwrite(buf, blocks[i] * 4096))",
            "    while h.aio_in_flight() > 0:",
            "        h.poll(-1)",
            "    for c in cookies:",
            "        h.aio_command_completed(c)",
            "    h.flush()",
            "    print('FLUSHED', b + 1, flush=True)",
            "print('DONE', flush=True)",
            "");

    @TempDir
    Path dir;

    @Test
    void writesAnsweredBeforeAnAnsweredFlushSurviveSigkill() throws Exception {
        Tool.assumeInstalled("python3");
        org.junit.jupiter.api.Assumptions.assumeTrue(Tool.run(30, PYTHON, "-c", "import nbd").exit() == 0
                || System.getenv("CI") != null, "python3-libnbd is not installed");
        Config config = ChildServer.config();
        Path image = dir.resolve("vol.img"), log = dir.resolve("server.log"), script = dir.resolve("writer.py");
        Files.writeString(script, SCRIPT);
        Volume.mkfs(image, Layout.make(BLOCK, 8192, 1024, 64, 64, 0, 0));
        long freeBefore;
        try (ExportPool pool = ExportPool.open(image, config)) {
            pool.create("crash", (long) BLOCKS * BLOCK);
        }
        // Counted in a pool of its own: the one that wrote the export table holds a preallocation past its block.
        try (ExportPool pool = ExportPool.open(image, config)) {
            freeBefore = pool.freeBlocks();
        }
        Random rnd = new Random(28);
        long[] actual = new long[BLOCKS]; // the write each block holds (0: zeros), as last read
        long seq = 1;
        ChildServer server = ChildServer.start(image, log);
        try {
            for (int round = 0; round < ROUNDS; round++) {
                int writes = BATCH * 4000;
                int[] plan = new int[writes];
                for (int i = 0; i < writes; i++) plan[i] = rnd.nextInt(BLOCKS);
                Path planFile = dir.resolve("plan" + round);
                StringBuilder sb = new StringBuilder();
                for (int b : plan) sb.append(b).append('\n');
                Files.writeString(planFile, sb);
                int flushed = writeUntilKilled(server, planFile, seq, rnd);
                assertTrue(flushed >= 3, "some flushes were answered before the kill: " + flushed);
                server = ChildServer.start(image, log);
                check(server, actual, plan, flushed * BATCH, seq);
                seq += writes;
            }
            server.term();
            assertEquals(0, server.exitCode(150), "a SIGTERMed server exits 0");
        } finally {
            server.close();
        }
        Fsck.Result r = Fsck.check(image, false);
        assertTrue(r.clean(), r.report());
        try (ExportPool pool = ExportPool.open(image, config)) {
            ThinExport e = pool.find("crash");
            long withData = Arrays.stream(actual).filter(s -> s != 0).count(), mapped = pool.mappedBlocks(e);
            assertEquals(freeBefore - pool.freeBlocks(), mapped, "the pool's free count moved by what the export maps");
            assertTrue(mapped >= withData, "every block holding data is mapped: " + mapped + " < " + withData);
            for (int b = 0; b < BLOCKS; b++) // a block mapped by a write the kill cut short is allocated, unwritten
                if (actual[b] == 0) assertTrue(e.blockStatus((long) b * BLOCK, BLOCK, true).get(0)[1] != 0,
                        "a block reading zeros is a hole or unwritten, not data: " + b);
        }
    }

    /** Runs the writer until some flushes are answered, then SIGKILLs the server at a random moment; the flushes answered. */
    private int writeUntilKilled(ChildServer server, Path plan, long first, Random rnd) throws Exception {
        Process w = new ProcessBuilder(PYTHON, dir.resolve("writer.py").toString(), "nbd://127.0.0.1:" + server.port() + "/crash",
                plan.toString(), Long.toString(first)).redirectErrorStream(true).start();
        LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread pump = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(w.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) lines.add(line);
            } catch (java.io.IOException ended) {
                // the writer is gone
            }
            lines.add("END");
        });
        pump.setDaemon(true);
        pump.start();
        int flushed = 0;
        List<String> said = new ArrayList<>();
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90), killAt = Long.MAX_VALUE;
            while (System.nanoTime() < Math.min(deadline, killAt)) {
                String line = lines.poll(10, TimeUnit.MILLISECONDS);
                if (line == null) continue;
                said.add(line);
                if (line.startsWith("FLUSHED ")) flushed = Integer.parseInt(line.substring(8));
                else if (!line.equals("CONNECTED")) throw new AssertionError("the writer stopped before the kill: " + said);
                if (flushed == 3 && killAt == Long.MAX_VALUE) killAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50 + rnd.nextInt(500));
            }
            assertTrue(killAt != Long.MAX_VALUE, "the writer flushed three batches within 90 s: " + said);
            server.kill();
            // a FLUSH the writer saw answered before the kill is printed after it: take what it printed since
            if (!w.waitFor(30, TimeUnit.SECONDS)) throw new AssertionError("the writer did not end after the server's kill");
            pump.join(10_000);
            for (String line; (line = lines.poll()) != null; )
                if (line.startsWith("FLUSHED ")) flushed = Integer.parseInt(line.substring(8));
            return flushed;
        } finally {
            w.destroyForcibly();
        }
    }

    /**
     * Reads every block over NBD and checks it against what may be there after {@code plan} (writes numbered from
     * {@code first}, the first {@code durable} of them answered before an answered flush): the last durable write
     * to the block (any of its batch) or any later one, or, if no durable write touched it, what it held before
     * ({@code actual}) or any write to it. Updates {@code actual} to what was read. A block's bytes are one write's, whole.
     */
    private static void check(ChildServer server, long[] actual, int[] plan, int durable, long first) throws Exception {
        List<List<Long>> allowed = new ArrayList<>();
        int[] durableBatch = new int[BLOCKS];
        Arrays.fill(durableBatch, -1);
        for (int b = 0; b < BLOCKS; b++) allowed.add(new ArrayList<>(List.of(actual[b])));
        for (int i = 0; i < plan.length; i++) {
            List<Long> a = allowed.get(plan[i]);
            if (i < durable && durableBatch[plan[i]] != i / BATCH) { // writes of one batch are in flight together: any may win
                a.clear(); // a durable write: what was there before it may not come back
                durableBatch[plan[i]] = i / BATCH;
            }
            a.add(first + i);
        }
        try (RawClient c = new RawClient(server.port()).go("crash", false)) {
            int chunk = 256; // blocks a read
            for (int from = 0; from < BLOCKS; from += chunk) {
                c.request(Nbd.CMD_READ, 0, from, (long) from * BLOCK, (long) chunk * BLOCK, null);
                RawClient.Reply r = c.reply(chunk * BLOCK);
                assertEquals(0, r.error(), "read at block " + from);
                ByteBuffer data = ByteBuffer.wrap(r.data());
                for (int b = from; b < from + chunk; b++) {
                    long tag = data.getLong(b * BLOCK - from * BLOCK), s = data.getLong(b * BLOCK - from * BLOCK + 8);
                    for (int k = 0; k < BLOCK; k += 16)
                        assertTrue(data.getLong((b - from) * BLOCK + k) == tag && data.getLong((b - from) * BLOCK + k + 8) == s,
                                "block " + b + " is one write whole (at byte " + k + ")");
                    long got = tag == 0 && s == 0 ? 0 : s;
                    if (got != 0) assertEquals(b + 1, tag, "block " + b + " holds a write to another block");
                    assertTrue(allowed.get(b).contains(got), "block " + b + " reads write " + got + ", allowed " + allowed.get(b)
                            + " (durable writes: the first " + durable + " from " + first + ")");
                    actual[b] = got;
                }
            }
            c.request(Nbd.CMD_DISC, 0, 0, 0, 0, null);
        }
    }
}
