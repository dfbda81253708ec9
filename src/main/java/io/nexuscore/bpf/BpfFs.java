package io.nexuscore.bpf;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The BPF filesystem at /sys/fs/bpf: mounted when missing (it is not on every machine). */
final class BpfFs {

    static final Path ROOT = Path.of("/sys/fs/bpf");

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

    static void ensureMounted() {
        if (!isMounted()) {
            Native.check(LibC.get().mount("bpf", ROOT.toString(), "bpf", 0, null), "mount", ROOT.toString());
        }
    }

    /** Creates the pin directory (bpffs supports mkdir). */
    static void createDirectories(Path dir) {
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create pin directory " + dir, e);
        }
    }
}
