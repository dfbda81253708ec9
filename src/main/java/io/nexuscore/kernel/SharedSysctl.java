package io.nexuscore.kernel;

import io.nexuscore.kernel.libbpf.PinDirectory;
import io.nexuscore.kernel.libbpf.Sysctl;
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
 *
 * <p>A marker chooses what is written back into the sysctl, so only trusted ones count: a marker
 * is a directory (not a link) owned by root, in a pin directory that passes {@link PinDirectory#verify},
 * and its value is digits only. A local user who can create entries in a 1777 bpffs cannot plant one.
 */
final class SharedSysctl {

    static final Path BPFFS = Path.of("/sys/fs/bpf");
    /** Pin directories may sit a few levels under /sys/fs/bpf (kernel.pinDir). */
    private static final int SCAN_DEPTH = 4;

    private static final java.util.regex.Pattern VALUE = java.util.regex.Pattern.compile("[0-9]{1,10}");

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
        String original = markers().stream().findFirst() // trusted markers hold digits only
                .map(this::recordedValue)
                .orElseGet(sysctl::read);
        if (!VALUE.matcher(original).matches()) {
            throw new IllegalStateException("sysctl " + sysctl.name() + " reads '" + original
                    + "', not a number: refusing to record it as the value to restore");
        }
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
                if (trusted(marker)) {
                    original = Optional.of(recordedValue(marker));
                }
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
            return all.filter(this::trusted).toList();
        } catch (IOException | UncheckedIOException e) {
            return List.of(); // a directory vanished under the scan: treat as no other user known
        }
    }

    private String recordedValue(Path marker) {
        return marker.getFileName().toString().substring(prefix().length());
    }

    /** Root's own marker (a real directory) holding a number, in a pin directory nobody else can write. */
    private boolean trusted(Path marker) {
        return VALUE.matcher(recordedValue(marker)).matches()
                && Files.isDirectory(marker, java.nio.file.LinkOption.NOFOLLOW_LINKS)
                && PinDirectory.ownedByRootOrUs(marker)
                && marker.getParent() != null && PinDirectory.trusted(marker.getParent());
    }

    private boolean isMarker(Path p) {
        return p.getFileName() != null && p.getFileName().toString().startsWith(prefix());
    }
}
