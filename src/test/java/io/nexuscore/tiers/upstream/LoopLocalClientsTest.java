package io.nexuscore.tiers.upstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.nexuscore.testing.LocalOpenAiServer;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.http.HttpClientAgent;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.impl.HttpClientConnectionInternal;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.internal.VertxInternal;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class LoopLocalClientsTest {

    private final Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(2));

    @AfterEach
    void close() throws Exception {
        vertx.close().await(10, TimeUnit.SECONDS);
    }

    private LoopLocalClients clients(int connections, int queue, List<int[]> sizes) {
        return new LoopLocalClients(vertx, connections, queue, (c, q) -> {
            sizes.add(new int[] {c, q});
            return vertx.createHttpClient(new PoolOptions().setHttp1MaxSize(c).setMaxWaitQueueSize(q));
        });
    }

    /** Each loop's pool holds its share of the tier's limits (rounded up), created once per loop. */
    @Test
    void oneClientPerEventLoopEachWithItsShareOfTheLimits() {
        List<int[]> sizes = new ArrayList<>();
        LoopLocalClients clients = clients(5, 9, sizes);
        ContextInternal a = ((VertxInternal) vertx).createEventLoopContext();
        ContextInternal b = ((VertxInternal) vertx).createEventLoopContext();
        assertNotSame(a.nettyEventLoop(), b.nettyEventLoop(), "two contexts on the two loops");
        HttpClientAgent onA = on(a, clients::current);
        assertSame(onA, on(a, clients::current), "the same loop gets the same client");
        assertNotSame(onA, on(b, clients::current), "another loop gets its own");
        assertEquals(2, sizes.size());
        assertEquals(List.of(3, 5), List.of(sizes.get(0)[0], sizes.get(0)[1]), "ceil(5/2) connections, ceil(9/2) waiting");
        clients.close();
    }

    /** The point of it: the upstream socket of every exchange belongs to the loop that sent the request. */
    @Test
    void everyExchangeRunsOnTheSendingLoopsSocket() throws Exception {
        LocalOpenAiServer upstream = LocalOpenAiServer.start(vertx).await();
        LoopLocalClients clients = clients(4, 4, new ArrayList<>());
        for (int i = 0; i < 4; i++) {
            ContextInternal context = ((VertxInternal) vertx).createEventLoopContext();
            Object[] threads = on(context, () -> {
                return clients.current().request(HttpMethod.POST, URI.create(upstream.baseUrl("x")).getPort(), "127.0.0.1",
                                "/v1/chat/completions")
                        .compose(req -> {
                            // The loop whose socket carries this exchange: with one shared pool, often the other one.
                            io.netty.channel.EventLoop socketLoop = ((HttpClientConnectionInternal) req.connection())
                                    .channelHandlerContext().channel().eventLoop();
                            return req.send("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")
                                    .compose(HttpClientResponse::body)
                                    .map(body -> new Object[] {context.nettyEventLoop(), socketLoop});
                        });
            }).await(10, TimeUnit.SECONDS);
            assertSame(threads[0], threads[1], "request " + i + ": the upstream socket is on the sending loop");
        }
        clients.close();
    }

    /** Runs {@code call} on the context's event loop thread and returns its result. */
    private static <T> T on(ContextInternal context, java.util.function.Supplier<T> call) {
        java.util.concurrent.CompletableFuture<T> result = new java.util.concurrent.CompletableFuture<>();
        context.runOnContext(v -> {
            try {
                result.complete(call.get());
            } catch (RuntimeException e) {
                result.completeExceptionally(e);
            }
        });
        try {
            return result.get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
