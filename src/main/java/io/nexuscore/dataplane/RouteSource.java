package io.nexuscore.dataplane;

import java.util.Locale;

/** Who decided a request's tier: the XDP program's verdict or the Java scorer. */
public enum RouteSource {
    KERNEL,
    USER;

    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
