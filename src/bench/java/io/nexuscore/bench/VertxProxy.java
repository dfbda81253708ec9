package io.nexuscore.bench;

import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;

/**
 * The stack's own floor for one proxy hop: a Vert.x server that forwards each request's body to
 * the upstream with a Vert.x client (one client per event loop, keep-alive, native transport) and
 * answers with the upstream's body; nothing else (no routing, no JSON, no metrics, no timeouts).
 * What the router's upstream path costs beyond this is the router's; up to this, the stack's.
 *
 * Usage: VertxProxy PORT UPSTREAM_PORT [INSTANCES]
 */
public final class VertxProxy extends VerticleBase {

    private final int port;
    private final int upstreamPort;
    private HttpClient client;

    private VertxProxy(int port, int upstreamPort) {
        this.port = port;
        this.upstreamPort = upstreamPort;
    }

    @Override
    public Future<?> start() {
        // Made in start(): the client belongs to this verticle's event loop, as LoopClients arranges for the router.
        client = vertx.createHttpClient(new HttpClientOptions().setKeepAlive(true).setTcpNoDelay(true),
                new PoolOptions().setHttp1MaxSize(64));
        RequestOptions target = new RequestOptions().setMethod(HttpMethod.POST).setHost("127.0.0.1").setPort(upstreamPort)
                .setURI("/v1/chat/completions").putHeader("Content-Type", "application/json");
        return vertx.createHttpServer(new HttpServerOptions().setHost("127.0.0.1").setPort(port).setTcpNoDelay(true))
                .requestHandler(request -> request.body()
                        .compose(body -> client.request(target).compose(up -> up.send(body)))
                        .compose(answer -> answer.body())
                        .onComplete(ar -> {
                            if (ar.succeeded()) {
                                request.response().putHeader("Content-Type", "application/json").end(ar.result());
                            } else {
                                request.response().setStatusCode(502).end();
                            }
                        }))
                .listen();
    }

    public static void main(String[] args) {
        int port = Integer.parseInt(args[0]);
        int upstreamPort = Integer.parseInt(args[1]);
        int instances = args.length > 2 ? Integer.parseInt(args[2]) : Runtime.getRuntime().availableProcessors();
        PeerVertx peer = PeerVertx.start();
        Vertx vertx = peer.vertx();
        vertx.deployVerticle(() -> new VertxProxy(port, upstreamPort), new DeploymentOptions().setInstances(instances)).await();
        System.out.println("vertx proxy on 127.0.0.1:" + port + " to " + upstreamPort + " (" + instances
                + " instances, transport " + peer.transport() + ")");
    }
}
