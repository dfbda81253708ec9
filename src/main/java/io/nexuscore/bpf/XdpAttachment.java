package io.nexuscore.bpf;

import io.nexuscore.config.KernelConfig;
import jnr.ffi.Pointer;
import jnr.ffi.byref.IntByReference;

/**
 * The XDP program on one interface. Attaching never displaces another program
 * (XDP_FLAGS_UPDATE_IF_NOEXIST: a second router on the same interface fails with EBUSY/EEXIST);
 * {@link #replace} and {@link #detach} only act while our program is still the attached one
 * (XDP_FLAGS_REPLACE with the expected old fd), so the swap is atomic.
 */
final class XdpAttachment {

    private static final int XDP_FLAGS_UPDATE_IF_NOEXIST = 1;
    private static final int XDP_FLAGS_SKB_MODE = 1 << 1;
    private static final int XDP_FLAGS_DRV_MODE = 1 << 2;
    private static final int XDP_FLAGS_REPLACE = 1 << 4;

    private final NetInterface netInterface;
    private final int modeFlag;
    private BpfProgram attached;

    private XdpAttachment(NetInterface netInterface, int modeFlag, BpfProgram attached) {
        this.netInterface = netInterface;
        this.modeFlag = modeFlag;
        this.attached = attached;
    }

    static XdpAttachment attach(NetInterface netInterface, BpfProgram program, KernelConfig.XdpMode mode) {
        int modeFlag = mode == KernelConfig.XdpMode.NATIVE ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE;
        Native.check(LibBpf.get().bpf_xdp_attach(netInterface.index(), program.fd(),
                modeFlag | XDP_FLAGS_UPDATE_IF_NOEXIST, null), "bpf_xdp_attach", netInterface.name());
        return new XdpAttachment(netInterface, modeFlag, program);
    }

    /** Atomically swaps in {@code next}; fails (EEXIST) if someone replaced our program meanwhile. */
    void replace(BpfProgram next) {
        Pointer opts = Opts.allocate(Opts.XDP_ATTACH_SIZE);
        opts.putInt(Opts.XDP_ATTACH_OLD_PROG_FD, attached.fd());
        Native.check(LibBpf.get().bpf_xdp_attach(netInterface.index(), next.fd(), modeFlag | XDP_FLAGS_REPLACE, opts),
                "bpf_xdp_attach(replace)", netInterface.name());
        attached = next;
    }

    void detach() {
        Pointer opts = Opts.allocate(Opts.XDP_ATTACH_SIZE);
        opts.putInt(Opts.XDP_ATTACH_OLD_PROG_FD, attached.fd());
        Native.check(LibBpf.get().bpf_xdp_attach(netInterface.index(), -1, modeFlag | XDP_FLAGS_REPLACE, opts),
                "bpf_xdp_attach(detach)", netInterface.name());
    }

    /** Id of the program attached in our mode on the interface, 0 when none. */
    int attachedProgramId() {
        IntByReference id = new IntByReference(0);
        Native.check(LibBpf.get().bpf_xdp_query_id(netInterface.index(), modeFlag, id),
                "bpf_xdp_query_id", netInterface.name());
        return id.intValue();
    }

    NetInterface netInterface() {
        return netInterface;
    }
}
