package io.nexuscore.dataplane;

import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerRequest;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The header-read timeout of the inference listener: a connection must deliver a complete request
 * head within {@code headerTimeoutMs} of its accept, and again of its previous answer (keep-alive);
 * else it is closed. Traffic does not reset it, so a client trickling a head byte by byte (which
 * keeps Vert.x's idle timeout quiet) is closed all the same. One timer per connection, armed on
 * the connection's event loop.
 */
final class HeadTimeouts {

    private final long timeoutMs;
    private final Map<HttpConnection, Long> timers = new ConcurrentHashMap<>();

    HeadTimeouts(long timeoutMs) {
        this.timeoutMs = timeoutMs;
    }

    void accepted(HttpConnection connection) {
        connection.closeHandler(v -> disarm(connection));
        arm(connection);
    }

    void headReceived(HttpServerRequest request) {
        disarm(request.connection());
    }

    /** The answer went out (or the request ended otherwise): wait for the next head. */
    void answered(HttpServerRequest request) {
        HttpConnection connection = request.connection();
        if (connection != null && !request.response().closed()) {
            arm(connection);
        }
    }

    private void arm(HttpConnection connection) {
        Context context = Vertx.currentContext();
        if (context == null) {
            return;
        }
        Vertx vertx = context.owner();
        long id = vertx.setTimer(timeoutMs, t -> {
            if (timers.remove(connection, t)) {
                connection.close();
            }
        });
        Long previous = timers.put(connection, id);
        if (previous != null) {
            vertx.cancelTimer(previous);
        }
    }

    private void disarm(HttpConnection connection) {
        if (connection == null) {
            return;
        }
        Long id = timers.remove(connection);
        if (id != null) {
            Context context = Vertx.currentContext();
            if (context != null) {
                context.owner().cancelTimer(id);
            }
        }
    }
}
