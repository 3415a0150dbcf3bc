package org.blockyard.nbd;

import java.util.concurrent.CountDownLatch;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A server's life in a process of its own ({@code blockyard serve}): it serves until SIGTERM or SIGINT, then
 * closes the server ({@link NbdServer#close}: new connections refused, requests in flight answered, bounded)
 * and the pool (the volume closes clean), and {@link #untilSignalled} returns, so the process ends with its
 * own exit code (0) instead of the JVM's 143 or 130 for a signal. Any other way out of the JVM (System.exit,
 * SIGHUP) closes them through a shutdown hook.
 */
public final class Serving {
    private static final Logger log = LoggerFactory.getLogger(Serving.class);

    private final NbdServer server;
    private final ExportPool pool;
    private final CountDownLatch signalled = new CountDownLatch(1);
    private boolean closed;

    private Serving(NbdServer server, ExportPool pool) {
        this.server = server;
        this.pool = pool;
    }

    /** Serves until SIGTERM or SIGINT, then closes {@code server}, then {@code pool}; returns once both are closed. */
    public static void untilSignalled(NbdServer server, ExportPool pool) throws InterruptedException {
        Serving s = new Serving(server, pool);
        Thread hook = new Thread(s::closeOnce, "serve-stop");
        Runtime.getRuntime().addShutdownHook(hook);
        for (String name : new String[] {"TERM", "INT"}) {
            try {
                sun.misc.Signal.handle(new sun.misc.Signal(name), sig -> s.signalled.countDown());
            } catch (IllegalArgumentException taken) {
                log.warn("SIG{} cannot be handled here ({}); it stops the server through the shutdown hook", name, taken.getMessage());
            }
        }
        s.signalled.await();
        s.closeOnce();
    }

    private synchronized void closeOnce() {
        if (closed) return;
        closed = true;
        try {
            server.close();
        } finally {
            pool.close();
        }
    }
}
