package io.nexuscore.dataplane;

import jnr.ffi.LibraryLoader;
import jnr.ffi.Runtime;
import jnr.ffi.annotations.In;
import jnr.ffi.annotations.Out;

/** Reads SO_MARK of a socket by fd: getsockopt(2) through a two-function libc binding. */
final class SocketMarks {

    private static final int SOL_SOCKET = 1;
    private static final int SO_MARK = 36;

    /** The part of libc this class needs. */
    public interface LibC {
        int getsockopt(int sockfd, int level, int optname, @Out int[] optval, @In @Out int[] optlen);

        String strerror(int errnum);
    }

    private static final LibC LIBC = LibraryLoader.create(LibC.class).load("c");
    private static final Runtime RUNTIME = Runtime.getRuntime(LIBC);

    private SocketMarks() {
    }

    /** The socket's mark; throws naming the call, the fd and errno on failure. */
    static int read(int fd) {
        int[] value = new int[1];
        int[] length = {Integer.BYTES};
        if (LIBC.getsockopt(fd, SOL_SOCKET, SO_MARK, value, length) != 0) {
            int errno = RUNTIME.getLastError();
            throw new IllegalStateException("getsockopt(fd " + fd + ", SOL_SOCKET, SO_MARK): "
                    + LIBC.strerror(errno) + " (errno " + errno + ")");
        }
        return value[0];
    }
}
