package io.nexuscore.kernel.libbpf;

import jnr.ffi.LibraryLoader;
import jnr.ffi.Pointer;
import jnr.ffi.annotations.In;
import jnr.ffi.annotations.Out;
import jnr.ffi.types.size_t;
import jnr.ffi.byref.IntByReference;

/**
 * The router's one libc binding: the few calls the loader needs (interface indexes, bpffs mount,
 * libbpf log formatting, SO_MARK, mmap of BPF_F_MMAPABLE maps) and the tier workers' CPU pinning.
 * Failures go through {@link Native#check}.
 */
public interface LibC {

    int SOL_SOCKET = 1;
    int SO_MARK = 36;
    int PROT_READ = 1;
    int PROT_WRITE = 2;
    int MAP_SHARED = 0x01;
    int MAP_PRIVATE = 0x02;
    int MAP_FIXED = 0x10;
    int MAP_ANONYMOUS = 0x20;
    /** mmap's MAP_FAILED, (void *) -1. */
    long MAP_FAILED = -1L;

    int if_nametoindex(String name);

    int close(int fd);

    int O_RDONLY = 0;
    int O_NONBLOCK = 0x800;
    int O_NOFOLLOW = 0x20000;
    int O_CLOEXEC = 0x80000;
    int ELOOP = 40;

    int open(String path, int flags);

    int O_DIRECTORY = 0x10000;

    /** openat(2): {@code path} resolved relative to the directory {@code dirfd}. */
    int openat(int dirfd, String path, int flags);

    @jnr.ffi.types.ssize_t long read(int fd, @Out byte[] buffer, @size_t long count);

    int dup(int fd);

    int mount(String source, String target, String fsType, long flags, String data);

    int vsnprintf(Pointer buffer, long size, Pointer format, Pointer args);

    int getsockopt(int fd, int level, int name, @Out byte[] value, IntByReference length);

    int setsockopt(int fd, int level, int name, @In byte[] value, int length);

    Pointer mmap(Pointer address, @size_t long length, int prot, int flags, int fd, @size_t long offset);

    int munmap(Pointer address, @size_t long length);

    int mprotect(Pointer address, @size_t long length, int prot);

    /** pid 0 is the calling thread; the mask is a cpu_set_t (unsigned longs), read only. */
    int sched_setaffinity(int pid, @size_t long cpusetsize, @In byte[] mask);

    static LibC get() {
        return Holder.LIB;
    }

    final class Holder {
        private static final LibC LIB = LibraryLoader.create(LibC.class).load("c");

        private Holder() {
        }
    }
}
