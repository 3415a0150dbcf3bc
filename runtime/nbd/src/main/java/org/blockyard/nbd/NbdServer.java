package org.blockyard.nbd;

import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An NBD server (fixed newstyle) over the exports of an {@link ExportPool}, on a TCP address or a Unix socket,
 * with blocking JDK NIO channels: one thread per connection reads the handshake and then the requests, a
 * shared pool of workers carries them out, and every reply frame is written whole under the connection's
 * write lock, so replies go out in the order requests finish, not the order they came (docs/design/nbd.md).
 *
 * <ul>
 *   <li>Options: EXPORT_NAME, ABORT, LIST, INFO and GO (INFO_EXPORT, INFO_BLOCK_SIZE, INFO_NAME when asked),
 *       STRUCTURED_REPLY, LIST_META_CONTEXT and SET_META_CONTEXT for {@code base:allocation}; any other
 *       (STARTTLS, EXTENDED_HEADERS, ...) is answered ERR_UNSUP and the haggling goes on.</li>
 *   <li>Commands: READ (DF), WRITE (FUA), DISC, FLUSH, TRIM (FUA), WRITE_ZEROES (FUA, NO_HOLE), BLOCK_STATUS
 *       (REQ_ONE). An unknown command or flag is EINVAL, a range past the end EINVAL (ENOSPC for a write, as
 *       proto.md has it), a READ or WRITE longer than {@link #MAX_PAYLOAD_BYTES} EINVAL (the write's data is
 *       read and dropped first, so the stream stays in step). A request with a wrong magic cannot be framed:
 *       the connection is closed, after the requests in flight are answered.</li>
 *   <li>CAN_MULTI_CONN: every connection goes to the one store, which caches nothing of its own, and FLUSH
 *       is a flush of the whole device, so a flush on one connection covers the writes answered on all.</li>
 * </ul>
 */
