package io.nexuscore.bpf;

import jnr.ffi.Pointer;

/**
 * The TC classify program as a clsact ingress filter on one interface, at a fixed handle and
 * priority so that {@link #replace} (BPF_TC_F_REPLACE) swaps it atomically. Detach deletes that one
 * filter (by handle and priority: never the other filters at the same priority), and the clsact
 * qdisc only when this attachment created it and no filter of anyone else is left on it.
 */
final class TcAttachment {

    private static final int BPF_TC_INGRESS = 1;
    private static final int BPF_TC_EGRESS = 2;
    private static final int BPF_TC_F_REPLACE = 1;
    /** "NX": our filter's handle. */
    static final int HANDLE = 0x4e58;
    static final int PRIORITY = 1;

    private final NetInterface netInterface;
    private final boolean createdQdisc;

    private TcAttachment(NetInterface netInterface, boolean createdQdisc) {
        this.netInterface = netInterface;
        this.createdQdisc = createdQdisc;
    }

    static TcAttachment attach(NetInterface netInterface, BpfProgram program) {
        int rc = LibBpf.get().bpf_tc_hook_create(hook(netInterface, BPF_TC_INGRESS));
        boolean created = rc != -Errno.EEXIST;
        if (created) {
            Native.check(rc, "bpf_tc_hook_create", netInterface.name());
        }
        TcAttachment attachment = new TcAttachment(netInterface, created);
        try {
            Native.check(LibBpf.get().bpf_tc_attach(hook(netInterface, BPF_TC_INGRESS), opts(program.fd(), 0)),
                    "bpf_tc_attach", netInterface.name());
        } catch (BpfException e) {
            attachment.destroyQdiscIfOurs();
            throw e;
        }
        return attachment;
    }

    void replace(BpfProgram next) {
        Native.check(LibBpf.get().bpf_tc_attach(hook(netInterface, BPF_TC_INGRESS), opts(next.fd(), BPF_TC_F_REPLACE)),
                "bpf_tc_attach(replace)", netInterface.name());
    }

    void detach() {
        try {
            // bpf_tc_detach wants prog_fd, flags and prog_id zero: the filter is named by handle and priority.
            Native.check(LibBpf.get().bpf_tc_detach(hook(netInterface, BPF_TC_INGRESS), opts(0, 0)),
                    "bpf_tc_detach", netInterface.name());
        } finally {
            destroyQdiscIfOurs();
        }
    }

    /** Id of the program in our filter slot, 0 when the slot is empty. */
    int attachedProgramId() {
        Pointer opts = opts(0, 0);
        int rc = LibBpf.get().bpf_tc_query(hook(netInterface, BPF_TC_INGRESS), opts);
        if (rc == -Errno.ENOENT) {
            return 0;
        }
        Native.check(rc, "bpf_tc_query", netInterface.name());
        return opts.getInt(Opts.TC_OPTS_PROG_ID);
    }

    private void destroyQdiscIfOurs() {
        if (createdQdisc && clsactEmpty(netInterface.name())) {
            int rc = LibBpf.get().bpf_tc_hook_destroy(hook(netInterface, BPF_TC_INGRESS | BPF_TC_EGRESS));
            if (rc != -Errno.ENOENT && rc != -Errno.EINVAL) {
                Native.check(rc, "bpf_tc_hook_destroy", netInterface.name());
            }
        }
    }

    /**
     * True when no filter is left on the interface's clsact ingress and egress. libbpf cannot list
     * filters, so this asks tc (iproute2); when tc cannot tell, the qdisc stays: leaving an empty
     * clsact is harmless, deleting someone's filters with it is not.
     */
    static boolean clsactEmpty(String device) {
        for (String direction : new String[] {"ingress", "egress"}) {
            try {
                Process p = new ProcessBuilder("tc", "filter", "show", "dev", device, direction)
                        .redirectErrorStream(true).start();
                String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
                if (!p.waitFor(10, java.util.concurrent.TimeUnit.SECONDS) || p.exitValue() != 0 || !out.isBlank()) {
                    return false;
                }
            } catch (java.io.IOException e) {
                return false;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return true;
    }

    private static Pointer hook(NetInterface netInterface, int attachPoint) {
        Pointer hook = Opts.allocate(Opts.TC_HOOK_SIZE);
        hook.putInt(Opts.TC_HOOK_IFINDEX, netInterface.index());
        hook.putInt(Opts.TC_HOOK_ATTACH_POINT, attachPoint);
        return hook;
    }

    private static Pointer opts(int progFd, int flags) {
        Pointer opts = Opts.allocate(Opts.TC_OPTS_SIZE);
        opts.putInt(Opts.TC_OPTS_PROG_FD, progFd);
        opts.putInt(Opts.TC_OPTS_FLAGS, flags);
        opts.putInt(Opts.TC_OPTS_HANDLE, HANDLE);
        opts.putInt(Opts.TC_OPTS_PRIORITY, PRIORITY);
        return opts;
    }

    NetInterface netInterface() {
        return netInterface;
    }
}
