package org.blockyard.cli;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;

import com.typesafe.config.Config;

import org.blockyard.benches.BadOption;
import org.blockyard.nbd.ExportPool;
import org.blockyard.nbd.NbdServer;
import org.blockyard.nbd.Serving;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code blockyard serve}: the exports of a volume over NBD (docs/design/nbd.md) until SIGTERM or SIGINT, which
 * close the connections once their requests are answered, then the volume (clean), and exit 0 ({@link Serving}).
 */
@Command(name = "serve", mixinStandardHelpOptions = true,
        description = "Serve the exports of the volume in IMAGE over NBD (nbd://HOST:PORT/NAME or "
                + "nbd+unix:///NAME?socket=PATH) until SIGTERM or SIGINT. Without --volume, a pool of 1 GiB in "
                + "memory with one export, default. Prints the address it listens on to standard error.")
public final class ServeCommand implements Callable<Integer> {
    /** The pool served without --volume: its blocks are taken from the heap only when written. */
    static final long MEMORY_POOL_BYTES = 1L << 30;

    @Option(names = "--volume", paramLabel = "IMAGE", description = "A volume made by mkfs, its exports made by export create.")
    Path volume;

    @ArgGroup(exclusive = true)
    Where where;

    static final class Where {
        @Option(names = "--listen", paramLabel = "127.0.0.1:10809", description = "TCP address and port to listen on (10809 is NBD's port).")
        String listen;

        @Option(names = "--socket", paramLabel = "PATH", description = "A Unix socket to make at PATH (which must not exist) instead.")
        Path socket;
    }

    @Option(names = "--config", paramLabel = "FILE", description = "Configuration layered over the defaults.")
    Path config;

    @Override
    public Integer call() throws Exception {
        Config c = BadOption.config(config);
        InetSocketAddress tcp = null;
        if (where == null || where.socket == null) tcp = address(where == null ? null : where.listen);
        else if (Files.exists(where.socket, java.nio.file.LinkOption.NOFOLLOW_LINKS))
            throw new BadOption("--socket", where.socket, "a path that does not exist yet");
        if (volume != null && !Files.exists(volume))
            throw new BadOption("--volume", volume, "no such volume image or device");
        ExportPool pool = volume != null ? ExportPool.open(volume, c) : ExportPool.memory(c, MEMORY_POOL_BYTES, "default");
        NbdServer server;
        try {
            server = tcp != null ? NbdServer.listen(pool, tcp) : NbdServer.listen(pool, where.socket);
        } catch (java.io.IOException e) {
            pool.close();
            throw new BadOption(tcp != null ? "--listen" : "--socket", tcp != null ? where == null ? "127.0.0.1:10809"
                    : where.listen : where.socket, "an address free to listen on (" + e.getMessage() + ")");
        }
        System.err.println("serving " + pool.exports().size() + " export(s) on " + server.uri()
                + (volume != null ? " from " + volume : " from memory"));
        System.err.flush();
        Serving.untilSignalled(server, pool);
        return 0;
    }

    /** {@code HOST:PORT} (or {@code [V6]:PORT}) as an address; a wrong one is a BadOption. */
    static InetSocketAddress address(String text) {
        if (text == null) return new InetSocketAddress("127.0.0.1", 10809);
        int colon = text.lastIndexOf(':');
        if (colon <= 0) throw new BadOption("--listen", text, "HOST:PORT, e.g. 127.0.0.1:10809");
        String host = text.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) host = host.substring(1, host.length() - 1);
        int port;
        try {
            port = Integer.parseInt(text.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new BadOption("--listen", text, "HOST:PORT with a port of 0 to 65535");
        }
        if (port < 0 || port > 65535) throw new BadOption("--listen", text, "HOST:PORT with a port of 0 to 65535");
        InetSocketAddress a = new InetSocketAddress(host, port);
        if (a.isUnresolved()) throw new BadOption("--listen", text, "a host that resolves");
        return a;
    }
}
