package io.nexuscore.kernel.libbpf;

import jnr.ffi.Memory;
import jnr.ffi.Pointer;
import jnr.ffi.byref.IntByReference;

/** A loaded program: its fd (owned by its {@link BpfObject}), id, run statistics, test runs. */
public final class BpfProgram {

    /** struct bpf_prog_info offsets (uapi/linux/bpf.h). */
    private static final int INFO_SIZE = 256;
    private static final int INFO_ID = 4;
    private static final int INFO_NR_MAP_IDS = 52;
    private static final int INFO_MAP_IDS = 56;
    private static final int MAX_MAPS = 64;
    private static final int INFO_RUN_TIME_NS = 192;
    private static final int INFO_RUN_CNT = 200;

    private final String name;
    private final int fd;

    BpfProgram(String name, int fd) {
        this.name = name;
        this.fd = fd;
    }

    public String name() {
        return name;
    }

    public int fd() {
        return fd;
    }

    /** The kernel's program id (as bpftool prog show lists it). */
    public int id() {
        return info().getInt(INFO_ID);
    }

    /** Cumulative run time and count; both stay 0 unless kernel.bpf_stats_enabled=1. */
    public ProgramStats stats() {
        Pointer info = info();
        return new ProgramStats(name, info.getInt(INFO_ID), info.getLong(INFO_RUN_TIME_NS), info.getLong(INFO_RUN_CNT));
    }

    /**
     * A map this program uses, found by name among the program's map ids (the kernel cuts names at
     * 15 characters): for maps that are not pinned. The caller closes it.
     *
     * @param valueSize per CPU for per-CPU maps, see {@link BpfMap#perCpu}
     */
    public BpfMap usedMap(String mapName, int keySize, int valueSize) {
        Pointer ids = Memory.allocateDirect(LibBpf.runtime(), MAX_MAPS * 4, true);
        Pointer info = Memory.allocateDirect(LibBpf.runtime(), INFO_SIZE, true);
        info.putInt(INFO_NR_MAP_IDS, MAX_MAPS);
        info.putLong(INFO_MAP_IDS, ids.address());
        IntByReference length = new IntByReference(INFO_SIZE);
        Native.check(LibBpf.get().bpf_obj_get_info_by_fd(fd, info, length), "bpf_obj_get_info_by_fd", name);
        String kernelName = mapName.length() > 15 ? mapName.substring(0, 15) : mapName;
        int count = Math.min(info.getInt(INFO_NR_MAP_IDS), MAX_MAPS);
        for (int i = 0; i < count; i++) {
            int mapFd = Native.check(LibBpf.get().bpf_map_get_fd_by_id(ids.getInt(i * 4L)), "bpf_map_get_fd_by_id",
                    name + ":" + mapName);
            BpfMap map = BpfMap.ownFd(mapName, mapFd, keySize, valueSize);
            if (map.info().name().equals(kernelName)) {
                return map;
            }
            map.close();
        }
        throw new BpfException("bpf_obj_get_info_by_fd", name + ": no map " + mapName, Errno.ENOENT);
    }

    private Pointer info() {
        Pointer info = Memory.allocateDirect(LibBpf.runtime(), INFO_SIZE, true);
        IntByReference length = new IntByReference(INFO_SIZE);
        Native.check(LibBpf.get().bpf_obj_get_info_by_fd(fd, info, length), "bpf_obj_get_info_by_fd", name);
        return info;
    }

    /**
     * BPF_PROG_TEST_RUN: runs the program {@code repeat} times on {@code packet} (and, for TC
     * programs, a {@code struct __sk_buff} context). Returns the program's return value, the mean
     * duration per run, the packet and context as the program left them.
     */
    public TestRun testRun(byte[] packet, byte[] context, int repeat) {
        Pointer opts = Opts.allocate(Opts.TEST_RUN_SIZE);
        Pointer dataIn = Opts.copyOf(packet);
        Pointer dataOut = Opts.zeroed(packet.length + 256);
        opts.putAddress(Opts.TEST_RUN_DATA_IN, dataIn.address());
        opts.putInt(Opts.TEST_RUN_DATA_SIZE_IN, packet.length);
        opts.putAddress(Opts.TEST_RUN_DATA_OUT, dataOut.address());
        opts.putInt(Opts.TEST_RUN_DATA_SIZE_OUT, packet.length + 256);
        Pointer ctxOut = null;
        if (context != null) {
            Pointer ctxIn = Opts.copyOf(context);
            ctxOut = Opts.zeroed(context.length);
            opts.putAddress(Opts.TEST_RUN_CTX_IN, ctxIn.address());
            opts.putInt(Opts.TEST_RUN_CTX_SIZE_IN, context.length);
            opts.putAddress(Opts.TEST_RUN_CTX_OUT, ctxOut.address());
            opts.putInt(Opts.TEST_RUN_CTX_SIZE_OUT, context.length);
        }
        opts.putInt(Opts.TEST_RUN_REPEAT, repeat);
        Native.check(LibBpf.get().bpf_prog_test_run_opts(fd, opts), "bpf_prog_test_run_opts", name);
        byte[] out = new byte[opts.getInt(Opts.TEST_RUN_DATA_SIZE_OUT)];
        dataOut.get(0, out, 0, out.length);
        byte[] contextOut = null;
        if (ctxOut != null) {
            contextOut = new byte[opts.getInt(Opts.TEST_RUN_CTX_SIZE_OUT)];
            ctxOut.get(0, contextOut, 0, contextOut.length);
        }
        return new TestRun(opts.getInt(Opts.TEST_RUN_RETVAL), opts.getInt(Opts.TEST_RUN_DURATION) & 0xffffffffL,
                out, contextOut);
    }

    /**
     * BPF_PROG_TEST_RUN of a SEC("syscall") program: no packet, no context, once. Returns the
     * program's return value.
     */
    public int runSyscall() {
        Pointer opts = Opts.allocate(Opts.TEST_RUN_SIZE);
        Native.check(LibBpf.get().bpf_prog_test_run_opts(fd, opts), "bpf_prog_test_run_opts", name);
        return opts.getInt(Opts.TEST_RUN_RETVAL);
    }

    /** Result of {@link #testRun}. */
    public record TestRun(int returnValue, long meanDurationNs, byte[] packetOut, byte[] contextOut) {
    }

    @Override
    public String toString() {
        return name + " (fd " + fd + ")";
    }
}
