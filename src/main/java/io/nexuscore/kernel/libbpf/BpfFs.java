package io.nexuscore.kernel.libbpf;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The BPF filesystem at /sys/fs/bpf: mounted when missing (it is not on every machine), mode 0700 so
 * that only root can create entries in it (the kernel's default for a bpffs mount is 1777).
 */
public final class BpfFs {

    static final Path ROOT = Path.of("/sys/fs/bpf");
    /** Mount options; scripts/mount-bpffs.sh uses the same (BpfFsTest keeps them equal). */
    public static final String MOUNT_OPTIONS = "mode=0700";

    private BpfFs() {
    }

    static boolean isMounted() {
        try {
            return Files.readAllLines(Path.of("/proc/self/mounts")).stream()
                    .map(line -> line.split(" "))
                    .anyMatch(f -> f.length > 2 && f[1].equals(ROOT.toString()) && f[2].equals("bpf"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static void ensureMounted() {
        if (!isMounted()) {
            Native.check(LibC.get().mount("bpf", ROOT.toString(), "bpf", 0, MOUNT_OPTIONS), "mount", ROOT.toString());
        }
    }

    /** Creates the pin directory 0700 (bpffs supports mkdir), or checks an existing one: see {@link PinDirectory}. */
    public static void createDirectories(Path dir) {
        PinDirectory.prepare(dir);
    }
}
