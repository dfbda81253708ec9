package io.nexuscore.kernel.libbpf;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Reads and writes /proc/sys settings such as net.ipv4.tcp_fwmark_accept (of this network namespace).
 *
 * @param root /proc/sys; a test directory in tests that must not change the host
 */
public record Sysctl(String name, Path root) {

    static final Path PROC_SYS = Path.of("/proc/sys");
    public static final Sysctl TCP_FWMARK_ACCEPT = new Sysctl("net.ipv4.tcp_fwmark_accept", PROC_SYS);

    public Path path() {
        return root.resolve(name.replace('.', '/'));
    }

    public String read() {
        try {
            return Files.readString(path()).trim();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read sysctl " + name, e);
        }
    }

    /**
     * Sets the value; a no-op when it already holds it, so a read-only /proc/sys (containers)
     * only fails when something would really change.
     */
    public void write(String value) {
        if (value.equals(read())) {
            return;
        }
        try {
            Files.writeString(path(), value);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot set sysctl " + name + "=" + value, e);
        }
    }
}
