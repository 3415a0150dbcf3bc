package org.blockyard.nbd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.blockyard.runtime.config.BlockyardConfig;

/** The server's answers to what real clients never send: bad requests get the protocol's error, nothing changes. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NbdProtocolTest {
    /** 1,024-block groups of 4 KiB: a pool of a few MiB fills in a moment. */
    private static final Config SMALL = ConfigFactory.parseString(
            "blockyard.volume { blocks-per-group = 1024, journal-blocks = 64 }").withFallback(BlockyardConfig.load());

    private ExportPool pool;
    private NbdServer server;

    private RawClient start(long poolBytes, boolean structured) throws Exception {
        pool = ExportPool.memory(SMALL, poolBytes, "default");
        server = NbdServer.listen(pool, new InetSocketAddress("127.0.0.1", 0));
        return new RawClient(server.port()).go("default", structured);
    }

    @AfterEach
    void stop() {
        if (server != null) server.close();
        if (pool != null) pool.close();
    }

    private static byte[] pattern(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) b[i] = (byte) (i * 31 + seed);
        return b;
    }

    @Test
    void unknownOptionsAreUnsupportedAndTheHagglingGoesOn() throws Exception {
        pool = ExportPool.memory(SMALL, 8 << 20, "default");
        server = NbdServer.listen(pool, new InetSocketAddress("127.0.0.1", 0));
        try (RawClient c = new RawClient(server.port())) {
            c.read(18);
            c.send(java.nio.ByteBuffer.allocate(4).putInt(Nbd.FLAG_FIXED_NEWSTYLE).flip());
            c.option(11, new byte[0]); // EXTENDED_HEADERS
            c.expectOptionReply(Nbd.REP_ERR_UNSUP);
            c.option(5, new byte[0]); // STARTTLS
            c.expectOptionReply(Nbd.REP_ERR_UNSUP);
            c.option(Nbd.OPT_GO, java.nio.ByteBuffer.allocate(9).putInt(3).put("nop".getBytes()).putShort((short) 0).array());
            c.expectOptionReply(Nbd.REP_ERR_UNKNOWN);
            c.option(Nbd.OPT_LIST, new byte[0]);
            assertEquals(Nbd.REP_SERVER, c.optionReply().getInt(12));
            c.expectOptionReply(Nbd.REP_ACK);
            c.option(Nbd.OPT_GO, java.nio.ByteBuffer.allocate(6).putInt(0).putShort((short) 0).array());
            assertEquals(Nbd.REP_INFO, c.optionReply().getInt(12), "the empty name is the default export");
        }
    }

    @Test
    void badRequestsGetTheProtocolsErrorAndChangeNothing() throws Exception {
        try (RawClient c = start(8 << 20, true)) {
            byte[] data = pattern(8192, 5);
            c.request(Nbd.CMD_WRITE, 0, 1, 4096, data.length, data);
            assertEquals(0, c.reply(0).error());
            long size = c.size;
            c.request(9, 0, 2, 0, 512, null);
            assertEquals(Nbd.EINVAL, c.reply(0).error(), "unknown command");
            c.request(Nbd.CMD_READ, 0x40, 3, 0, 512, null);
            assertEquals(Nbd.EINVAL, c.reply(0).error(), "unknown flag");
            c.request(Nbd.CMD_READ, 0, 4, size - 512, 1024, null);
            assertEquals(Nbd.EINVAL, c.reply(0).error(), "read past the end");
            c.request(Nbd.CMD_TRIM, 0, 5, size, 4096, null);
            assertEquals(Nbd.EINVAL, c.reply(0).error(), "trim past the end");
            c.request(Nbd.CMD_WRITE, 0, 6, size - 512, 1024, new byte[1024]);
            assertEquals(Nbd.ENOSPC, c.reply(0).error(), "write past the end");
            c.request(Nbd.CMD_READ, 0, 7, 0, NbdServer.MAX_PAYLOAD_BYTES + 1L, null);
            assertEquals(Nbd.EINVAL, c.reply(0).error(), "read over the maximum payload");
            byte[] big = new byte[NbdServer.MAX_PAYLOAD_BYTES + 4096];
            Arrays.fill(big, (byte) 0x77);
            c.request(Nbd.CMD_WRITE, 0, 8, 0, big.length, big);
            assertEquals(Nbd.EINVAL, c.reply(0).error(), "write over the maximum payload");
            c.request(Nbd.CMD_BLOCK_STATUS, 0, 9, 0, 0, null);
            assertEquals(Nbd.EINVAL, c.reply(0).error(), "block status of nothing");
            c.request(Nbd.CMD_WRITE_ZEROES, Nbd.CMD_FLAG_DF, 10, 0, 4096, null);
            assertEquals(Nbd.EINVAL, c.reply(0).error(), "a flag of another command");

            c.request(Nbd.CMD_READ, 0, 11, 0, 16384, null);
            RawClient.Reply r = c.reply(0);
            assertEquals(Nbd.REPLY_TYPE_OFFSET_DATA, r.type());
            byte[] expect = new byte[16384];
            System.arraycopy(data, 0, expect, 4096, data.length);
            assertArrayEquals(expect, Arrays.copyOfRange(r.data(), 8, r.data().length), "nothing changed");

            c.send(java.nio.ByteBuffer.allocate(28).putInt(0x12345678).position(28).flip());
            assertTrue(c.closedByServer(), "a request that cannot be framed ends the connection");
        }
        try (RawClient again = new RawClient(server.port()).go("default", false)) {
            again.request(Nbd.CMD_FLUSH, 0, 1, 0, 0, null);
            assertEquals(0, again.reply(0).error(), "the export still serves");
        }
    }

    @Test
    void aClientThatLeavesMidWriteChangesNothing() throws Exception {
        try (RawClient c = start(8 << 20, false)) {
            c.send(java.nio.ByteBuffer.allocate(28 + 100).putInt(Nbd.REQUEST_MAGIC).putShort((short) 0)
                    .putShort((short) Nbd.CMD_WRITE).putLong(1).putLong(0).putInt(4096).flip());
        }
        for (int i = 0; i < 200; i++) new RawClient(server.port()).close(); // connections opened and dropped
        try (RawClient c = new RawClient(server.port()).go("default", false)) {
            c.request(Nbd.CMD_READ, 0, 2, 0, 4096, null);
            RawClient.Reply r = c.reply(4096);
            assertEquals(0, r.error());
            assertArrayEquals(new byte[4096], r.data());
        }
    }

    @Test
    void manyRequestsInFlightAreAllAnsweredByCookie() throws Exception {
        try (RawClient c = start(16 << 20, false)) {
            int n = 200;
            for (int i = 0; i < n; i++) c.request(Nbd.CMD_WRITE, 0, i, i * 4096L + 100, 1000, pattern(1000, i));
            Map<Long, Integer> errors = new HashMap<>();
            for (int i = 0; i < n; i++) {
                RawClient.Reply r = c.reply(0);
                errors.put(r.cookie(), r.error());
            }
            assertEquals(n, errors.size());
            assertTrue(errors.values().stream().allMatch(e -> e == 0), errors.toString());
            for (int i = 0; i < n; i++) c.request(Nbd.CMD_READ, 0, 1000 + i, i * 4096L + 100, 1000, null);
            for (int i = 0; i < n; i++) {
                RawClient.Reply r = c.reply(1000);
                assertArrayEquals(pattern(1000, (int) (r.cookie() - 1000)), r.data(), "cookie " + r.cookie());
            }
        }
    }

    @Test
    void aFullPoolRefusesNewBlocksButNotOverwritesAndTrimGivesThemBack() throws Exception {
        try (RawClient c = start(4 << 20, true)) { // one group of 4 MiB, less its metadata
            ThinExport e = pool.find("default");
            long free = pool.freeBlocks();
            byte[] block = pattern(65536, 1);
            long written = 0;
            int error = 0;
            for (long at = 0; at < e.sizeBytes() && error == 0; at += block.length) {
                c.request(Nbd.CMD_WRITE, 0, at, at, block.length, block);
                error = c.reply(0).error();
                if (error == 0) written = at + block.length;
            }
            assertEquals(Nbd.ENOSPC, error, "a write to a hole of a full pool");
            assertTrue(written > 0);
            c.request(Nbd.CMD_WRITE, Nbd.CMD_FLAG_FUA, 1, 0, 4096, pattern(4096, 9));
            assertEquals(0, c.reply(0).error(), "an overwrite needs no space");

            c.request(Nbd.CMD_BLOCK_STATUS, 0, 2, 0, (int) e.sizeBytes(), null);
            RawClient.Reply s = c.reply(0);
            assertEquals(Nbd.REPLY_TYPE_BLOCK_STATUS, s.type());
            java.nio.ByteBuffer d = java.nio.ByteBuffer.wrap(s.data());
            assertEquals(Nbd.META_CONTEXT_ID, d.getInt());
            assertEquals(written, Integer.toUnsignedLong(d.getInt()), "the written part is data");
            assertEquals(0, d.getInt());

            c.request(Nbd.CMD_TRIM, 0, 3, 65536, e.sizeBytes() - 65536, null);
            assertEquals(0, c.reply(0).error());
            assertEquals(free - 16, pool.freeBlocks(), "the trim to the end freed every block after the first 16");
            c.request(Nbd.CMD_BLOCK_STATUS, Nbd.CMD_FLAG_REQ_ONE, 4, 65536, 8192, null);
            d = java.nio.ByteBuffer.wrap(c.reply(0).data());
            d.getInt();
            assertEquals(8192, d.getInt(), "REQ_ONE: one extent, no longer than asked");
            assertEquals(Nbd.STATE_HOLE | Nbd.STATE_ZERO, d.getInt());
            assertEquals(0, d.remaining());
            c.request(Nbd.CMD_READ, Nbd.CMD_FLAG_DF, 5, 65536 - 4096, 8192, null);
            RawClient.Reply r = c.reply(0);
            assertEquals(Nbd.REPLY_FLAG_DONE, r.flags() & Nbd.REPLY_FLAG_DONE, "DF: one chunk");
            byte[] expect = new byte[8192];
            System.arraycopy(block, 65536 - 4096, expect, 0, 4096);
            assertArrayEquals(expect, Arrays.copyOfRange(r.data(), 8, r.data().length), "trimmed blocks read as zeros");
            c.request(Nbd.CMD_WRITE, 0, 6, 1 << 20, 4096, pattern(4096, 3));
            assertEquals(0, c.reply(0).error(), "the freed space serves new writes");
        }
    }

    /** The base:allocation extents BLOCK_STATUS answers for {@code [offset, +length)}: pairs of (length, flags). */
    private static java.util.List<long[]> status(RawClient c, long cookie, long offset, int length) throws Exception {
        c.request(Nbd.CMD_BLOCK_STATUS, 0, cookie, offset, length, null);
        RawClient.Reply s = c.reply(0);
        assertEquals(Nbd.REPLY_TYPE_BLOCK_STATUS, s.type());
        java.nio.ByteBuffer d = java.nio.ByteBuffer.wrap(s.data());
        assertEquals(Nbd.META_CONTEXT_ID, d.getInt());
        java.util.List<long[]> out = new java.util.ArrayList<>();
        while (d.hasRemaining()) out.add(new long[] {Integer.toUnsignedLong(d.getInt()), d.getInt()});
        return out;
    }

    private static String show(java.util.List<long[]> extents) {
        return extents.stream().map(Arrays::toString).toList().toString();
    }

    /** Without preallocation, whose blocks a punch gives back too: the free count moves only by what is punched. */
    @Test
    void trimAndWriteZeroesInTheMiddleFreeTheWholeBlocksAndLeaveHoles() throws Exception {
        pool = ExportPool.memory(ConfigFactory.parseString("blockyard.alloc.prealloc-min-window-blocks = 0")
                .withFallback(SMALL), 8 << 20, "default");
        server = NbdServer.listen(pool, new InetSocketAddress("127.0.0.1", 0));
        try (RawClient c = new RawClient(server.port()).go("default", true)) {
            byte[] data = pattern(32 * 4096, 7);
            c.request(Nbd.CMD_WRITE, 0, 1, 0, data.length, data);
            assertEquals(0, c.reply(0).error());
            long free = pool.freeBlocks();
            c.request(Nbd.CMD_TRIM, 0, 2, 1 << 20, 4096, null);
            assertEquals(0, c.reply(0).error());
            assertEquals(free, pool.freeBlocks(), "a trim of a hole frees nothing");

            c.request(Nbd.CMD_TRIM, 0, 3, 32768 - 100, 65536 + 200, null); // whole blocks [8, 24), a partial one each side
            assertEquals(0, c.reply(0).error());
            assertEquals(free + 16, pool.freeBlocks(), "the trim freed the 16 whole blocks in the middle");
            c.request(Nbd.CMD_TRIM, 0, 4, 32768, 65536, null);
            assertEquals(0, c.reply(0).error());
            assertEquals(free + 16, pool.freeBlocks(), "a second trim frees nothing more");
            java.util.List<long[]> extents = status(c, 5, 0, data.length);
            assertEquals(3, extents.size(), show(extents));
            assertArrayEquals(new long[] {32768, 0}, extents.get(0), show(extents));
            assertArrayEquals(new long[] {65536, Nbd.STATE_HOLE | Nbd.STATE_ZERO}, extents.get(1), show(extents));
            assertArrayEquals(new long[] {32768, 0}, extents.get(2), show(extents));

            // WRITE_ZEROES without NO_HOLE: the whole blocks [26, 30) are punched, the partial edges written as zeros.
            long from = 26 * 4096L - 300, to = 30 * 4096L + 500;
            c.request(Nbd.CMD_WRITE_ZEROES, 0, 6, from, (int) (to - from), null);
            assertEquals(0, c.reply(0).error());
            assertEquals(free + 20, pool.freeBlocks(), "write zeroes freed its 4 whole blocks");
            extents = status(c, 7, 24 * 4096L, 8 * 4096);
            assertEquals(3, extents.size(), show(extents));
            assertArrayEquals(new long[] {2 * 4096, 0}, extents.get(0), show(extents));
            assertArrayEquals(new long[] {4 * 4096, Nbd.STATE_HOLE | Nbd.STATE_ZERO}, extents.get(1), show(extents));
            assertArrayEquals(new long[] {2 * 4096, 0}, extents.get(2), show(extents));

            byte[] expect = data.clone();
            Arrays.fill(expect, 8 * 4096, 24 * 4096, (byte) 0);
            Arrays.fill(expect, (int) from, (int) to, (byte) 0);
            c.request(Nbd.CMD_READ, Nbd.CMD_FLAG_DF, 8, 0, data.length, null);
            RawClient.Reply r = c.reply(0);
            assertArrayEquals(expect, Arrays.copyOfRange(r.data(), 8, r.data().length), "punched blocks read as zeros");

            c.request(Nbd.CMD_WRITE, 0, 9, 12 * 4096, 4096, pattern(4096, 3));
            assertEquals(0, c.reply(0).error(), "a write into the hole allocates again");
            c.request(Nbd.CMD_READ, Nbd.CMD_FLAG_DF, 10, 12 * 4096, 4096, null);
            r = c.reply(0);
            assertArrayEquals(pattern(4096, 3), Arrays.copyOfRange(r.data(), 8, r.data().length));
            extents = status(c, 11, 11 * 4096L, 3 * 4096);
            assertEquals(3, extents.size(), show(extents));
            assertArrayEquals(new long[] {4096, 0}, extents.get(1), show(extents));
        }
    }
}
