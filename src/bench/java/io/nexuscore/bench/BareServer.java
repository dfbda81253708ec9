package io.nexuscore.bench;

import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServerOptions;

/**
 * The ceiling: a bare Vert.x server that reads the request body and answers the fixed OpenAI
 * answer, one instance per core, native transport. Also serves as the OpenAI upstream the router's
 * tiers forward to (it answers any path).
 *
 * Usage: BareServer PORT [INSTANCES]
 */
public final class BareServer extends VerticleBase {

    private final int port;

    private BareServer(int port) {
        this.port = port;
    }

    @Override
    public Future<?> start() {
        return vertx.createHttpServer(new HttpServerOptions().setHost("127.0.0.1").setPort(port).setTcpNoDelay(true))
                .requestHandler(request -> request.body().onSuccess(body -> request.response()
                        .putHeader("Content-Type", "application/json")
                        .end(BenchBodies.ANSWER)))
                .listen();
    }

    public static void main(String[] args) {
        int port = Integer.parseInt(args[0]);
        int instances = args.length > 1 ? Integer.parseInt(args[1]) : Runtime.getRuntime().availableProcessors();
        PeerVertx peer = PeerVertx.start();
        Vertx vertx = peer.vertx();
        vertx.deployVerticle(() -> new BareServer(port), new DeploymentOptions().setInstances(instances)).await();
        System.out.println("bare server on 127.0.0.1:" + port + " (" + instances + " instances, transport "
                + peer.transport() + ")");
    }
}
