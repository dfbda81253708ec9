package io.nexuscore.kernel;

import io.nexuscore.kernel.libbpf.Native;
import io.nexuscore.kernel.maps.SocketMarks;
import java.io.Closeable;
import java.net.Inet4Address;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Pointer;
import jnr.ffi.annotations.In;

/**
 * A listening TCP socket through libc, so the test holds the accepted socket's fd and can read its
 * SO_MARK (what the data plane does on its accepted channels).
 */
public final class RawListener implements Closeable {

    public interface Socket {
        int socket(int domain, int type, int protocol);

        int bind(int fd, @In byte[] address, int length);

        int listen(int fd, int backlog);

        int accept(int fd, Pointer address, Pointer length);

        int setsockopt(int fd, int level, int name, @In byte[] value, int length);

        int close(int fd);
    }

    private static final Socket LIBC = LibraryLoader.create(Socket.class).load("c");
    private static final int AF_INET = 2;
    private static final int SOCK_STREAM = 1;
    private static final int SOL_SOCKET = 1;
    private static final int SO_REUSEADDR = 2;
    private static final int SO_RCVTIMEO = 20;

    private final int fd;

    RawListener(Inet4Address address, int port) {
        fd = Native.check(LIBC.socket(AF_INET, SOCK_STREAM, 0), "socket", "AF_INET");
        LIBC.setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, intValue(1), 4);
        // accept() honours SO_RCVTIMEO: a client that never connects cannot hang the test.
        byte[] timeout = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putLong(10).putLong(0).array();
        LIBC.setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, timeout, 16);
        byte[] sockaddr = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putShort((short) AF_INET)
                .order(ByteOrder.BIG_ENDIAN).putShort((short) port).put(address.getAddress()).array();
        Native.check(LIBC.bind(fd, sockaddr, 16), "bind", address.getHostAddress() + ":" + port);
        Native.check(LIBC.listen(fd, 16), "listen", address.getHostAddress() + ":" + port);
    }

    /** Accepts one connection and returns its SO_MARK. */
    int acceptAndReadMark() {
        int client = Native.check(LIBC.accept(fd, null, null), "accept", "listener fd " + fd);
        try {
            return SocketMarks.read(client);
        } finally {
            LIBC.close(client);
        }
    }

    private static byte[] intValue(int v) {
        return ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(v).array();
    }

    @Override
    public void close() {
        LIBC.close(fd);
    }
}
