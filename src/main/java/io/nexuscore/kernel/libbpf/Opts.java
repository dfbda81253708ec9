package io.nexuscore.kernel.libbpf;

import jnr.ffi.Memory;
import jnr.ffi.Pointer;

/**
 * libbpf option structs as zeroed native memory. Sizes and offsets are libbpf 1.1's (libbpf.h,
 * bpf.h); every struct starts with {@code size_t sz} holding its own size.
 */
public final class Opts {

    /** struct bpf_test_run_opts (80 bytes). */
    static final int TEST_RUN_SIZE = 80;
    static final int TEST_RUN_DATA_IN = 8;
    static final int TEST_RUN_DATA_OUT = 16;
    static final int TEST_RUN_DATA_SIZE_IN = 24;
    static final int TEST_RUN_DATA_SIZE_OUT = 28;
    static final int TEST_RUN_CTX_IN = 32;
    static final int TEST_RUN_CTX_OUT = 40;
    static final int TEST_RUN_CTX_SIZE_IN = 48;
    static final int TEST_RUN_CTX_SIZE_OUT = 52;
    static final int TEST_RUN_RETVAL = 56;
    static final int TEST_RUN_REPEAT = 60;
    static final int TEST_RUN_DURATION = 64;

    private Opts() {
    }

    public static Pointer allocate(int size) {
        Pointer p = Memory.allocateDirect(LibBpf.runtime(), size, true);
        p.putLong(0, size);
        return p;
    }

    static Pointer copyOf(byte[] bytes) {
        Pointer p = Memory.allocateDirect(LibBpf.runtime(), Math.max(1, bytes.length), true);
        p.put(0, bytes, 0, bytes.length);
        return p;
    }

    public static Pointer zeroed(int size) {
        return Memory.allocateDirect(LibBpf.runtime(), Math.max(1, size), true);
    }
}
