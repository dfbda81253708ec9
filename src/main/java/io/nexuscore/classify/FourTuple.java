package io.nexuscore.classify;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.util.Objects;

/**
 * A TCP connection as the client's packets carry it: source is the client, destination the router.
 * Both addresses IPv4 or both IPv6 (the kernel keys IPv4 and IPv6 verdicts in separate maps).
 */
public record FourTuple(InetAddress srcAddress, int srcPort, InetAddress dstAddress, int dstPort) {

    public FourTuple {
        Objects.requireNonNull(srcAddress, "srcAddress");
        Objects.requireNonNull(dstAddress, "dstAddress");
        if (srcAddress instanceof Inet6Address != dstAddress instanceof Inet6Address) {
            throw new IllegalArgumentException("srcAddress and dstAddress of different families: "
                    + srcAddress + ", " + dstAddress);
        }
        requirePort("srcPort", srcPort);
        requirePort("dstPort", dstPort);
    }

    /** Per request on the verdict read path: a type test, no copy of the address. */
    public boolean ipv6() {
        return srcAddress instanceof Inet6Address;
    }

    private static void requirePort(String field, int port) {
        if (port < 0 || port > 0xffff) {
            throw new IllegalArgumentException(field + " out of range: " + port);
        }
    }
}
