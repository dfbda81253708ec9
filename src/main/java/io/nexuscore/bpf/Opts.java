package io.nexuscore.bpf;

import jnr.ffi.Memory;
import jnr.ffi.Pointer;

/**
 * libbpf option structs as zeroed native memory. Sizes and offsets are libbpf 1.1's (libbpf.h,
 * bpf.h); every struct starts with {@code size_t sz} holding its own size.
 */
final class Opts {

    /** struct bpf_xdp_attach_opts { size_t sz; int old_prog_fd; } */
    static final int XDP_ATTACH_SIZE = 16;
    static final int XDP_ATTACH_OLD_PROG_FD = 8;

    /** struct bpf_tc_hook { size_t sz; int ifindex; enum attach_point; __u32 parent; } */
    static final int TC_HOOK_SIZE = 24;
    static final int TC_HOOK_IFINDEX = 8;
    static final int TC_HOOK_ATTACH_POINT = 12;

    /** struct bpf_tc_opts { size_t sz; int prog_fd; __u32 flags, prog_id, handle, priority; } */
    static final int TC_OPTS_SIZE = 32;
    static final int TC_OPTS_PROG_FD = 8;
    static final int TC_OPTS_FLAGS = 12;
    static final int TC_OPTS_PROG_ID = 16;
    static final int TC_OPTS_HANDLE = 20;
    static final int TC_OPTS_PRIORITY = 24;

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

    static Pointer allocate(int size) {
        Pointer p = Memory.allocateDirect(LibBpf.runtime(), size, true);
        p.putLong(0, size);
        return p;
    }

    static Pointer copyOf(byte[] bytes) {
        Pointer p = Memory.allocateDirect(LibBpf.runtime(), Math.max(1, bytes.length), true);
        p.put(0, bytes, 0, bytes.length);
        return p;
    }

    static Pointer zeroed(int size) {
        return Memory.allocateDirect(LibBpf.runtime(), Math.max(1, size), true);
    }
}
