package io.nexuscore.config;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Where and how the eBPF programs run.
 *
 * @param mode          auto (kernel when privileged and supported, else user space), kernel (fail
 *                      if the programs cannot load), user (never touch the kernel)
 * @param pinDir        bpffs directory holding every pinned map and the tail-call program array
 * @param interfaces    interfaces the XDP and TC programs attach to
 * @param xdpMode       generic (works everywhere, lo included) or native (driver support needed)
 * @param reloadDir     the root-owned directory POST /classifier/reload may load objects from; empty:
 *                      only the object in the jar reloads
 */
public record KernelConfig(Mode mode, Path pinDir, List<String> interfaces, XdpMode xdpMode, Optional<Path> reloadDir) {

    public enum Mode { AUTO, KERNEL, USER }

    public enum XdpMode { GENERIC, NATIVE }

    public KernelConfig {
        if (!pinDir.isAbsolute() || !pinDir.normalize().startsWith("/sys/fs/bpf")) {
            throw new ConfigException("kernel.pinDir must be an absolute path under /sys/fs/bpf, got " + pinDir);
        }
        if (mode != Mode.USER && interfaces.isEmpty()) {
            throw new ConfigException("kernel.interfaces must name at least one interface");
        }
        interfaces = List.copyOf(interfaces);
        if (reloadDir.isPresent() && !reloadDir.get().isAbsolute()) {
            throw new ConfigException("kernel.reloadDir must be an absolute path, got " + reloadDir.get());
        }
    }

    public KernelConfig(Mode mode, Path pinDir, List<String> interfaces, XdpMode xdpMode) {
        this(mode, pinDir, interfaces, xdpMode, Optional.empty());
    }

    static KernelConfig from(Json json) {
        json.allowOnly(Set.of("mode", "pinDir", "interfaces", "xdpMode", "reloadDir"));
        return new KernelConfig(
                json.choice(Mode.class, "mode", "auto"),
                Path.of(json.string("pinDir", "/sys/fs/bpf/nexuscore")),
                json.strings("interfaces", List.of("lo")),
                json.choice(XdpMode.class, "xdpMode", "generic"),
                Optional.ofNullable(json.string("reloadDir", null)).map(Path::of));
    }

    public KernelConfig withPinDir(Path dir) {
        return new KernelConfig(mode, dir, interfaces, xdpMode, reloadDir);
    }
}
