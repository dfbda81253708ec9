package io.nexuscore.kernel;

import io.nexuscore.config.KernelConfig;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

/**
 * A router's kernel data path in a process of its own, for {@link InterfaceLinkTest} to SIGKILL:
 * loads and attaches on the interface named by args[1] with pins under args[0], prints
 * "attached XDP_ID TC_ID" and waits for stdin to close (it never detaches: the test kills it).
 */
public final class AttachedUntilKilled {

    private AttachedUntilKilled() {
    }

    public static void main(String[] args) throws Exception {
        KernelDataPath kernel = KernelDataPath.load(new KernelConfig(KernelConfig.Mode.KERNEL, Path.of(args[0]),
                List.of(args[1]), KernelConfig.XdpMode.GENERIC), KernelTestSupport.DEFAULT_SCORING, Set.of(8080));
        KernelDataPath.Attachment attached = kernel.attachments().get(0);
        System.out.println("attached " + attached.xdpProgramId() + " " + attached.tcProgramId());
        System.out.flush();
        System.in.read();
    }
}