public final class NbdServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(NbdServer.class);

    /** The longest READ or WRITE; 32 MiB is what proto.md's clients assume when none is advertised. */
    public static final int MAX_PAYLOAD_BYTES = 32 << 20;
    /** Requests one connection may have in flight; the reader stops reading beyond (back-pressure). */
    static final int MAX_IN_FLIGHT = 64;
    /** Workers shared by every connection: a request holds one while it waits for the store. */
    static final int WORKERS = 32;
    /** The longest option the haggling reads; longer ones end the connection (a name is at most 4 KiB). */
    static final int MAX_OPTION_BYTES = 1 << 16;
    /** How long DISC, an end of stream or {@link #close} wait for the requests in flight. */
    static final long DRAIN_SECONDS = ThinExport.TIMEOUT_SECONDS + 10;
    /**
     * How long {@link #close} keeps reading a connection's requests, answering each ESHUTDOWN, before it shuts the
     * connection's input: a client that sent a burst just before the stop gets an answer to all of it.
     */
    static final long STOP_GRACE_MILLIS = 2000;

    static final int TRANSMISSION_FLAGS = Nbd.TF_HAS_FLAGS | Nbd.TF_SEND_FLUSH | Nbd.TF_SEND_FUA | Nbd.TF_SEND_TRIM
            | Nbd.TF_SEND_WRITE_ZEROES | Nbd.TF_SEND_DF | Nbd.TF_CAN_MULTI_CONN;

    private final ExportPool pool;
    private final ServerSocketChannel listener;
    private final SocketAddress address;
    private final Path socketPath;
    private final ExecutorService workers;
    private final Thread acceptor;
    private final Set<Connection> connections = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;
    /** Set by {@link #close} once the listener is closed: requests not started yet are answered ESHUTDOWN. */
    private volatile boolean stopping;

    private NbdServer(ExportPool pool, ServerSocketChannel listener, Path socketPath) throws IOException {
        this.pool = pool;
        this.listener = listener;
        this.address = listener.getLocalAddress();
        this.socketPath = socketPath;
        this.workers = Executors.newFixedThreadPool(WORKERS, daemons("nbd-worker"));
        this.acceptor = daemons("nbd-accept").newThread(this::acceptLoop);
        acceptor.start();
    }

    /** Serves {@code pool} on a TCP address (port 0: any free one). Fails if the address is in use. */
    public static NbdServer listen(ExportPool pool, InetSocketAddress address) throws IOException {
        ServerSocketChannel ch = ServerSocketChannel.open(StandardProtocolFamily.INET);
        try {
            ch.bind(address, 128);
        } catch (IOException e) {
            ch.close();
            throw new java.net.BindException("cannot listen on " + address.getHostString() + ":" + address.getPort()
                    + ": " + e.getMessage());
        }
        return new NbdServer(pool, ch, null);
    }

    /** Serves {@code pool} on a Unix socket made at {@code path}, which must not exist; removed on close. */
    public static NbdServer listen(ExportPool pool, Path path) throws IOException {
        if (Files.exists(path, java.nio.file.LinkOption.NOFOLLOW_LINKS))
            throw new java.nio.file.FileAlreadyExistsException(path.toString(), null, "the socket path exists");
        ServerSocketChannel ch = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            ch.bind(UnixDomainSocketAddress.of(path), 128);
        } catch (IOException e) {
            ch.close();
            throw e;
        }
        return new NbdServer(pool, ch, path);
    }

    /** Where it listens, as an NBD URI without an export name ({@code nbd://127.0.0.1:10809}). */
    public String uri() {
        if (socketPath != null) return "nbd+unix:///?socket=" + socketPath;
        InetSocketAddress a = (InetSocketAddress) address;
        return "nbd://" + a.getAddress().getHostAddress() + ":" + a.getPort();
    }

    /** The TCP port, or -1 on a Unix socket. */
    public int port() {
        return address instanceof InetSocketAddress a ? a.getPort() : -1;
    }

    private static ThreadFactory daemons(String name) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    private void acceptLoop() {
        while (!closed) {
            SocketChannel ch;
            try {
                ch = listener.accept();
            } catch (IOException e) {
                if (!closed) log.warn("accept failed: {}", e.toString());
                return;
            }
            Connection c = new Connection(ch);
            connections.add(c);
            Thread t = new Thread(c::run, "nbd-conn");
            t.setDaemon(true);
            t.start();
        }
    }

    /**
     * Stops the server, bounded in time: the listener closes (a new connection is refused), then every request
     * not started yet, and every request read in the next {@link #STOP_GRACE_MILLIS} ms, is answered ESHUTDOWN,
     * while the ones already running finish and are answered with their result; then every connection's input
     * is shut, its requests in flight are answered (at most {@link #DRAIN_SECONDS} s), and it closes. The
     * workers stop last. What was answered is in the store, which the caller closes after this returns.
     */
    @Override
    public void close() {
        if (closed) return;
        closed = true;
        try {
            listener.close();
        } catch (IOException ignored) {
            // closing is all that is asked
        }
        stopping = true;
        long grace = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(STOP_GRACE_MILLIS);
        for (Connection c : connections) c.awaitEnd(grace); // a client told ESHUTDOWN may leave on its own
        for (Connection c : connections) c.shutdownInput();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(DRAIN_SECONDS);
        for (Connection c : connections) c.awaitEnd(deadline);
        workers.shutdown();
        try {
            workers.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (socketPath != null) {
            try {
                Files.deleteIfExists(socketPath);
            } catch (IOException ignored) {
                // a socket file left behind is refused by the next listen, which says so
            }
        }
    }

    /** A client went away in the middle of a message. */
    private static final class Hangup extends IOException {
        Hangup() {
            super("the client closed the connection", null);
        }
    }

    private final class Connection {
        private final SocketChannel ch;
        private final Object writeLock = new Object();
        private final Semaphore inFlight = new Semaphore(MAX_IN_FLIGHT);
        private final java.util.concurrent.CountDownLatch ended = new java.util.concurrent.CountDownLatch(1);
        private boolean noZeroes;
        private boolean structured;
        private String metaExport; // the export SET_META_CONTEXT chose base:allocation for, or null
        private ThinExport export;

        Connection(SocketChannel ch) {
            this.ch = ch;
        }

        void run() {
            try {
                if (ch.getLocalAddress() instanceof InetSocketAddress) ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
                if (handshake()) transmission();
            } catch (Hangup | ClosedChannelException e) {
                // the client (or close) ended the connection; what was in flight is answered below if it can be
            } catch (IOException e) {
                log.debug("connection ended: {}", e.toString());
            } catch (RuntimeException e) {
                log.warn("connection ended by an internal error", e);
            } finally {
                drain(System.nanoTime() + TimeUnit.SECONDS.toNanos(DRAIN_SECONDS));
                try {
                    ch.close();
                } catch (IOException ignored) {
                    // closing is all that is asked
                }
                connections.remove(this);
                ended.countDown();
            }
        }

        void shutdownInput() {
            try {
                ch.shutdownInput();
            } catch (IOException ignored) {
                // not connected any more
            }
        }

        void awaitEnd(long deadlineNanos) {
            try {
                ended.await(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        private void drain(long deadlineNanos) {
            try {
                if (inFlight.tryAcquire(MAX_IN_FLIGHT, Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS))
                    inFlight.release(MAX_IN_FLIGHT);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        // ---- I/O helpers

        private ByteBuffer readFully(int n) throws IOException {
            ByteBuffer b = ByteBuffer.allocate(n);
            while (b.hasRemaining()) if (ch.read(b) < 0) throw new Hangup();
            return b.flip();
        }

        private void skip(long n) throws IOException {
            ByteBuffer b = ByteBuffer.allocate((int) Math.min(n, 1 << 20));
            while (n > 0) {
                b.clear().limit((int) Math.min(n, b.capacity()));
                int r = ch.read(b);
                if (r < 0) throw new Hangup();
                n -= r;
            }
        }

        private void send(ByteBuffer... parts) throws IOException {
            synchronized (writeLock) {
                long left = 0;
                for (ByteBuffer p : parts) left += p.remaining();
                while (left > 0) left -= ch.write(parts);
            }
        }

        // ---- handshake

        /** The fixed newstyle haggling; true when transmission starts. */
        private boolean handshake() throws IOException {
            send(ByteBuffer.allocate(18).putLong(Nbd.NBDMAGIC).putLong(Nbd.IHAVEOPT)
                    .putShort((short) (Nbd.FLAG_FIXED_NEWSTYLE | Nbd.FLAG_NO_ZEROES)).flip());
            int clientFlags = readFully(4).getInt();
            if ((clientFlags & ~(Nbd.FLAG_FIXED_NEWSTYLE | Nbd.FLAG_NO_ZEROES)) != 0) return false; // MUST drop
            noZeroes = (clientFlags & Nbd.FLAG_NO_ZEROES) != 0;
            while (true) {
                ByteBuffer h = readFully(16);
                if (h.getLong() != Nbd.IHAVEOPT) return false;
                int option = h.getInt();
                long length = Integer.toUnsignedLong(h.getInt());
                if (length > MAX_OPTION_BYTES) {
                    if (option == Nbd.OPT_EXPORT_NAME) return false;
                    skip(length);
                    optionReply(option, Nbd.REP_ERR_TOO_BIG, message("option too long"));
                    continue;
                }
                ByteBuffer data = readFully((int) length);
                switch (option) {
                    case Nbd.OPT_EXPORT_NAME -> {
                        ThinExport e = lookup(utf8(data, data.remaining()));
                        if (e == null) return false; // the protocol's answer: a hard disconnect
                        ByteBuffer r = ByteBuffer.allocate(noZeroes ? 10 : 134);
                        r.putLong(e.sizeBytes()).putShort((short) TRANSMISSION_FLAGS);
                        send(r.position(r.capacity()).flip());
                        export = e;
                        return true;
                    }
                    case Nbd.OPT_ABORT -> {
                        optionReply(option, Nbd.REP_ACK, ByteBuffer.allocate(0));
                        return false;
                    }
                    case Nbd.OPT_LIST -> {
                        if (length != 0) {
                            optionReply(option, Nbd.REP_ERR_INVALID, message("LIST takes no data"));
                            continue;
                        }
                        for (ThinExport e : pool.exports()) {
                            byte[] n = e.name().getBytes(StandardCharsets.UTF_8);
                            optionReply(option, Nbd.REP_SERVER, ByteBuffer.allocate(4 + n.length).putInt(n.length).put(n).flip());
                        }
                        optionReply(option, Nbd.REP_ACK, ByteBuffer.allocate(0));
                    }
                    case Nbd.OPT_STRUCTURED_REPLY -> {
                        if (length != 0) {
                            optionReply(option, Nbd.REP_ERR_INVALID, message("STRUCTURED_REPLY takes no data"));
                            continue;
                        }
                        structured = true;
                        optionReply(option, Nbd.REP_ACK, ByteBuffer.allocate(0));
                    }
                    case Nbd.OPT_INFO, Nbd.OPT_GO -> {
                        if (infoOrGo(option, data)) return true;
                    }
                    case Nbd.OPT_LIST_META_CONTEXT, Nbd.OPT_SET_META_CONTEXT -> metaContext(option, data);
                    default -> optionReply(option, Nbd.REP_ERR_UNSUP, message("option " + option + " is not supported"));
                }
            }
        }

        private ThinExport lookup(String name) {
            if (!name.isEmpty()) return pool.find(name);
            ThinExport d = pool.find("default");
            if (d != null) return d;
            List<ThinExport> all = pool.exports();
            return all.size() == 1 ? all.get(0) : null;
        }

        private String utf8(ByteBuffer b, int n) {
            byte[] s = new byte[n];
            b.get(s);
            return new String(s, StandardCharsets.UTF_8);
        }

        private ByteBuffer message(String text) {
            return ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8));
        }

        private void optionReply(int option, int type, ByteBuffer data) throws IOException {
            ByteBuffer h = ByteBuffer.allocate(20).putLong(Nbd.OPT_REPLY_MAGIC).putInt(option).putInt(type)
                    .putInt(data.remaining()).flip();
            send(h, data);
        }

        /** INFO or GO; true when GO succeeded. */
        private boolean infoOrGo(int option, ByteBuffer data) throws IOException {
            if (data.remaining() < 6) {
                optionReply(option, Nbd.REP_ERR_INVALID, message("option too short"));
                return false;
            }
            long nameLength = Integer.toUnsignedLong(data.getInt());
            if (nameLength > data.remaining() - 2) {
                optionReply(option, Nbd.REP_ERR_INVALID, message("name longer than the option"));
                return false;
            }
            String name = utf8(data, (int) nameLength);
            int requests = Short.toUnsignedInt(data.getShort());
            if (data.remaining() != requests * 2) {
                optionReply(option, Nbd.REP_ERR_INVALID, message("information requests do not fill the option"));
                return false;
            }
            boolean wantName = false;
            for (int i = 0; i < requests; i++) if (data.getShort() == Nbd.INFO_NAME) wantName = true;
            ThinExport e = lookup(name);
            if (e == null) {
                optionReply(option, Nbd.REP_ERR_UNKNOWN, message("no export named " + name));
                return false;
            }
            optionReply(option, Nbd.REP_INFO, ByteBuffer.allocate(12).putShort((short) Nbd.INFO_EXPORT)
                    .putLong(e.sizeBytes()).putShort((short) TRANSMISSION_FLAGS).flip());
            optionReply(option, Nbd.REP_INFO, ByteBuffer.allocate(14).putShort((short) Nbd.INFO_BLOCK_SIZE)
                    .putInt(1).putInt(e.blockBytes()).putInt(MAX_PAYLOAD_BYTES).flip());
            if (wantName) {
                byte[] n = e.name().getBytes(StandardCharsets.UTF_8);
                optionReply(option, Nbd.REP_INFO, ByteBuffer.allocate(2 + n.length).putShort((short) Nbd.INFO_NAME).put(n).flip());
            }
            optionReply(option, Nbd.REP_ACK, ByteBuffer.allocate(0));
            if (option != Nbd.OPT_GO) return false;
            export = e;
            if (metaExport != null && !metaExport.equals(e.name())) metaExport = null;
            return true;
        }

        private void metaContext(int option, ByteBuffer data) throws IOException {
            boolean set = option == Nbd.OPT_SET_META_CONTEXT;
            if (set && !structured) {
                optionReply(option, Nbd.REP_ERR_INVALID, message("SET_META_CONTEXT needs STRUCTURED_REPLY first"));
                return;
            }
            List<String> queries = new ArrayList<>();
            String name;
            try {
                name = utf8(data, (int) Math.min(Integer.toUnsignedLong(data.getInt()), Integer.MAX_VALUE));
                long n = Integer.toUnsignedLong(data.getInt());
                for (long i = 0; i < n; i++)
                    queries.add(utf8(data, (int) Math.min(Integer.toUnsignedLong(data.getInt()), Integer.MAX_VALUE)));
                if (data.hasRemaining()) throw new java.nio.BufferUnderflowException();
            } catch (java.nio.BufferUnderflowException | IndexOutOfBoundsException | NegativeArraySizeException e) {
                optionReply(option, Nbd.REP_ERR_INVALID, message("malformed meta context option"));
                return;
            }
            ThinExport e = lookup(name);
            if (e == null) {
                optionReply(option, Nbd.REP_ERR_UNKNOWN, message("no export named " + name));
                return;
            }
            boolean chosen = false;
            if (!set && queries.isEmpty()) chosen = true;
            for (String q : queries)
                if (q.equals(Nbd.BASE_ALLOCATION) || (!set && (q.equals("base:") || q.equals("base")))) chosen = true;
            if (set) metaExport = chosen ? e.name() : null;
            if (chosen) {
                byte[] n = Nbd.BASE_ALLOCATION.getBytes(StandardCharsets.UTF_8);
                optionReply(option, Nbd.REP_META_CONTEXT, ByteBuffer.allocate(4 + n.length)
                        .putInt(set ? Nbd.META_CONTEXT_ID : 0).put(n).flip());
            }
            optionReply(option, Nbd.REP_ACK, ByteBuffer.allocate(0));
        }

        // ---- transmission

        private void transmission() throws IOException {
            while (true) {
                ByteBuffer h = readFully(28);
                if (h.getInt() != Nbd.REQUEST_MAGIC) {
                    log.debug("a request with a wrong magic: the connection ends");
                    return;
                }
                int flags = Short.toUnsignedInt(h.getShort());
                int type = Short.toUnsignedInt(h.getShort());
                long cookie = h.getLong();
                long offset = h.getLong();
                long length = Integer.toUnsignedLong(h.getInt());
                byte[] payload = null;
                if (type == Nbd.CMD_WRITE) {
                    if (length > MAX_PAYLOAD_BYTES) {
                        skip(length);
                        reply(type, cookie, Nbd.EINVAL, null, 0);
                        continue;
                    }
                    payload = readFully((int) length).array();
                }
                if (type == Nbd.CMD_DISC) return;
                if (stopping) {
                    reply(type, cookie, Nbd.ESHUTDOWN, null, offset);
                    continue;
                }
                int error = check(type, flags, offset, length);
                if (error != 0) {
                    reply(type, cookie, error, null, offset);
                    continue;
                }
                try {
                    inFlight.acquire();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                Request r = new Request(type, flags, cookie, offset, length, payload);
                try {
                    workers.execute(() -> perform(r));
                } catch (java.util.concurrent.RejectedExecutionException shuttingDown) {
                    inFlight.release();
                    reply(type, cookie, Nbd.ESHUTDOWN, null, offset);
                }
            }
        }

        /** The NBD error of a request that is refused before it runs, or 0. */
        private int check(int type, int flags, long offset, long length) {
            int allowed = switch (type) {
                case Nbd.CMD_READ -> Nbd.CMD_FLAG_DF;
                case Nbd.CMD_WRITE, Nbd.CMD_TRIM -> Nbd.CMD_FLAG_FUA;
                case Nbd.CMD_WRITE_ZEROES -> Nbd.CMD_FLAG_FUA | Nbd.CMD_FLAG_NO_HOLE;
                case Nbd.CMD_BLOCK_STATUS -> Nbd.CMD_FLAG_REQ_ONE;
                case Nbd.CMD_FLUSH -> 0;
                default -> -1;
            };
            if (allowed < 0 || (flags & ~allowed) != 0) return Nbd.EINVAL;
            if ((flags & Nbd.CMD_FLAG_DF) != 0 && !structured) return Nbd.EINVAL;
            if (type == Nbd.CMD_BLOCK_STATUS && (!structured || !export.name().equals(metaExport) || length == 0))
                return Nbd.EINVAL;
            if (type == Nbd.CMD_FLUSH) return 0;
            if (type == Nbd.CMD_READ && length > MAX_PAYLOAD_BYTES) return Nbd.EINVAL;
            if (offset < 0 || offset > export.sizeBytes() || length > export.sizeBytes() - offset)
                return type == Nbd.CMD_WRITE || type == Nbd.CMD_WRITE_ZEROES ? Nbd.ENOSPC : Nbd.EINVAL;
            return 0;
        }

        private record Request(int type, int flags, long cookie, long offset, long length, byte[] payload) {
            boolean has(int flag) {
                return (flags & flag) != 0;
            }
        }

        private void perform(Request r) {
            try {
                if (stopping) { // not started before the stop: not started at all
                    try {
                        reply(r.type(), r.cookie(), Nbd.ESHUTDOWN, null, r.offset());
                    } catch (IOException gone) {
                        // the client went away; nothing to tell it
                    }
                    return;
                }
                int error = 0;
                byte[] data = null;
                List<long[]> extents = null;
                try {
                    switch (r.type()) {
                        case Nbd.CMD_READ -> data = r.length() == 0 ? new byte[0] : export.read(r.offset(), (int) r.length());
                        case Nbd.CMD_WRITE -> {
                            if (r.length() > 0) export.write(r.offset(), r.payload(), r.has(Nbd.CMD_FLAG_FUA));
                            else if (r.has(Nbd.CMD_FLAG_FUA)) export.flush();
                        }
                        case Nbd.CMD_FLUSH -> export.flush();
                        case Nbd.CMD_TRIM -> export.trim(r.offset(), r.length(), r.has(Nbd.CMD_FLAG_FUA));
                        case Nbd.CMD_WRITE_ZEROES -> {
                            if (r.length() > 0)
                                export.writeZeroes(r.offset(), r.length(), r.has(Nbd.CMD_FLAG_NO_HOLE), r.has(Nbd.CMD_FLAG_FUA));
                        }
                        case Nbd.CMD_BLOCK_STATUS -> extents = export.blockStatus(r.offset(), r.length(), r.has(Nbd.CMD_FLAG_REQ_ONE));
                        default -> error = Nbd.EINVAL;
                    }
                } catch (NbdError e) {
                    error = e.errno;
                    log.debug("request {} at {} failed: {}", r.type(), r.offset(), e.getMessage());
                } catch (RuntimeException | LinkageError | AssertionError e) { // answered, never left hanging
                    error = Nbd.EIO;
                    log.warn("request {} at {} failed", r.type(), r.offset(), e);
                }
                try {
                    if (extents != null) blockStatusReply(r.cookie(), extents);
                    else reply(r.type(), r.cookie(), error, data, r.offset());
                } catch (IOException gone) {
                    // the client went away; nothing to tell it
                }
            } finally {
                inFlight.release();
            }
        }

        /** A simple reply, or for READ with structured replies one chunk: OFFSET_DATA, ERROR or NONE, with DONE. */
        private void reply(int type, long cookie, int error, byte[] data, long offset) throws IOException {
            boolean chunked = structured && (type == Nbd.CMD_READ || type == Nbd.CMD_BLOCK_STATUS);
            if (!chunked) {
                ByteBuffer h = ByteBuffer.allocate(16).putInt(Nbd.SIMPLE_REPLY_MAGIC).putInt(error).putLong(cookie).flip();
                if (error == 0 && data != null) send(h, ByteBuffer.wrap(data));
                else send(h);
                return;
            }
            if (error != 0) {
                ByteBuffer c = chunk(Nbd.REPLY_TYPE_ERROR, cookie, 6).putInt(error).putShort((short) 0).flip();
                send(c);
            } else if (data == null || data.length == 0) {
                send(chunk(Nbd.REPLY_TYPE_NONE, cookie, 0).flip());
            } else {
                ByteBuffer c = chunk(Nbd.REPLY_TYPE_OFFSET_DATA, cookie, 8 + data.length).putLong(offset).flip();
                send(c, ByteBuffer.wrap(data));
            }
        }

        private void blockStatusReply(long cookie, List<long[]> extents) throws IOException {
            ByteBuffer c = chunk(Nbd.REPLY_TYPE_BLOCK_STATUS, cookie, 4 + 8 * extents.size());
            ByteBuffer all = ByteBuffer.allocate(c.capacity() + 4 + 8 * extents.size());
            all.put(c.flip()).putInt(Nbd.META_CONTEXT_ID);
            for (long[] d : extents) all.putInt((int) d[0]).putInt((int) d[1]);
            send(all.flip());
        }

        /** A structured chunk's header with the DONE flag, positioned after it, room for nothing more. */
        private ByteBuffer chunk(int chunkType, long cookie, int length) {
            return ByteBuffer.allocate(20 + Math.min(length, 8)).putInt(Nbd.STRUCTURED_REPLY_MAGIC)
                    .putShort((short) Nbd.REPLY_FLAG_DONE).putShort((short) chunkType).putLong(cookie).putInt(length);
        }
    }

    /** Why a stream ended early, for tests. */
    static boolean isHangup(IOException e) {
        return e instanceof Hangup || e instanceof EOFException;
    }
}
