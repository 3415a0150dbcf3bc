package org.blockyard.nbd;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import com.typesafe.config.Config;

import org.blockyard.runtime.config.BlockyardConfig;

/**
 * A server in a child JVM over a volume, as {@code blockyard serve --volume IMAGE --listen 127.0.0.1:0} runs one
 * (the pool opened, an {@link NbdServer} on a free loopback port, {@link Serving#untilSignalled}, exit code 0),
 * so that a test can kill it with SIGKILL or stop it with SIGTERM. Every wait has a deadline.
 */
final class ChildServer implements AutoCloseable {
    /** The configuration both sides use: small groups, so a test's volume is a few MiB of metadata. */
    static final String[] PROPERTIES = {"-Dblockyard.volume.blocks-per-group=1024", "-Dblockyard.volume.journal-blocks=64"};

    private final Process process;
    private final int port;
    private final Path log;

    private ChildServer(Process process, int port, Path log) {
        this.process = process;
        this.port = port;
        this.log = log;
    }

    static Config config() {
        for (String p : PROPERTIES) {
            String[] kv = p.substring(2).split("=", 2);
            System.setProperty(kv[0], kv[1]);
        }
        try {
            return BlockyardConfig.load();
        } finally {
            for (String p : PROPERTIES) System.clearProperty(p.substring(2).split("=", 2)[0]);
        }
    }

    /** Starts the child on {@code image}; returns once it listens (within 90 s). */
    static ChildServer start(Path image, Path log) throws Exception {
        String jvm = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(jvm, "-Xmx256m", "-XX:TieredStopAtLevel=1"));
        cmd.addAll(List.of(PROPERTIES));
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), Main.class.getName(), image.toString()));
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread pump = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) lines.add(line);
            } catch (IOException ended) {
                // the child is gone
            }
            lines.add("END");
        }, "child-server-out");
        pump.setDaemon(true);
        pump.start();
        String line = lines.poll(90, TimeUnit.SECONDS);
        if (line == null || !line.startsWith("LISTENING ")) {
            p.destroyForcibly();
            throw new AssertionError("the child server did not start: " + line + "\n" + Files.readString(log));
        }
        return new ChildServer(p, Integer.parseInt(line.substring(10).trim()), log);
    }

    int port() {
        return port;
    }

    Process process() {
        return process;
    }

    /** SIGKILL, and the wait for it to be gone. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(30, TimeUnit.SECONDS)) throw new AssertionError("a SIGKILLed child still runs");
    }

    /** SIGTERM. */
    void term() {
        process.destroy();
    }

    /** Its exit code, waited for at most {@code seconds}; fails the test if it still runs then. */
    int exitCode(long seconds) throws Exception {
        if (!process.waitFor(seconds, TimeUnit.SECONDS))
            throw new AssertionError("the child server did not exit within " + seconds + " s:\n" + Files.readString(log));
        return process.exitValue();
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) kill();
    }

    /** The child: {@code IMAGE}; prints {@code LISTENING PORT} once it listens, exits 0 after SIGTERM or SIGINT. */
    public static final class Main {
        public static void main(String[] args) throws Exception {
            ExportPool pool = ExportPool.open(Path.of(args[0]), BlockyardConfig.load());
            NbdServer server = NbdServer.listen(pool, new InetSocketAddress("127.0.0.1", 0));
            System.out.println("LISTENING " + server.port());
            System.out.flush();
            Serving.untilSignalled(server, pool);
            System.exit(0);
        }
    }
}
