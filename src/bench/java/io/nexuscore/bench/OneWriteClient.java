package io.nexuscore.bench;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * An HTTP/1.1 client that writes a request's head and body with one write() on a fresh connection
 * (Connection: close, TCP_NODELAY), as curl and wrk send small requests: the body shares the head's
 * segment, which is what the kernel's prompt estimate reads. Reads the status line and headers of
 * the answer and drains the rest until the server closes.
 */
final class OneWriteClient {

    /** A status and the response headers, names lower-cased (the first value of each). */
    record Answer(int status, Map<String, String> headers) {
        String header(String lowerCaseName) {
            return headers.get(lowerCaseName);
        }
    }

    private OneWriteClient() {
    }

    static Answer post(URI url, String path, String json) throws IOException {
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        String head = "POST " + path + " HTTP/1.1\r\nHost: " + url.getHost() + ":" + url.getPort()
                + "\r\nContent-Type: application/json\r\nContent-Length: " + body.length + "\r\nConnection: close\r\n\r\n";
        ByteArrayOutputStream request = new ByteArrayOutputStream(head.length() + body.length);
        request.writeBytes(head.getBytes(StandardCharsets.ISO_8859_1));
        request.writeBytes(body);
        try (Socket socket = new Socket()) {
            socket.setTcpNoDelay(true);
            socket.setSoTimeout(60_000);
            socket.connect(new InetSocketAddress(url.getHost(), url.getPort()), 5_000);
            OutputStream out = socket.getOutputStream();
            out.write(request.toByteArray()); // one write: one segment on loopback (MTU 64 KiB)
            out.flush();
            return read(socket.getInputStream());
        }
    }

    private static Answer read(InputStream in) throws IOException {
        byte[] all = in.readAllBytes();
        String text = new String(all, StandardCharsets.ISO_8859_1);
        int headEnd = text.indexOf("\r\n\r\n");
        if (headEnd < 0 || !text.startsWith("HTTP/1.1 ")) {
            throw new IOException("no HTTP response head in " + all.length + " bytes");
        }
        String[] lines = text.substring(0, headEnd).split("\r\n");
        int status = Integer.parseInt(lines[0].substring(9, 12));
        Map<String, String> headers = new HashMap<>();
        for (int i = 1; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            if (colon > 0) {
                headers.putIfAbsent(lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT), lines[i].substring(colon + 1).trim());
            }
        }
        return new Answer(status, headers);
    }
}
