package io.nexuscore.http;

import io.vertx.core.transport.Transport;
import java.util.Locale;

/**
 * The socket I/O engine under every listener and upstream client of the router (one Vert.x
 * instance serves them all).
 *
 * io_uring is the default where the kernel and the sandbox allow it: on a proxied request the
 * router's event loops hand reads and writes to the ring and enter the kernel once per loop turn
 * instead of once per socket call, which on the 2-core VM of the benchmarks carried 15–60 % more
 * requests per second on the router's upstream path and cut its preemptions per request by five
 * (bench/dataplane-results.md, "What io_uring changed").
 * Docker's default seccomp profile and {@code kernel.io_uring_disabled} refuse the ring; {@code auto}
 * then takes epoll, which every supported kernel has. SO_MARK tenant floors and the kernel verdict
 * lookup need a socket fd, which both native engines give and NIO does not.
 */
public enum IoTransport {
    /** io_uring when available, else epoll, else NIO. */
    AUTO,
    IO_URING,
    EPOLL,
    NIO;

    /**
     * The Vert.x transport to build the router's Vert.x on.
     *
     * @throws IllegalStateException when this names an engine the machine refuses, with the reason
     */
    public Transport select() {
        return switch (this) {
            case AUTO -> Transport.IO_URING.available() ? Transport.IO_URING
                    : Transport.EPOLL.available() ? Transport.EPOLL : Transport.NIO;
            case IO_URING -> require(Transport.IO_URING);
            case EPOLL -> require(Transport.EPOLL);
            case NIO -> Transport.NIO;
        };
    }

    /** Whether {@link #select()} would give this engine ({@code auto} and {@code nio} always can). */
    public boolean available() {
        return switch (this) {
            case AUTO, NIO -> true;
            case IO_URING -> Transport.IO_URING.available();
            case EPOLL -> Transport.EPOLL.available();
        };
    }

    /** Why {@code auto} did not take io_uring, for the startup log; null when it did or was not asked. */
    public String fallbackReason(Transport chosen) {
        if (this != AUTO || chosen == Transport.IO_URING) {
            return null;
        }
        return "io_uring unavailable: " + Transport.IO_URING.unavailabilityCause();
    }

    /** The name the configuration and the metrics use ({@code io_uring}, {@code epoll}, {@code nio}). */
    public static String nameOf(Transport transport) {
        return transport.name().toLowerCase(Locale.ROOT);
    }

    private Transport require(Transport transport) {
        if (!available()) {
            throw new IllegalStateException("dataPlane.transport " + name().toLowerCase(Locale.ROOT)
                    + " is unavailable on this machine: " + transport.unavailabilityCause()
                    + " (set \"auto\" to fall back)");
        }
        return transport;
    }
}
