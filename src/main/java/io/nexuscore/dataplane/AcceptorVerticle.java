package io.nexuscore.dataplane;

import io.nexuscore.config.DataPlaneConfig;
import io.nexuscore.http.StrictFramingDecoder;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import java.util.concurrent.TimeUnit;

/**
 * The inference listener. Deploy one instance per core: an HTTP server instance is served by one
 * event loop, and Vert.x spreads the connections of a shared port across the instances.
 */
public final class AcceptorVerticle extends VerticleBase {

    private final DataPlaneConfig config;
    private final DataPlaneHandler handler;
    private HttpServer server;

    public AcceptorVerticle(DataPlaneConfig config, DataPlaneHandler handler) {
        this.config = config;
        this.handler = handler;
    }

    @Override
    public Future<?> start() {
        HttpServerOptions options = new HttpServerOptions()
                .setHost(config.host())
                .setPort(config.port())
                .setTcpNoDelay(true)
                // No traffic either way for this long: the connection is dead or abandoned.
                .setIdleTimeout((int) Math.min(config.idleTimeoutMs(), Integer.MAX_VALUE))
                .setIdleTimeoutUnit(TimeUnit.MILLISECONDS)
                .setCompressionSupported(false)
                // HTTP/1.1 only (h2c off): Vert.x then creates the connection, and calls the
                // connection handler, at accept instead of after the first bytes (protocol
                // detection), so the header-read timeout also bounds a first head.
                .setHttp2ClearTextEnabled(false)
                // Every write to a response happens on its connection's event loop (tier answers come
                // back through Future.fromCompletionStage on the request's context, TierDispatch), so
                // Vert.x may write straight through instead of keeping a multi-producer queue per
                // connection: that queue's first chunk (1,024 slots, ~4.8 KB with the queue) was over
                // half the live heap of an idle keep-alive connection (bench/scale-idle.sh,
                // docs/scale.md). A write from another thread now throws IllegalStateException.
                .setStrictThreadMode(true);
        server = vertx.createHttpServer(options)
                .connectionHandler(connection -> {
                    StrictFramingDecoder.install(connection, options);
                    handler.accepted(connection);
                })
                .invalidRequestHandler(handler::invalid)
                .requestHandler(handler::handle);
        return server.listen();
    }

    @Override
    public Future<?> stop() {
        return server == null ? Future.succeededFuture() : server.close();
    }

    /** The bound port (differs from the configured one when that is 0). */
    public int actualPort() {
        return server.actualPort();
    }
}
