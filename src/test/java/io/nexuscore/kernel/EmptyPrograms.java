package io.nexuscore.kernel;

import io.nexuscore.kernel.libbpf.BpfObject;
import io.nexuscore.kernel.libbpf.BpfProgram;
import io.nexuscore.kernel.libbpf.NetInterface;
import io.nexuscore.kernel.libbpf.ProgramStats;
import io.nexuscore.config.KernelConfig;
import java.nio.file.Path;
import java.util.List;

/**
 * bench/bpf/nexus_empty.bpf.o attached to one interface: an XDP program (generic mode, as the bench
 * attaches the router's) and a TC ingress program that do nothing. Their BPF_ENABLE_STATS figures
 * under real traffic are the floor every program on that interface pays on this machine (the
 * kernel's timing of the run, the call), measured beside the router's programs in the same run.
 */
public final class EmptyPrograms implements AutoCloseable {

    public static final String XDP_PROGRAM = "nexus_empty_xdp";
    public static final String TC_PROGRAM = "nexus_empty_tc";

    private final BpfObject object;
    private final BpfProgram xdp;
    private final BpfProgram tc;
    private InterfaceLink xdpLink;
    private InterfaceLink tcLink;

    private EmptyPrograms(BpfObject object) {
        this.object = object;
        this.xdp = object.program(XDP_PROGRAM);
        this.tc = object.program(TC_PROGRAM);
    }

    /** Loads the object and attaches both programs to {@code interfaceName}; detached by {@link #close}. */
    public static EmptyPrograms attach(Path objectFile, String interfaceName) {
        BpfObject object = BpfObject.open(objectFile);
        EmptyPrograms programs;
        try {
            object.load();
            programs = new EmptyPrograms(object);
        } catch (RuntimeException e) {
            object.close();
            throw e;
        }
        try {
            NetInterface netInterface = NetInterface.byName(interfaceName);
            programs.xdpLink = InterfaceLink.xdp(netInterface, programs.xdp, KernelConfig.XdpMode.GENERIC);
            programs.tcLink = InterfaceLink.tcxIngress(netInterface, programs.tc);
        } catch (RuntimeException e) {
            programs.close();
            throw e;
        }
        return programs;
    }

    public List<ProgramStats> stats() {
        return List.of(xdp.stats(), tc.stats());
    }

    @Override
    public void close() {
        try {
            if (tcLink != null) {
                tcLink.detach();
            }
        } finally {
            try {
                if (xdpLink != null) {
                    xdpLink.detach();
                }
            } finally {
                object.close();
            }
        }
    }
}
