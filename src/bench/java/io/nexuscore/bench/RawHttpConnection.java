package io.nexuscore.bench;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * One keep-alive HTTP/1.1 connection on a blocking socket channel, for benchmarks that hold
 * thousands of connections open: no thread, no buffer and no event loop per connection while it
 * idles (the client must not be what runs out first). One request at a time; the answer is read in
 * full (Content-Length or chunked) and only its status kept.
 */
final class RawHttpConnection implements AutoCloseable {

    private final SocketChannel channel;
    /** The answer being read; dropped after each exchange, so an idle connection holds no buffer. */
    private ByteBuffer in;

    private RawHttpConnection(SocketChannel channel) {
        this.channel = channel;
    }

    static RawHttpConnection open(int port) throws IOException {
        SocketChannel channel = SocketChannel.open();
        try {
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            channel.connect(new InetSocketAddress("127.0.0.1", port));
            return new RawHttpConnection(channel);
        } catch (IOException e) {
            channel.close();
            throw e;
        }
    }

    /** The bytes of a POST of {@code body} to {@code path}, keep-alive. */
    static byte[] post(String path, byte[] body) {
        byte[] head = ("POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + "Content-Length: " + body.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
        byte[] request = new byte[head.length + body.length];
        System.arraycopy(head, 0, request, 0, head.length);
        System.arraycopy(body, 0, request, head.length, body.length);
        return request;
    }

    /** Sends the request and reads its whole answer; returns the status. Throws when the server closed. */
    int exchange(byte[] request) throws IOException {
        in = ByteBuffer.allocate(16 * 1024);
        try {
            return exchangeInto(request);
        } finally {
            in = null;
        }
    }

    private int exchangeInto(byte[] request) throws IOException {
        ByteBuffer out = ByteBuffer.wrap(request);
        while (out.hasRemaining()) {
            channel.write(out);
        }
        int headEnd;
        while ((headEnd = indexOf(in, "\r\n\r\n")) < 0) {
            fill();
        }
        String head = new String(in.array(), 0, headEnd, StandardCharsets.ISO_8859_1);
        int status = Integer.parseInt(head.substring(9, 12));
        String lower = head.toLowerCase(Locale.ROOT);
        int bodyStart = headEnd + 4;
        int lengthAt = lower.indexOf("\r\ncontent-length:");
        if (lengthAt >= 0) {
            int lineEnd = lower.indexOf("\r\n", lengthAt + 2);
            long length = Long.parseLong(lower.substring(lengthAt + 17, lineEnd < 0 ? lower.length() : lineEnd).trim());
            long have = in.position() - bodyStart;
            while (have < length) {
                in.clear();
                have += fill();
            }
        } else if (lower.contains("\r\ntransfer-encoding: chunked")) {
            while (indexOf(in, "\r\n0\r\n\r\n") < 0) { // the benchmarks' answers fit in the buffer
                fill();
            }
        }
        return status;
    }

    private int fill() throws IOException {
        if (!in.hasRemaining()) {
            throw new IOException("answer head or chunked body larger than " + in.capacity() + " bytes");
        }
        int n = channel.read(in);
        if (n < 0) {
            throw new IOException("the server closed the connection");
        }
        return n;
    }

    private static int indexOf(ByteBuffer buffer, String needle) {
        byte[] a = buffer.array();
        int end = buffer.position() - needle.length();
        outer:
        for (int i = 0; i <= end; i++) {
            for (int j = 0; j < needle.length(); j++) {
                if (a[i + j] != needle.charAt(j)) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
