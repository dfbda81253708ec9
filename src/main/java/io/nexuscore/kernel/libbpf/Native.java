package io.nexuscore.kernel.libbpf;

import jnr.ffi.LastError;
import jnr.ffi.Pointer;

/** The one place where native results become exceptions (see {@link BpfException}). */
public final class Native {

    private Native() {
    }

    /** libbpf and bpf(2) wrappers return a negative errno; libc calls return -1 with errno set. */
    public static int check(int result, String call, String object) {
        if (result < 0) {
            int errno = result == -1 ? lastErrorOr(1) : -result;
            throw new BpfException(call, object, errno);
        }
        return result;
    }

    /** libbpf returns NULL and sets errno. */
    public static Pointer check(Pointer result, String call, String object) {
        if (result == null || result.address() == 0) {
            throw new BpfException(call, object, lastErrorOr(Errno.EINVAL));
        }
        return result;
    }

    private static int lastErrorOr(int fallback) {
        // errno is per thread, not per library: the system runtime reads it without loading libbpf.
        int errno = LastError.getLastError(jnr.ffi.Runtime.getSystemRuntime());
        return errno > 0 ? errno : fallback;
    }
}
