package io.nexuscore.kernel;

import java.util.Map;

/**
 * What {@link KernelDataPath#reload} swapped: kernel program ids before and after (XDP
 * nexus_classify and TC nexus_tc_classify), and the object file loaded.
 */
public record ReloadResult(String object, int oldXdpProgramId, int newXdpProgramId,
                           int oldTcProgramId, int newTcProgramId) {

    /** The ids before the reload, keyed by program name (the control plane's JSON). */
    public Map<String, Long> oldProgramIds() {
        return Map.of(KernelDataPath.XDP_PROGRAM, (long) oldXdpProgramId,
                KernelDataPath.TC_CLASSIFY_PROGRAM, (long) oldTcProgramId);
    }

    /** The ids after the reload, keyed by program name. */
    public Map<String, Long> newProgramIds() {
        return Map.of(KernelDataPath.XDP_PROGRAM, (long) newXdpProgramId,
                KernelDataPath.TC_CLASSIFY_PROGRAM, (long) newTcProgramId);
    }
}
