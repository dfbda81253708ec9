package io.nexuscore.dataplane;

import java.util.Locale;

/** Who decided a request's tier: the XDP program's verdict or the Java scorer. */
public enum RouteSource {
    KERNEL,
    USER;

    private final String label = name().toLowerCase(Locale.ROOT); // once: read per request

    public String label() {
        return label;
    }
}
