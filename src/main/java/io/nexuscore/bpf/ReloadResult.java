package io.nexuscore.bpf;

/**
 * What {@link KernelDataPath#reload} swapped: kernel program ids before and after (XDP
 * nexus_classify and TC nexus_tc_classify), and the object file loaded.
 */
public record ReloadResult(String object, int oldXdpProgramId, int newXdpProgramId,
                           int oldTcProgramId, int newTcProgramId) {
}
