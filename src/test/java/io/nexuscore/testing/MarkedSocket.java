package io.nexuscore.testing;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Runtime;
import jnr.ffi.annotations.In;
import jnr.ffi.annotations.Out;

/**
 * A blocking TCP client whose socket carries an SO_MARK (needs CAP_NET_ADMIN), so its SYN carries
 * the mark like one the router's TC program marked. Java's Socket cannot set SO_MARK; libc can.
 */
public final class MarkedSocket {

    /** The part of libc this client needs. */
    public interface LibC {
        int socket(int domain, int type, int protocol);

        int setsockopt(int fd, int level, int optname, @In int[] optval, int optlen);

        int connect(int fd, @In byte[] address, int addressLength);

        long write(int fd, @In byte[] buffer, long count);

        long read(int fd, @Out byte[] buffer, long count);

        int close(int fd);

        String strerror(int errnum);
    }

    private static final LibC LIBC = LibraryLoader.create(LibC.class).load("c");
    private static final int AF_INET = 2;
    private static final int SOCK_STREAM = 1;
    private static final int SOL_SOCKET = 1;
    private static final int SO_MARK = 36;

    private MarkedSocket() {
    }

    /** Connects to 127.0.0.1:port with the given mark, sends the request, returns everything until EOF. */
    public static String exchange(int port, int mark, String request) {
        int fd = check("socket", LIBC.socket(AF_INET, SOCK_STREAM, 0));
        try {
            check("setsockopt(SO_MARK)", LIBC.setsockopt(fd, SOL_SOCKET, SO_MARK, new int[] {mark}, Integer.BYTES));
            byte[] address = new byte[16]; // struct sockaddr_in: family (host order), port and address (network order)
            address[0] = AF_INET;
            address[2] = (byte) (port >>> 8);
            address[3] = (byte) port;
            address[4] = 127;
            address[7] = 1;
            check("connect", LIBC.connect(fd, address, address.length));
            byte[] bytes = request.getBytes(StandardCharsets.ISO_8859_1);
            check("write", (int) LIBC.write(fd, bytes, bytes.length));
            ByteArrayOutputStream response = new ByteArrayOutputStream();
            byte[] buffer = new byte[8192];
            for (long n; (n = check("read", (int) LIBC.read(fd, buffer, buffer.length))) > 0; ) {
                response.write(buffer, 0, (int) n);
            }
            return response.toString(StandardCharsets.ISO_8859_1);
        } finally {
            LIBC.close(fd);
        }
    }

    private static int check(String call, int result) {
        if (result < 0) {
            int errno = Runtime.getRuntime(LIBC).getLastError();
            throw new IllegalStateException(call + ": " + LIBC.strerror(errno) + " (errno " + errno + ")");
        }
        return result;
    }
}
