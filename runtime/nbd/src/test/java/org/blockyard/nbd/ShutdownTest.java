package org.blockyard.nbd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import com.typesafe.config.Config;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import org.blockyard.runtime.volume.Fsck;
import org.blockyard.runtime.volume.Layout;
import org.blockyard.runtime.volume.Volume;

/**
 * SIGTERM to a server in a child JVM while a raw client streams writes (and a FLUSH now and then) at it: every
 * request is answered, with its result or ESHUTDOWN (the client sends all of them within the server's grace of
 * {@link NbdServer#STOP_GRACE_MILLIS}); a write answered 0 is in the volume, one answered ESHUTDOWN left its block as it was (zeros);
 * a new connection is refused once the stop began, an idle connection is closed; the process exits 0 within a
 * bound and the volume is clean.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ShutdownTest {
    private static final int SLOT = 4096, SLOTS = 8192, FLUSH_EVERY = 1000;

    @TempDir
    Path dir;

    private static byte[] pattern(int i) {
        byte[] b = new byte[SLOT];
        java.util.Arrays.fill(b, (byte) (i * 31 + 7));
        ByteBuffer.wrap(b).putLong(0, i + 1L);
        return b;
    }

    @Test
    void sigtermAnswersEveryRequestReadRefusesNewConnectionsAndExitsZeroClean() throws Exception {
        Config config = ChildServer.config();
        Path image = dir.resolve("vol.img"), log = dir.resolve("server.log");
        Volume.mkfs(image, Layout.make(4096, 24576, 1024, 64, 64, 0, 0));
        try (ExportPool pool = ExportPool.open(image, config)) {
            pool.create("s", (long) SLOTS * SLOT);
        }
        Map<Long, Integer> answers = new ConcurrentHashMap<>();
        AtomicInteger sent = new AtomicInteger();
        long stopAsked;
        try (ChildServer server = ChildServer.start(image, log);
             RawClient idle = new RawClient(server.port()).go("s", false);
             RawClient c = new RawClient(server.port()).go("s", false)) {
            Thread sender = new Thread(() -> {
                try {
                    for (int i = 0; i < SLOTS; i++) {
                        sent.incrementAndGet(); // before the request: its reply may come before this thread goes on
                        if (i % FLUSH_EVERY == FLUSH_EVERY - 1) c.request(Nbd.CMD_FLUSH, 0, i, 0, 0, null);
                        else c.request(Nbd.CMD_WRITE, 0, i, (long) i * SLOT, SLOT, pattern(i));
                    }
                } catch (java.io.IOException stopped) {
                    // the server shut its input: what it read is answered, the rest is not
                }
            }, "shutdown-test-sender");
            sender.setDaemon(true);
            sender.start();
            int firstShutdown = -1;
            stopAsked = -1;
            while (true) {
                RawClient.Reply r;
                try {
                    r = c.reply(0);
                } catch (java.util.concurrent.ExecutionException closed) {
                    break; // the server closed the connection once everything read was answered
                }
                assertTrue(r.cookie() >= 0 && r.cookie() < sent.get(), "a reply to a request sent: " + r.cookie());
                assertTrue(answers.put(r.cookie(), r.error()) == null, "one reply per request: " + r.cookie());
                assertTrue(r.error() == 0 || r.error() == Nbd.ESHUTDOWN, "a result or ESHUTDOWN, not " + r.error());
                if (answers.size() == 200 && stopAsked < 0) {
                    stopAsked = System.nanoTime();
                    server.term();
                }
                if (r.error() == Nbd.ESHUTDOWN && firstShutdown < 0) {
                    firstShutdown = (int) r.cookie();
                    assertThrows(ConnectException.class, () -> SocketChannel.open(new InetSocketAddress("127.0.0.1", server.port())),
                            "a new connection is refused once the stop began");
                }
            }
            assertTrue(firstShutdown >= 0, "the stop came while requests were coming: " + answers.size() + " answered");
            assertTrue(idle.closedByServer(), "an idle connection is closed");
            assertEquals(0, server.exitCode(60), "exit code 0 after SIGTERM");
            double seconds = (System.nanoTime() - stopAsked) / 1e9;
            assertTrue(seconds < NbdServer.STOP_GRACE_MILLIS / 1000.0 + 30, "stopped within a bound: " + seconds + " s");
            sender.join(10_000);
        }
        int answered = answers.size();
        assertEquals(SLOTS, sent.get(), "the client sent everything (the server read on in its grace)");
        assertEquals(SLOTS, answered, "every request sent in the grace after the stop is answered");
        long ok = answers.values().stream().filter(e -> e == 0).count();
        assertTrue(ok >= 200 && ok < answered, "some results, some ESHUTDOWN: " + ok + " of " + answered);
        Fsck.Result check = Fsck.check(image, false);
        assertTrue(check.clean(), check.report());
        try (ExportPool pool = ExportPool.open(image, config)) {
            ThinExport e = pool.find("s");
            byte[] zeros = new byte[SLOT];
            for (int i = 0; i < SLOTS; i++) {
                if (i % FLUSH_EVERY == FLUSH_EVERY - 1) continue;
                Integer error = answers.get((long) i);
                byte[] want = error != null && error == 0 ? pattern(i) : zeros;
                assertArrayEquals(want, e.read((long) i * SLOT, SLOT), "slot " + i + " answered " + error);
            }
        }
    }
}
