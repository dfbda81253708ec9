package io.nexuscore.dataplane;

import io.nexuscore.tenants.TenantFloors;

import io.nexuscore.kernel.maps.SocketMarks;
import io.nexuscore.classify.FourTuple;
import io.nexuscore.classify.Tier;
import io.netty.channel.Channel;
import io.netty.channel.unix.UnixChannel;
import io.netty.util.AttributeKey;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.impl.HttpServerConnection;
import java.lang.System.Logger.Level;
import java.net.Inet4Address;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Reads the connection-level facts once per connection and caches them on the Netty channel.
 *
 * Reaches into Vert.x internals (HttpServerConnection, the Netty channel) because the public API
 * exposes neither the socket fd nor SO_MARK; this is the one class that does.
 */
final class ConnectionInspector {

    private static final System.Logger LOG = System.getLogger(ConnectionInspector.class.getName());
    private static final AttributeKey<ConnectionInfo> INFO = AttributeKey.valueOf("nexuscore.connection");

    private final AtomicBoolean warnedNoFd = new AtomicBoolean();
    private final AtomicBoolean warnedMarkFailure = new AtomicBoolean();
    private final TenantFloors unmarkedFloors;

    /** @param unmarkedFloors floors by client address: for unmarked sockets, for every socket when authoritative */
    ConnectionInspector(TenantFloors unmarkedFloors) {
        this.unmarkedFloors = unmarkedFloors;
    }

    /**
     * The connection's facts with its tenant floor as of now: the floors' answer when they are
     * authoritative (kernel mode: the pinned map), else the socket's mark, else the floors' answer.
     */
    ConnectionInfo current(HttpConnection connection) {
        ConnectionInfo info = of(connection);
        if (info.tuple().isEmpty() || !(info.tuple().get().srcAddress() instanceof Inet4Address client)) {
            return info; // tenant prefixes are IPv4
        }
        if (unmarkedFloors.authoritative() || info.markFloor().isEmpty()) {
            return info.withFloor(unmarkedFloors.floorFor(client));
        }
        return info;
    }

    /** Inspects the connection at accept and remembers the answer. */
    ConnectionInfo accepted(HttpConnection connection) {
        Channel channel = channelOf(connection);
        if (channel == null) {
            return ConnectionInfo.UNKNOWN;
        }
        ConnectionInfo info = inspect(channel);
        channel.attr(INFO).set(info);
        return info;
    }

    /** The cached facts of a request's connection (inspected now if accept did not run). */
    ConnectionInfo of(HttpConnection connection) {
        Channel channel = channelOf(connection);
        if (channel == null) {
            return ConnectionInfo.UNKNOWN;
        }
        ConnectionInfo info = channel.attr(INFO).get();
        if (info == null) {
            info = inspect(channel);
            channel.attr(INFO).set(info);
        }
        return info;
    }

    private ConnectionInfo inspect(Channel channel) {
        Optional<FourTuple> tuple = fourTuple(channel.remoteAddress(), channel.localAddress());
        Optional<Tier> mark = floor(channel);
        Optional<Tier> floor = mark;
        if (floor.isEmpty() && tuple.isPresent() && tuple.get().srcAddress() instanceof Inet4Address client) {
            floor = unmarkedFloors.floorFor(client); // tenant prefixes are IPv4
        }
        return new ConnectionInfo(tuple, floor, mark);
    }

    private Optional<Tier> floor(Channel channel) {
        if (!(channel instanceof UnixChannel unix)) {
            if (warnedNoFd.compareAndSet(false, true)) {
                LOG.log(Level.WARNING, "native transport is off ({0}): no socket fd, so no SO_MARK tenant floors",
                        channel.getClass().getSimpleName());
            }
            return Optional.empty();
        }
        try {
            return SocketMarks.tenantFloor(SocketMarks.read(unix.fd().intValue()));
        } catch (RuntimeException e) {
            if (warnedMarkFailure.compareAndSet(false, true)) {
                LOG.log(Level.WARNING, "cannot read SO_MARK, tenant floors disabled for such sockets: {0}",
                        e.getMessage());
            }
            return Optional.empty();
        }
    }

    /** The Netty channel under a Vert.x server connection; null for other connection types. */
    static Channel channelOf(HttpConnection connection) {
        if (connection instanceof HttpServerConnection server) {
            return server.channelHandlerContext().channel();
        }
        return null;
    }

    /** IPv4 or IPv6 (the kernel keeps verdicts for both); empty for other transports or mixed families. */
    static Optional<FourTuple> fourTuple(SocketAddress remote, SocketAddress local) {
        if (remote instanceof InetSocketAddress r && local instanceof InetSocketAddress l
                && r.getAddress() != null && l.getAddress() != null
                && r.getAddress().getAddress().length == l.getAddress().getAddress().length) {
            return Optional.of(new FourTuple(r.getAddress(), r.getPort(), l.getAddress(), l.getPort()));
        }
        return Optional.empty();
    }
}
