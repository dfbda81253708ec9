package io.nexuscore.tiers.upstream;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.EventExecutor;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClientAgent;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.internal.VertxInternal;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;

/**
 * One HTTP client, with its own keep-alive pool, per event loop that sends through it. A request
 * made on an acceptor's event loop then goes out on a connection owned by that same loop, and the
 * upstream's answer is read there too: no thread hop and no wake-up of another loop per request,
 * which a single shared pool costs whenever it hands a connection of loop A to a request of loop B.
 *
 * <p>The tier's connection and queue limits are shared out evenly between Vert.x's event loops
 * (rounded up), so the sum over every pool stays within what the tier configures.
 */
final class LoopLocalClients implements AutoCloseable {

    private final Map<EventLoop, HttpClientAgent> byLoop = new ConcurrentHashMap<>();
    private final Vertx vertx;
    private final int connectionsPerLoop;
    private final int queuePerLoop;
    private final BiFunction<Integer, Integer, HttpClientAgent> create;

    /**
     * @param create builds a client from (max connections, max waiting requests)
     */
    LoopLocalClients(Vertx vertx, int connections, int queue, BiFunction<Integer, Integer, HttpClientAgent> create) {
        int loops = eventLoops(vertx);
        this.vertx = vertx;
        this.connectionsPerLoop = Math.max(1, ceilDiv(connections, loops));
        this.queuePerLoop = Math.max(1, ceilDiv(queue, loops));
        this.create = create;
    }

    /** The client of the calling event loop (created on first use); off Vert.x, a loop's by round robin. */
    HttpClientAgent current() {
        EventLoop loop = ((ContextInternal) vertx.getOrCreateContext()).nettyEventLoop();
        HttpClientAgent client = byLoop.get(loop);
        return client != null ? client
                : byLoop.computeIfAbsent(loop, l -> create.apply(connectionsPerLoop, queuePerLoop));
    }

    int connectionsPerLoop() {
        return connectionsPerLoop;
    }

    private static int eventLoops(Vertx vertx) {
        int loops = 0;
        for (EventExecutor ignored : ((VertxInternal) vertx).nettyEventLoopGroup()) {
            loops++;
        }
        return Math.max(1, loops);
    }

    private static int ceilDiv(int a, int b) {
        return (a + b - 1) / b;
    }

    @Override
    public void close() {
        Future.all(byLoop.values().stream().map(HttpClientAgent::close).toList());
        byLoop.clear();
    }
}
