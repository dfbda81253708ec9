package io.nexuscore.classify;

import java.net.Inet4Address;
import java.util.Objects;

/** A TCP connection as the client's packets carry it: source is the client, destination the router. */
public record FourTuple(Inet4Address srcAddress, int srcPort, Inet4Address dstAddress, int dstPort) {

    public FourTuple {
        Objects.requireNonNull(srcAddress, "srcAddress");
        Objects.requireNonNull(dstAddress, "dstAddress");
        requirePort("srcPort", srcPort);
        requirePort("dstPort", dstPort);
    }

    private static void requirePort(String field, int port) {
        if (port < 0 || port > 0xffff) {
            throw new IllegalArgumentException(field + " out of range: " + port);
        }
    }
}
