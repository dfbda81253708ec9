package io.nexuscore.bench;

import io.nexuscore.http.IoTransport;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.transport.Transport;
import java.util.Locale;

/**
 * The Vert.x of a benchmark peer (bare server, Vert.x proxy, inline router), built on the I/O engine
 * the router itself picks ({@code dataPlane.transport}, default {@code auto}), so the router and
 * its same-stack peers are compared on one engine. {@code -Dnexus.transport=epoll} (or the bench
 * scripts' {@code TRANSPORT=epoll}) selects another.
 */
record PeerVertx(Vertx vertx, String transport) {

    static PeerVertx start() {
        String name = System.getProperty("nexus.transport", "auto");
        IoTransport wanted = IoTransport.valueOf(name.toUpperCase(Locale.ROOT));
        Transport transport = wanted.select();
        Vertx vertx = Vertx.builder().with(new VertxOptions().setPreferNativeTransport(true))
                .withTransport(transport).build();
        return new PeerVertx(vertx, IoTransport.nameOf(transport));
    }
}
