package io.nexuscore.classify;

import java.util.Locale;

/** The three worker tiers. {@link #wire()} is the value the kernel stores (see nexus_shared.h). */
public enum Tier {
    NANO(0),
    SMALL(1),
    LARGE(2);

    /** values() copies its array on every call; the verdict read decodes a tier per request. */
    private static final Tier[] ALL = values();

    private final int wire;
    /** Computed once: label() is called several times per request (headers, events, metric tags). */
    private final String label;

    Tier(int wire) {
        this.wire = wire;
        this.label = name().toLowerCase(Locale.ROOT);
    }

    public int wire() {
        return wire;
    }

    /** Lower-case name used in headers, JSON and metric labels. */
    public String label() {
        return label;
    }

    public static Tier fromWire(int wire) {
        for (Tier t : ALL) {
            if (t.wire == wire) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown tier wire value " + wire);
    }

    public static Tier fromLabel(String label) {
        for (Tier t : values()) {
            if (t.label().equals(label)) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown tier '" + label + "' (expected nano, small or large)");
    }

    /** The higher of two tiers: a tenant floor never lowers a request's tier. */
    public Tier atLeast(Tier floor) {
        return floor.wire > wire ? floor : this;
    }
}
