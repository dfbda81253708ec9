package io.nexuscore.config;

import java.nio.file.Path;

/**
 * Where the router keeps its state (thresholds, the generated control token) when the
 * configuration does not say: /var/lib/nexuscore as root; otherwise $XDG_STATE_HOME/nexuscore, or
 * ./run when that is unset, so an unprivileged start on the defaults works.
 */
public final class StateDir {

    public static final Path SYSTEM = Path.of("/var/lib/nexuscore");

    private StateDir() {
    }

    static Path resolve() {
        if (isRoot()) {
            return SYSTEM;
        }
        String xdg = System.getenv("XDG_STATE_HOME");
        if (xdg != null && !xdg.isBlank() && Path.of(xdg).isAbsolute()) {
            return Path.of(xdg, "nexuscore");
        }
        return Path.of("run").toAbsolutePath();
    }

    public static boolean isRoot() {
        return new com.sun.security.auth.module.UnixSystem().getUid() == 0;
    }
}
