package io.nexuscore.dataplane;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;

/** Writes raw bytes to the router and reads what comes back until the server closes (or 5 s pass). */
final class RawHttp {

    /** What the server sent, and whether it closed the connection. */
    record Exchange(String response, boolean closedByServer) {
        int status() {
            return Integer.parseInt(response.substring(9, 12));
        }

        String body() {
            int split = response.indexOf("\r\n\r\n");
            return split < 0 ? "" : response.substring(split + 4);
        }

        /** The status of every response on the connection, in order (pipelining). */
        java.util.List<String> statuses() {
            return java.util.regex.Pattern.compile("HTTP/1\\.1 (\\d{3}) ").matcher(response).results()
                    .map(match -> match.group(1)).toList();
        }

        boolean hasHeader(String name, String value) {
            String head = response.substring(0, Math.max(0, response.indexOf("\r\n\r\n"))).toLowerCase();
            return head.contains("\r\n" + name.toLowerCase() + ": " + value.toLowerCase());
        }
    }

    private RawHttp() {
    }

    static Exchange exchange(int port, byte[]... parts) throws IOException {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
            socket.setSoTimeout(5_000);
            for (byte[] part : parts) {
                try {
                    socket.getOutputStream().write(part);
                    socket.getOutputStream().flush();
                } catch (IOException e) {
                    break; // the server may close before taking everything: that is the point of some tests
                }
            }
            ByteArrayOutputStream received = new ByteArrayOutputStream();
            InputStream in = socket.getInputStream();
            byte[] buffer = new byte[8192];
            boolean closed = false;
            try {
                for (int n; (n = in.read(buffer)) >= 0; ) {
                    received.write(buffer, 0, n);
                }
                closed = true;
            } catch (SocketTimeoutException e) {
                closed = false;
            } catch (IOException e) {
                closed = true; // reset by the server
            }
            return new Exchange(received.toString(StandardCharsets.ISO_8859_1), closed);
        }
    }

    static byte[] ascii(String text) {
        return text.getBytes(StandardCharsets.ISO_8859_1);
    }
}
