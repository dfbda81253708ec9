package io.nexuscore.kernel;

import io.nexuscore.kernel.libbpf.BpfProgram;
import io.nexuscore.kernel.libbpf.LibBpf;
import io.nexuscore.kernel.libbpf.LibC;
import io.nexuscore.kernel.libbpf.Native;
import io.nexuscore.kernel.libbpf.NetInterface;
import io.nexuscore.kernel.libbpf.Opts;
import io.nexuscore.config.KernelConfig;
import jnr.ffi.Pointer;
import jnr.ffi.byref.IntByReference;

/**
 * One of our programs on one interface, held by a bpf_link (BPF_LINK_CREATE): the XDP program, or
 * the TC classify program at the tcx ingress hook.
 *
 * <p>Why links and not netlink/clsact attachments: a link lives as long as its fd, so a router that
 * dies any way at all (SIGKILL, OOM killer) takes its programs with it, and the next start does not
 * find the hook busy. While the link holds the hook, nobody displaces our program by netlink
 * (`ip link set … xdp` fails EBUSY), and we never displace theirs: BPF_LINK_CREATE fails with EBUSY
 * on an interface that already has an XDP program. tcx programs run beside a clsact qdisc and its
 * filters without touching them, so there is no qdisc to create or remove.
 *
 * <p>libbpf 1.1 has no tcx wrapper; its generic bpf_link_create passes the attach type through.
 */
final class InterfaceLink {

    /** enum bpf_attach_type (uapi/linux/bpf.h). */
    private static final int BPF_XDP = 37;
    private static final int BPF_TCX_INGRESS = 46;
    private static final int XDP_FLAGS_SKB_MODE = 1 << 1;
    private static final int XDP_FLAGS_DRV_MODE = 1 << 2;
    /** BPF_LINK_UPDATE: swap only while the link still holds old_prog_fd. */
    private static final int BPF_F_REPLACE = 1 << 2;

    /** struct bpf_link_create_opts (libbpf 1.1): sz, flags, then fields we leave zero. */
    private static final int LINK_CREATE_OPTS_SIZE = 64;
    private static final int LINK_CREATE_OPTS_FLAGS = 8;
    /** struct bpf_link_update_opts { size_t sz; __u32 flags; __u32 old_prog_fd; } */
    private static final int LINK_UPDATE_OPTS_SIZE = 16;
    private static final int LINK_UPDATE_OPTS_FLAGS = 8;
    private static final int LINK_UPDATE_OPTS_OLD_PROG_FD = 12;
    /** struct bpf_link_info: type, id, prog_id, then a union (8-aligned) whose xdp and tcx start with ifindex. */
    private static final int LINK_INFO_SIZE = 64;
    private static final int LINK_INFO_PROG_ID = 8;
    private static final int LINK_INFO_IFINDEX = 16;

    private final NetInterface netInterface;
    private final String hook;
    private final int linkFd;
    private BpfProgram attached;
    private boolean detached;

    private InterfaceLink(NetInterface netInterface, String hook, int linkFd, BpfProgram attached) {
        this.netInterface = netInterface;
        this.hook = hook;
        this.linkFd = linkFd;
        this.attached = attached;
    }

    static InterfaceLink xdp(NetInterface netInterface, BpfProgram program, KernelConfig.XdpMode mode) {
        int modeFlag = mode == KernelConfig.XdpMode.NATIVE ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE;
        return create(netInterface, program, BPF_XDP, modeFlag, "XDP");
    }

    static InterfaceLink tcxIngress(NetInterface netInterface, BpfProgram program) {
        return create(netInterface, program, BPF_TCX_INGRESS, 0, "tcx ingress");
    }

    private static InterfaceLink create(NetInterface netInterface, BpfProgram program, int attachType, int flags,
                                        String hook) {
        Pointer opts = Opts.allocate(LINK_CREATE_OPTS_SIZE);
        opts.putInt(LINK_CREATE_OPTS_FLAGS, flags);
        int fd = Native.check(LibBpf.get().bpf_link_create(program.fd(), netInterface.index(), attachType, opts),
                "bpf_link_create(" + hook + ")", netInterface.name());
        return new InterfaceLink(netInterface, hook, fd, program);
    }

    /** Atomically swaps in {@code next}; fails (EPERM) if the link no longer holds our program. */
    void replace(BpfProgram next) {
        requireAttached();
        Pointer opts = Opts.allocate(LINK_UPDATE_OPTS_SIZE);
        opts.putInt(LINK_UPDATE_OPTS_FLAGS, BPF_F_REPLACE);
        opts.putInt(LINK_UPDATE_OPTS_OLD_PROG_FD, attached.fd());
        Native.check(LibBpf.get().bpf_link_update(linkFd, next.fd(), opts),
                "bpf_link_update(" + hook + ")", netInterface.name());
        attached = next;
    }

    /** Detaches the program and closes the link; a second call does nothing. */
    void detach() {
        if (detached) {
            return;
        }
        detached = true;
        try {
            Native.check(LibBpf.get().bpf_link_detach(linkFd), "bpf_link_detach(" + hook + ")", netInterface.name());
        } finally {
            // Closing the last fd detaches too; detaching first makes a failure visible.
            LibC.get().close(linkFd);
        }
    }

    /**
     * Id of the program this link holds on the interface, 0 once the link is detached (by us, or by
     * someone with the link's id: `bpftool link detach id N`).
     */
    int attachedProgramId() {
        if (detached) {
            return 0;
        }
        Pointer info = Opts.zeroed(LINK_INFO_SIZE);
        IntByReference length = new IntByReference(LINK_INFO_SIZE);
        Native.check(LibBpf.get().bpf_obj_get_info_by_fd(linkFd, info, length),
                "bpf_obj_get_info_by_fd(" + hook + " link)", netInterface.name());
        return info.getInt(LINK_INFO_IFINDEX) == 0 ? 0 : info.getInt(LINK_INFO_PROG_ID);
    }

    NetInterface netInterface() {
        return netInterface;
    }

    private void requireAttached() {
        if (detached) {
            throw new IllegalStateException(hook + " link on " + netInterface.name() + " is detached");
        }
    }
}
