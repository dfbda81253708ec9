package io.nexuscore.bpf;

import io.nexuscore.classify.Tier;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** {@link DataPathControl} over the loaded kernel data path. */
public record KernelDataPathControl(KernelDataPath kernel) implements DataPathControl {

    @Override
    public String mode() {
        return "kernel";
    }

    @Override
    public Map<String, Object> attachment() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("attached", true);
        out.put("pin_dir", kernel.pinDir().toString());
        out.put("interfaces", kernel.attachments().stream()
                .map(a -> Map.of("interface", a.interfaceName(), "xdp_prog_id", a.xdpProgramId(),
                        "tc_prog_id", a.tcProgramId()))
                .toList());
        return out;
    }

    @Override
    public Map<Tier, Long> tierCounters() {
        return kernel.tierCounters().counts();
    }

    @Override
    public List<ProgramStats> programStats() {
        return kernel.programStats();
    }

    @Override
    public ReloadResult reload(Optional<Path> object) {
        return kernel.reload(object);
    }
}
