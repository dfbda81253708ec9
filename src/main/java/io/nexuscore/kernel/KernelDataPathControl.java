package io.nexuscore.kernel;

import io.nexuscore.kernel.libbpf.ProgramStats;
import io.nexuscore.classify.Tier;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@link DataPathControl} over the loaded kernel data path.
 *
 * @param reloadObjects which files a reload may load ({@link ReloadObjects}); read before the loader's lock
 */
public record KernelDataPathControl(KernelDataPath kernel, ReloadObjects reloadObjects) implements DataPathControl {

    /** Reloads only the object in the jar. */
    public KernelDataPathControl(KernelDataPath kernel) {
        this(kernel, new ReloadObjects(Optional.empty()));
    }

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
        if (object.isEmpty()) {
            return kernel.reload(Optional.empty());
        }
        Path copy = reloadObjects.privateCopy(object.get()); // no lock held: a slow file blocks nobody
        try {
            return kernel.reload(Optional.of(copy));
        } finally {
            try {
                java.nio.file.Files.deleteIfExists(copy);
            } catch (java.io.IOException ignored) {
                // a temporary file; the reload's outcome is what matters
            }
        }
    }
}
