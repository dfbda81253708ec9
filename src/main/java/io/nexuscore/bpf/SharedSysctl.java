package io.nexuscore.bpf;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * A sysctl every NexusCore on the host needs set (net.ipv4.tcp_fwmark_accept=1), restored only by
 * the last one to stop. The reference count lives in bpffs, next to the pins: each user holds a
 * marker directory {@code <pinDir>/sysctl_<name>_was_<value>} carrying the value found before the
 * first user changed it. Release removes the own marker and restores the value when no marker is
 * left under /sys/fs/bpf. A router that crashed keeps its marker (like its pins) until cleanup.sh
 * removes the pin directory; a reboot empties bpffs and resets the sysctl together.
 */
final class SharedSysctl {

    static final Path BPFFS = Path.of("/sys/fs/bpf");
    /** Pin directories may sit a few levels under /sys/fs/bpf (kernel.pinDir). */
    private static final int SCAN_DEPTH = 4;

    private final Sysctl sysctl;
    private final String value;
    private final Path pinDir;

    SharedSysctl(Sysctl sysctl, String value, Path pinDir) {
        this.sysctl = sysctl;
        this.value = value;
        this.pinDir = pinDir;
    }

    private String prefix() {
        return "sysctl_" + sysctl.name().replace('.', '_') + "_was_"; // bpffs refuses names with dots
    }

    /** Takes a reference and sets the value; the original is the one any other user recorded, else the current. */
    synchronized void acquire() {
        String original = markers().stream().findFirst() // the value is a sysctl's, never free text
                .map(m -> m.getFileName().toString().substring(prefix().length()))
                .orElseGet(sysctl::read);
        try {
            Files.createDirectories(pinDir.resolve(prefix() + original));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot record the use of sysctl " + sysctl.name() + " under " + pinDir, e);
        }
        sysctl.write(value);
    }

    /** Drops this pin directory's reference; the last user puts the original value back. */
    synchronized void release() {
        Optional<String> original = Optional.empty();
        try (Stream<Path> own = Files.list(pinDir)) {
            for (Path marker : own.filter(this::isMarker).toList()) {
                original = Optional.of(marker.getFileName().toString().substring(prefix().length()));
                Files.deleteIfExists(marker);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot release sysctl " + sysctl.name() + " under " + pinDir, e);
        }
        if (original.isPresent() && markers().isEmpty()) {
            sysctl.write(original.get());
        }
    }

    /** Every user's marker under /sys/fs/bpf (this process's included while it holds one). */
    List<Path> markers() {
        if (!Files.isDirectory(BPFFS)) {
            return List.of();
        }
        try (Stream<Path> all = Files.find(BPFFS, SCAN_DEPTH, (p, attrs) -> attrs.isDirectory() && isMarker(p))) {
            return all.toList();
        } catch (IOException | UncheckedIOException e) {
            return List.of(); // a directory vanished under the scan: treat as no other user known
        }
    }

    private boolean isMarker(Path p) {
        return p.getFileName() != null && p.getFileName().toString().startsWith(prefix());
    }
}
