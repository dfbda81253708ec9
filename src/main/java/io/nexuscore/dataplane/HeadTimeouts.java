package io.nexuscore.dataplane;

import io.netty.channel.Channel;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.ScheduledFuture;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerRequest;
import java.util.concurrent.TimeUnit;

/**
 * The header-read timeout of the inference listener: a connection must deliver a complete request
 * head within {@code headerTimeoutMs} of its accept, and of its previous answer (keep-alive); else it
 * is closed. (The listener runs with h2c off, so Vert.x reports a connection at accept, not after
 * protocol detection on its first bytes.) Traffic does not reset it, so a client trickling a head byte by byte (which
 * keeps an idle timeout quiet) is closed all the same. One task per connection, scheduled on the
 * connection's own Netty event loop (as Netty's ReadTimeoutHandler does).
 */
final class HeadTimeouts {

    private static final AttributeKey<ScheduledFuture<?>> PENDING = AttributeKey.valueOf("nexuscore.headTimeout");

    private final long timeoutMs;

    HeadTimeouts(long timeoutMs) {
        this.timeoutMs = timeoutMs;
    }

    void accepted(HttpConnection connection) {
        accepted(ConnectionInspector.channelOf(connection));
    }

    /**
     * Arms the first timeout and, once per connection, cancels whatever is pending when it closes.
     * (Registering that close listener at every arm, as before, added one listener per keep-alive
     * request that lived as long as the connection: a leak that grew without bound.)
     */
    void accepted(Channel channel) {
        if (channel == null) {
            return;
        }
        channel.closeFuture().addListener(f -> disarm(channel));
        arm(channel);
    }

    /** A head arrived: stop the clock until this request's answer (whatever it is) has gone out. */
    void headReceived(HttpServerRequest request) {
        Channel channel = ConnectionInspector.channelOf(request.connection());
        disarm(channel);
        if (channel != null) {
            request.response().endHandler(v -> arm(channel));
        }
    }

    void arm(Channel channel) {
        if (channel == null || !channel.isActive()) {
            return;
        }
        ScheduledFuture<?> task = channel.eventLoop().schedule(() -> {
            channel.attr(PENDING).set(null);
            channel.close();
        }, timeoutMs, TimeUnit.MILLISECONDS);
        ScheduledFuture<?> previous = channel.attr(PENDING).getAndSet(task);
        if (previous != null) {
            previous.cancel(false);
        }
    }

    void disarm(Channel channel) {
        if (channel == null) {
            return;
        }
        ScheduledFuture<?> task = channel.attr(PENDING).getAndSet(null);
        if (task != null) {
            task.cancel(false);
        }
    }
}
