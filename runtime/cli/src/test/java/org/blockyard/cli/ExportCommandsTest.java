package org.blockyard.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import org.blockyard.runtime.config.BlockyardConfig;
import org.blockyard.nbd.ExportPool;
import org.blockyard.nbd.NbdServer;

/** export create, list and delete as a user runs them, and their refusals: one line, exit code 2, nothing changed. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ExportCommandsTest {
    @TempDir
    Path dir;

    @Test
    void exportsAreCreatedListedAndDeletedAndPersistInTheVolume() throws Exception {
        String image = dir.resolve("pool.img").toString();
        assertEquals(0, Cli.run("mkfs", image, "--size", "256MiB").code());
        Cli.Run created = Cli.run("export", "create", "--volume", image, "vm1", "--size", "64MiB");
        assertEquals(0, created.code(), created.err());
        assertEquals(0, Cli.run("export", "create", "--volume", image, "vm2", "--size", "1GiB").code(), "larger than the pool: thin");

        Cli.Run dup = Cli.run("export", "create", "--volume", image, "vm1", "--size", "64MiB");
        assertEquals(2, dup.code());
        assertEquals("blockyard export create: export vm1 exists already", dup.line());
        Cli.Run huge = Cli.run("export", "create", "--volume", image, "big", "--size", "2000000TiB");
        assertEquals(2, huge.code());
        assertTrue(huge.line().contains("an export holds at most 281474976710656 blocks"), huge.err());
        Cli.Run odd = Cli.run("export", "create", "--volume", image, "odd", "--size", "1000");
        assertEquals(2, odd.code());
        Cli.Run none = Cli.run("export", "delete", "--volume", image, "nope");
        assertEquals(2, none.code());
        assertEquals("blockyard export delete: no export named nope", none.line());

        Cli.Run list = Cli.run("export", "list", "--volume", image);
        assertEquals(0, list.code(), list.err());
        assertTrue(list.out().matches("(?s).*vm1 +67108864 +0\\n.*vm2 +1073741824 +0\\n.*"), list.out());
        assertTrue(!list.out().contains("big") && !list.out().contains("odd"), "refusals changed nothing: " + list.out());

        // A server holds the volume: the commands are refused while it runs.
        try (ExportPool pool = ExportPool.open(Path.of(image), BlockyardConfig.load());
             NbdServer server = NbdServer.listen(pool, dir.resolve("s.sock"))) {
            Cli.Run held = Cli.run("export", "delete", "--volume", image, "vm1");
            assertEquals(2, held.code());
            assertTrue(held.line().contains("is open (locked by"), held.err());
            Cli.Run sock = Cli.run("serve", "--volume", image, "--socket", dir.resolve("s.sock").toString());
            assertEquals(2, sock.code());
            assertTrue(sock.line().contains("--socket"), sock.err());
        }
        assertEquals(0, Cli.run("export", "delete", "--volume", image, "vm1").code());
        list = Cli.run("export", "list", "--volume", image);
        assertTrue(!list.out().contains("vm1") && list.out().contains("vm2"), list.out());
        assertEquals(0, Cli.run("fsck", image).code());
        assertTrue(Files.exists(Path.of(image)));
    }
}
