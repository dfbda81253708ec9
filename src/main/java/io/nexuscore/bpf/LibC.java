package io.nexuscore.bpf;

import jnr.ffi.LibraryLoader;
import jnr.ffi.Pointer;
import jnr.ffi.annotations.In;
import jnr.ffi.annotations.Out;
import jnr.ffi.byref.IntByReference;

/** The few libc calls the loader needs: interface indexes, bpffs mount, libbpf log formatting, SO_MARK. */
public interface LibC {

    int SOL_SOCKET = 1;
    int SO_MARK = 36;

    int if_nametoindex(String name);

    int close(int fd);

    int mount(String source, String target, String fsType, long flags, Pointer data);

    int vsnprintf(Pointer buffer, long size, Pointer format, Pointer args);

    int getsockopt(int fd, int level, int name, @Out byte[] value, IntByReference length);

    int setsockopt(int fd, int level, int name, @In byte[] value, int length);

    static LibC get() {
        return Holder.LIB;
    }

    final class Holder {
        private static final LibC LIB = LibraryLoader.create(LibC.class).load("c");

        private Holder() {
        }
    }
}
