package org.blockyard.nbd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.RandomAccessFile;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import org.blockyard.runtime.config.BlockyardConfig;

/**
 * The tools storage engineers use, against a server on loopback or a Unix socket: nbdinfo, qemu-io, qemu-img,
 * nbdcopy, nbdsh and fio. Each test is skipped when its tool is not installed ({@code .ci/run} installs them).
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class RealClientsTest {
    private static final Config SMALL = ConfigFactory.parseString(
            "blockyard.volume { blocks-per-group = 1024, journal-blocks = 64 }").withFallback(BlockyardConfig.load());
    private static final long MiB = 1 << 20;

    @TempDir
    Path dir;
    private ExportPool pool;
    private NbdServer tcp;
    private NbdServer unix;

    @BeforeEach
    void start() throws Exception {
        pool = ExportPool.memory(SMALL, 128 * MiB, "default");
        pool.create("img", 16 * MiB);
        tcp = NbdServer.listen(pool, new InetSocketAddress("127.0.0.1", 0));
        unix = NbdServer.listen(pool, dir.resolve("nbd.sock"));
    }

    @AfterEach
    void stop() {
        if (tcp != null) tcp.close();
        if (unix != null) unix.close();
        if (pool != null) pool.close();
    }

    private String uri(String export) {
        return tcp.uri() + "/" + export;
    }

    private String unixUri(String export) {
        return "nbd+unix:///" + export + "?socket=" + dir.resolve("nbd.sock");
    }

    /** A sparse raw image: random data in a few places, holes between. */
    private Path sparseImage(String name, long size) throws Exception {
        Path p = dir.resolve(name);
        Random r = new Random(42);
        try (RandomAccessFile f = new RandomAccessFile(p.toFile(), "rw")) {
            f.setLength(size);
            for (long at : new long[] {0, 3 * MiB + 512, 9 * MiB, size - 70_000}) {
                byte[] b = new byte[(int) Math.min(1_000_000, size - at)];
                r.nextBytes(b);
                f.seek(at);
                f.write(b);
            }
        }
        return p;
    }

    @Test
    void nbdinfoShowsTheSizeAndMapsHolesAndData() throws Exception {
        Tool.assumeInstalled("nbdinfo");
        Tool.assumeInstalled("qemu-io");
        Tool.Result w = Tool.run(60, "qemu-io", "-f", "raw", "-c", "write -P 0x5a 4M 1M", uri("default"));
        assertEquals(0, w.exit(), w.toString());
        Tool.Result info = Tool.run(60, "nbdinfo", "--json", uri("default"));
        assertEquals(0, info.exit(), info.toString());
        assertTrue(info.out().contains("\"export-size\": " + 128 * MiB), info.out());
        assertTrue(info.out().contains("\"can_multi_conn\": true"), info.out());
        Tool.Result map = Tool.run(60, "nbdinfo", "--map", uri("default"));
        assertEquals(0, map.exit(), map.toString());
        String expect = String.format("%10d %10d    3  hole,zero%n%10d %10d    0  data%n%10d %10d    3  hole,zero%n",
                0, 4 * MiB, 4 * MiB, MiB, 5 * MiB, 123 * MiB);
        assertEquals(expect.replaceAll(" +", " ").trim(), map.out().replaceAll(" +", " ").trim());
        Tool.Result list = Tool.run(60, "nbdinfo", "--list", tcp.uri());
        assertEquals(0, list.exit(), list.toString());
        assertTrue(list.out().contains("export=\"img\"") || list.out().contains("img"), list.out());
    }

    @Test
    void qemuIoPatternsZeroesDiscardsAndFlushesReadBack() throws Exception {
        Tool.assumeInstalled("qemu-io");
        Tool.Result r = Tool.run(120, "qemu-io", "-f", "raw",
                "-c", "write -P 0xab 0 1M", "-c", "read -P 0xab 0 1M",
                "-c", "write -P 0xcd 1000 3000", "-c", "read -P 0xcd 1000 3000", "-c", "read -P 0xab 4000 4096",
                "-c", "write -z 1M 1M", "-c", "read -P 0 1M 1M",
                "-c", "write -P 0x11 2M 1M", "-c", "discard 2M 1M", "-c", "flush",
                "-c", "write -f -P 0x22 3M 64k", "-c", "read -P 0x22 3M 64k",
                "-c", "write -z -f 3M 4k", "-c", "read -P 0 3M 4k",
                unixUri("default"));
        assertEquals(0, r.exit(), r.toString());
        assertFalse(r.out().contains("failed") || r.out().contains("error"), r.out());
    }

    @Test
    void qemuImgConvertsAnImageIntoAnExportAndComparesEqual() throws Exception {
        Tool.assumeInstalled("qemu-img");
        Path src = sparseImage("src.img", 16 * MiB);
        Tool.Result c = Tool.run(120, "qemu-img", "convert", "-n", "-f", "raw", "-O", "raw", src.toString(), uri("img"));
        assertEquals(0, c.exit(), c.toString());
        Tool.Result cmp = Tool.run(120, "qemu-img", "compare", "-f", "raw", "-F", "raw", src.toString(), uri("img"));
        assertEquals(0, cmp.exit(), cmp.toString());
        long before = pool.freeBlocks();
        byte[] one = java.nio.file.Files.readAllBytes(src);
        one[5 * 1024 * 1024] ^= 1; // a byte in a hole of the source
        Path other = dir.resolve("other.img");
        Files.write(other, one);
        Tool.Result diff = Tool.run(120, "qemu-img", "compare", "-f", "raw", "-F", "raw", other.toString(), uri("img"));
        assertEquals(1, diff.exit(), "a changed byte is found: " + diff);
        assertEquals(before, pool.freeBlocks(), "reads allocate nothing");
    }

    @Test
    void nbdcopyCopiesBothWaysByteForByte() throws Exception {
        Tool.assumeInstalled("nbdcopy");
        Path src = sparseImage("in.img", 16 * MiB);
        Tool.Result in = Tool.run(120, "nbdcopy", src.toString(), unixUri("img"));
        assertEquals(0, in.exit(), in.toString());
        Path out = dir.resolve("out.img");
        Tool.Result back = Tool.run(120, "nbdcopy", uri("img"), out.toString());
        assertEquals(0, back.exit(), back.toString());
        assertEquals(-1L, Files.mismatch(src, out), "the copy back is the image");
    }

    @Test
    void nbdshSeesEinvalPastTheEndAndFlushedWritesOnAnotherConnection() throws Exception {
        Tool.assumeInstalled("nbdsh");
        // nbdsh is "python3 -m nbd" run by whichever python3 comes first on the PATH; Debian's module is the system's
        String python = null;
        for (String p : new String[] {"/usr/bin/python3", "python3"})
            if (python == null && Tool.run(30, p, "-c", "import nbd").exit() == 0) python = p;
        org.junit.jupiter.api.Assumptions.assumeTrue(python != null, "python3-libnbd is not installed");
        String script = String.join("\n",
                "import errno",
                "h.set_strict_mode(0)",
                "try:",
                "    h.pread(4096, h.get_size() - 512)",
                "    print('read past the end: no error')",
                "except nbd.Error as e:",
                "    print('read past the end: errno', e.errno)",
                "assert h.pread(512, 0) == bytearray(512)  # the connection is still up",
                "h2 = nbd.NBD()",
                "h2.connect_uri('" + uri("default") + "')",
                "h.pwrite(b'\\x42' * 8192, 65536)",
                "h.flush()",
                "assert h2.pread(8192, 65536) == b'\\x42' * 8192",
                "h2.pwrite(b'\\x17' * 100, 70000, nbd.CMD_FLAG_FUA)",
                "assert h.pread(100, 70000) == b'\\x17' * 100",
                "print('multi-conn ok', h.can_multi_conn())",
                "");
        Tool.Result r = Tool.run(60, python, "-m", "nbd", "-u", uri("default"), "-c", script);
        assertEquals(0, r.exit(), r.toString());
        assertTrue(r.out().contains("read past the end: errno EINVAL") || r.out().contains("read past the end: errno 22"), r.out());
        assertTrue(r.out().contains("multi-conn ok True"), r.out());
    }

    @Test
    void fioRandomWritesVerifyWithCrc32c() throws Exception {
        Tool.assumeInstalled("fio");
        Tool.Result r = Tool.run(150, "fio", "--name=verify", "--ioengine=nbd", "--uri=" + uri("img"),
                "--rw=randwrite", "--bs=4k", "--size=16m", "--iodepth=16", "--numjobs=1",
                "--verify=crc32c", "--do_verify=1", "--verify_fatal=1", "--randrepeat=0", "--verify_state_save=0");
        assertEquals(0, r.exit(), r.toString());
        assertTrue(r.out().contains("verify"), r.out());
        assertFalse(r.out().contains("verify: bad"), r.out());
    }
}
