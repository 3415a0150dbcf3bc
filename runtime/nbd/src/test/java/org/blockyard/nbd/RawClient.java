package org.blockyard.nbd;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * A bare NBD client for the protocol tests: the handshake, then requests and replies as raw frames, so a test
 * can send what no real client would. Every read waits at most {@link #DEADLINE}.
 */
final class RawClient implements AutoCloseable {
    static final Duration DEADLINE = Duration.ofSeconds(30);
    private final SocketChannel ch;
    private final ExecutorService reader = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "raw-client");
        t.setDaemon(true);
        return t;
    });
    long size;
    int transmissionFlags;

    /** One reply: a simple reply, or a structured chunk. */
    record Reply(boolean structured, int flags, int type, int error, long cookie, byte[] data) {}

    RawClient(int port) throws IOException {
        ch = SocketChannel.open(new InetSocketAddress("127.0.0.1", port));
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
    }

    /** Greeting, flags, optionally STRUCTURED_REPLY and SET_META_CONTEXT base:allocation, then GO on {@code export}. */
    RawClient go(String export, boolean structured) throws Exception {
        ByteBuffer g = read(18);
        if (g.getLong() != Nbd.NBDMAGIC || g.getLong() != Nbd.IHAVEOPT) throw new IOException("bad greeting");
        send(ByteBuffer.allocate(4).putInt(Nbd.FLAG_FIXED_NEWSTYLE | Nbd.FLAG_NO_ZEROES).flip());
        byte[] name = export.getBytes(StandardCharsets.UTF_8);
        if (structured) {
            option(Nbd.OPT_STRUCTURED_REPLY, new byte[0]);
            expectOptionReply(Nbd.REP_ACK);
            byte[] q = Nbd.BASE_ALLOCATION.getBytes(StandardCharsets.UTF_8);
            option(Nbd.OPT_SET_META_CONTEXT, ByteBuffer.allocate(12 + name.length + q.length).putInt(name.length).put(name)
                    .putInt(1).putInt(q.length).put(q).array());
            expectOptionReply(Nbd.REP_META_CONTEXT);
            expectOptionReply(Nbd.REP_ACK);
        }
        option(Nbd.OPT_GO, ByteBuffer.allocate(6 + name.length).putInt(name.length).put(name).putShort((short) 0).array());
        while (true) {
            ByteBuffer r = optionReply();
            int type = r.getInt(12);
            if (type == Nbd.REP_ACK) return this;
            if (type != Nbd.REP_INFO) throw new IOException("GO answered " + Integer.toHexString(type));
            ByteBuffer d = r.position(20).slice();
            if (d.getShort(0) == Nbd.INFO_EXPORT) {
                size = d.getLong(2);
                transmissionFlags = d.getShort(10);
            }
        }
    }

    void option(int option, byte[] data) throws IOException {
        send(ByteBuffer.allocate(16 + data.length).putLong(Nbd.IHAVEOPT).putInt(option).putInt(data.length).put(data).flip());
    }

    /** One option reply, whole: header (20 bytes) then data. */
    ByteBuffer optionReply() throws Exception {
        ByteBuffer h = read(20);
        if (h.getLong(0) != Nbd.OPT_REPLY_MAGIC) throw new IOException("bad option reply magic");
        int len = h.getInt(16);
        ByteBuffer all = ByteBuffer.allocate(20 + len).put(h.rewind()).put(read(len));
        return all.flip();
    }

    int expectOptionReply(int type) throws Exception {
        int got = optionReply().getInt(12);
        if (got != type) throw new IOException("expected reply type " + type + ", got " + Integer.toHexString(got));
        return got;
    }

    void request(int type, int flags, long cookie, long offset, long length, byte[] data) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(28 + (data == null ? 0 : data.length)).putInt(Nbd.REQUEST_MAGIC)
                .putShort((short) flags).putShort((short) type).putLong(cookie).putLong(offset).putInt((int) length);
        if (data != null) b.put(data);
        send(b.flip());
    }

    /** The next reply; a simple reply to a READ carries {@code readLength} bytes when it succeeded. */
    Reply reply(int readLength) throws Exception {
        ByteBuffer m = read(4);
        int magic = m.getInt(0);
        if (magic == Nbd.SIMPLE_REPLY_MAGIC) {
            ByteBuffer r = read(12);
            int error = r.getInt();
            long cookie = r.getLong();
            byte[] data = error == 0 && readLength > 0 ? read(readLength).array() : new byte[0];
            return new Reply(false, 0, 0, error, cookie, data);
        }
        if (magic != Nbd.STRUCTURED_REPLY_MAGIC) throw new IOException("bad reply magic " + Integer.toHexString(magic));
        ByteBuffer r = read(16);
        int flags = Short.toUnsignedInt(r.getShort()), type = Short.toUnsignedInt(r.getShort());
        long cookie = r.getLong();
        byte[] data = read(r.getInt()).array();
        int error = type == Nbd.REPLY_TYPE_ERROR ? ByteBuffer.wrap(data).getInt() : 0;
        return new Reply(true, flags, type, error, cookie, data);
    }

    /** True when the server closed the connection (within the deadline). */
    boolean closedByServer() throws Exception {
        try {
            ByteBuffer b = ByteBuffer.allocate(1);
            Future<Integer> f = reader.submit(() -> ch.read(b));
            return f.get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS) < 0;
        } catch (java.util.concurrent.ExecutionException e) {
            return e.getCause() instanceof IOException;
        }
    }

    void send(ByteBuffer b) throws IOException {
        while (b.hasRemaining()) ch.write(b);
    }

    ByteBuffer read(int n) throws Exception {
        ByteBuffer b = ByteBuffer.allocate(n);
        Future<?> f = reader.submit(() -> {
            while (b.hasRemaining()) if (ch.read(b) < 0) throw new java.io.EOFException("server closed");
            return null;
        });
        f.get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
        return b.flip();
    }

    @Override
    public void close() throws IOException {
        reader.shutdownNow();
        ch.close();
    }
}
