package io.nexuscore.tiers.upstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.classify.Thresholds;
import io.nexuscore.classify.Tier;
import io.nexuscore.config.TierConfig;
import io.nexuscore.config.UpstreamConfig;
import io.nexuscore.testing.FreePort;
import io.nexuscore.testing.LocalOpenAiServer;
import io.nexuscore.tiers.TierFailure;
import io.nexuscore.tiers.TierReply;
import io.nexuscore.tiers.TierRequest;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import java.net.URI;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(VertxExtension.class)
class UpstreamTierBackendTest {

    private static UpstreamTierBackend backend(Vertx vertx, String baseUrl, long timeoutMs) {
        UpstreamConfig upstream = new UpstreamConfig(URI.create(baseUrl), "up-model", timeoutMs, Optional.of("k"));
        TierConfig config = new TierConfig(Tier.SMALL, TierConfig.Engine.CHICORY, "unused", "nexus-small", 4, 16,
                TierConfig.WASM_PAGE, 1000, List.of(), Optional.of(upstream));
        return new UpstreamTierBackend(vertx, config, () -> Thresholds.DEFAULT);
    }

    @Test
    void replyCarriesTextUsageTheTiersModelAndTheObservedTierFromUsage(Vertx vertx, VertxTestContext ctx) {
        LocalOpenAiServer upstream = LocalOpenAiServer.start(vertx).await();
        UpstreamTierBackend backend = backend(vertx, upstream.baseUrl("s"), 5_000);
        // 600 prompt bytes: 150 prompt tokens + 1 completion token, above small_max (130).
        TierRequest request = new TierRequest("chat", "p".repeat(600), 9, TierRequest.Simulation.NONE);
        Future.fromCompletionStage(backend.submit(request)).onComplete(ctx.succeeding(reply -> ctx.verify(() -> {
            assertEquals(new TierReply("served by s", Tier.LARGE, 151, 150, 1, "nexus-small"), reply);
            assertEquals("up-model", upstream.bodies().get(0).getString("model"));
            assertEquals(9, upstream.bodies().get(0).getInteger("max_tokens"));
            backend.close();
            ctx.completeNow();
        })));
    }

    @Test
    void unreachableUpstreamIsAnUpstreamFailure(Vertx vertx, VertxTestContext ctx) {
        UpstreamTierBackend backend = backend(vertx, "http://127.0.0.1:" + FreePort.pick() + "/v1", 5_000);
        Future.fromCompletionStage(backend.submit(TierRequest.of("chat", "x"))).onComplete(ctx.failing(e -> ctx.verify(() -> {
            assertEquals(TierFailure.Kind.UPSTREAM, assertInstanceOf(TierFailure.class, e).kind());
            ctx.completeNow();
        })));
    }

    @Test
    void silentUpstreamIsADeadlineFailure(Vertx vertx, VertxTestContext ctx) {
        LocalOpenAiServer upstream = LocalOpenAiServer.start(vertx).await();
        upstream.hold();
        UpstreamTierBackend backend = backend(vertx, upstream.baseUrl("s"), 200);
        Future.fromCompletionStage(backend.submit(TierRequest.of("chat", "x"))).onComplete(ctx.failing(e -> ctx.verify(() -> {
            TierFailure failure = assertInstanceOf(TierFailure.class, e);
            assertEquals(TierFailure.Kind.DEADLINE, failure.kind());
            assertTrue(failure.getMessage().contains("200 ms"), failure.getMessage());
            upstream.release();
            ctx.completeNow();
        })));
    }

    @Test
    void errorStatusAndGarbageAreUpstreamFailures(Vertx vertx, VertxTestContext ctx) {
        HttpServer odd = vertx.createHttpServer().requestHandler(req -> {
            if (req.path().startsWith("/status")) {
                req.response().setStatusCode(500).end("out of\nmemory");
            } else {
                req.response().putHeader("Content-Type", "application/json").end("{\"choices\": ");
            }
        });
        odd.listen(0, "127.0.0.1").compose(server -> {
            String base = "http://127.0.0.1:" + server.actualPort();
            Future<TierReply> status = Future.fromCompletionStage(backend(vertx, base + "/status", 5_000)
                    .submit(TierRequest.of("chat", "x")));
            Future<TierReply> garbage = Future.fromCompletionStage(backend(vertx, base + "/garbage", 5_000)
                    .submit(TierRequest.of("chat", "x")));
            return Future.join(status, garbage).transform(ar -> Future.succeededFuture(List.of(status, garbage)));
        }).onComplete(ctx.succeeding(results -> ctx.verify(() -> {
            for (Future<TierReply> result : results) {
                TierFailure failure = assertInstanceOf(TierFailure.class, result.cause());
                assertEquals(TierFailure.Kind.UPSTREAM, failure.kind());
            }
            assertTrue(results.get(0).cause().getMessage().contains("500: out of memory"), results.get(0).cause().getMessage());
            ctx.completeNow();
        })));
    }

    /**
     * A chat answer in UTF-16 (Jackson reads it, but without byte offsets) is an upstream failure the
     * client hears of at once. Before, the model's splice threw outside the failure handling and the
     * request was never answered.
     */
    @Test
    void aChatAnswerInUtf16IsAnUpstreamFailureNotAHang(Vertx vertx, VertxTestContext ctx) {
        byte[] answer = "{\"model\":\"up\",\"choices\":[{\"message\":{\"content\":\"hi\"}}]}"
                .getBytes(java.nio.charset.StandardCharsets.UTF_16LE);
        HttpServer utf16 = vertx.createHttpServer().requestHandler(req -> req.response()
                .putHeader("Content-Type", "application/json; charset=utf-16le").end(Buffer.buffer(answer)));
        utf16.listen(0, "127.0.0.1").await();
        UpstreamTierBackend backend = backend(vertx, "http://127.0.0.1:" + utf16.actualPort() + "/v1", 60_000);
        TierRequest chat = TierRequest.of("chat", "x").withChatBody(Buffer.buffer("{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}"));
        Future.fromCompletionStage(backend.submit(chat)).onComplete(ctx.failing(e -> ctx.verify(() -> {
            TierFailure failure = assertInstanceOf(TierFailure.class, e);
            assertEquals(TierFailure.Kind.UPSTREAM, failure.kind());
            assertTrue(failure.getMessage().contains("malformed JSON"), failure.getMessage());
            backend.close();
            ctx.completeNow();
        })));
    }

    /**
     * Answers the tier holds while they arrive are bounded together: with one answer held half-sent,
     * a second that would pass the bound fails (502 kind) while the first is still served, and the
     * bytes are given back once each read ends.
     */
    @Test
    void answersArrivingAtOnceAreBoundedTogether(Vertx vertx) throws Exception {
        String prefix = "{\"choices\":[{\"message\":{\"content\":\"" + "x".repeat(600_000);
        List<io.vertx.core.http.HttpServerResponse> held = new java.util.concurrent.CopyOnWriteArrayList<>();
        HttpServer slow = vertx.createHttpServer().requestHandler(req -> req.body().onSuccess(body -> {
            io.vertx.core.http.HttpServerResponse response = req.response().setChunked(true)
                    .putHeader("Content-Type", "application/json");
            response.write(prefix);
            if (body.toString().contains("hold")) {
                held.add(response); // the rest comes when the test says
            } else {
                response.end("\"}}]}");
            }
        }));
        slow.listen(0, "127.0.0.1").await();
        UpstreamConfig upstream = new UpstreamConfig(URI.create("http://127.0.0.1:" + slow.actualPort() + "/v1"), "up-model",
                30_000, Optional.empty());
        TierConfig config = new TierConfig(Tier.SMALL, TierConfig.Engine.CHICORY, "unused", "nexus-small", 4, 16,
                TierConfig.WASM_PAGE, 1000, List.of(), Optional.of(upstream));
        UpstreamTierBackend backend = new UpstreamTierBackend(vertx, config, () -> Thresholds.DEFAULT,
                io.nexuscore.events.EventSink.DISCARD, new io.micrometer.core.instrument.simple.SimpleMeterRegistry(), 1,
                1_000_000);
        try {
            CompletableFuture<TierReply> first = backend.submit(TierRequest.of("chat", "hold"));
            for (int i = 0; i < 400 && backend.heldAnswers.held() < prefix.length(); i++) {
                Thread.sleep(25);
            }
            assertEquals(prefix.length(), backend.heldAnswers.held(), "the first answer's bytes so far");

            java.util.concurrent.ExecutionException refused = org.junit.jupiter.api.Assertions.assertThrows(
                    java.util.concurrent.ExecutionException.class,
                    () -> backend.submit(TierRequest.of("chat", "whole")).get(10, TimeUnit.SECONDS));
            TierFailure failure = assertInstanceOf(TierFailure.class, refused.getCause());
            assertEquals(TierFailure.Kind.UPSTREAM, failure.kind());
            assertTrue(failure.getMessage().contains("answers arriving at once hold 1000000 bytes"), failure.getMessage());

            held.get(0).end("\"}}]}");
            assertEquals(600_000, first.get(10, TimeUnit.SECONDS).text().length(), "the held answer is still served");
            assertEquals(0, backend.heldAnswers.held(), "every read gave its bytes back");
            assertEquals("x".repeat(600_000), backend.submit(TierRequest.of("chat", "whole")).get(10, TimeUnit.SECONDS).text());
            assertEquals(0, backend.heldAnswers.held());
        } finally {
            backend.close();
            slow.close().await();
        }
    }

    /**
     * A body read after its bytes arrived is still whole: a caller off the event loop (here the test
     * thread) may come to {@code readBody} only once the answer has ended, and nothing may be lost
     * in between (CI once saw an answer's first 200 KB dropped that way, under load).
     */
    @Test
    void aBodyReadAfterItArrivedIsWhole(Vertx vertx) throws Exception {
        String answer = "{\"choices\":[{\"message\":{\"content\":\"" + "y".repeat(300_000) + "\"}}]}";
        java.util.concurrent.CountDownLatch sent = new java.util.concurrent.CountDownLatch(1);
        HttpServer server = vertx.createHttpServer().requestHandler(req -> req.body().onSuccess(body ->
                req.response().putHeader("Content-Type", "application/json").end(answer).onComplete(ar -> sent.countDown())));
        server.listen(0, "127.0.0.1").await();
        UpstreamTierBackend backend = backend(vertx, "http://127.0.0.1:" + server.actualPort() + "/v1", 30_000);
        try {
            UpstreamExchange exchange = new UpstreamExchange(backend, Buffer.buffer("{}"), false);
            exchange.start().await(10, TimeUnit.SECONDS);
            assertTrue(sent.await(10, TimeUnit.SECONDS), "the upstream sent its answer");
            Thread.sleep(300); // let the answer's bytes reach the client before anyone reads them
            assertEquals(answer, exchange.readBody().await(10, TimeUnit.SECONDS).toString());
            assertEquals(0, backend.heldAnswers.held(), "the read gave its bytes back");
        } finally {
            backend.close();
            server.close().await();
        }
    }

    /** A non-streamed answer past the bound is a 502 kind of failure, not a heap filled by the upstream. */
    @Test
    void anEndlessAnswerIsAnUpstreamFailureAtTheBound(Vertx vertx, VertxTestContext ctx) {
        Buffer megabyte = Buffer.buffer(new byte[1 << 20]);
        HttpServer endless = vertx.createHttpServer().requestHandler(req -> {
            req.response().setChunked(true).putHeader("Content-Type", "application/json").write("{\"choices\":\"");
            long[] sent = {0};
            vertx.setPeriodic(1, id -> {
                // Bounded even if the router never stopped reading: 64 MiB, four times the bound.
                if (req.response().closed() || sent[0]++ >= 64) {
                    vertx.cancelTimer(id);
                    return;
                }
                if (!req.response().writeQueueFull()) {
                    req.response().write(megabyte);
                }
            });
        });
        endless.listen(0, "127.0.0.1").await();
        UpstreamTierBackend backend = backend(vertx, "http://127.0.0.1:" + endless.actualPort() + "/v1", 60_000);
        Future.fromCompletionStage(backend.submit(TierRequest.of("chat", "x"))).onComplete(ctx.failing(e -> ctx.verify(() -> {
            TierFailure failure = assertInstanceOf(TierFailure.class, e);
            assertEquals(TierFailure.Kind.UPSTREAM, failure.kind());
            assertTrue(failure.getMessage().contains("more than " + UpstreamExchange.MAX_ANSWER_BYTES + " bytes"), failure.getMessage());
            backend.close();
            ctx.completeNow();
        })));
    }

    @Test
    void streamPassesTheEventsThroughUnchanged(Vertx vertx, VertxTestContext ctx) {
        LocalOpenAiServer upstream = LocalOpenAiServer.start(vertx).await();
        UpstreamTierBackend backend = backend(vertx, upstream.baseUrl("s"), 5_000);
        Buffer collected = Buffer.buffer();
        Future.fromCompletionStage(backend.openStream(TierRequest.of("chat", "x"))).compose(stream -> {
            assertEquals("text/event-stream", stream.contentType());
            Future<Void> ended = Future.future(p -> stream.body().endHandler(p::complete));
            stream.body().handler(collected::appendBuffer);
            stream.body().resume();
            return ended;
        }).onComplete(ctx.succeeding(v -> ctx.verify(() -> {
            String text = collected.toString();
            assertTrue(text.endsWith("data: [DONE]\n\n"), text);
            assertEquals(5, text.split("\n\n").length, "three chunks, the usage chunk asked for, [DONE]");
            assertTrue(upstream.bodies().get(0).getBoolean("stream"));
            assertTrue(upstream.bodies().get(0).getJsonObject("stream_options").getBoolean("include_usage"));
            ctx.completeNow();
        })));
    }

    /**
     * A request, its pooled connection and its callbacks stay on the loop that took the request: a
     * second loop opens its own connection instead of borrowing the first loop's idle one, and the
     * first loop gets its own back. (With one shared client the second request rides the first
     * loop's keep-alive connection: the same client port.)
     */
    @Test
    void eachEventLoopForwardsOverItsOwnConnections(Vertx vertx) throws Exception {
        LocalOpenAiServer upstream = LocalOpenAiServer.start(vertx).toCompletionStage().toCompletableFuture().get();
        UpstreamConfig config = new UpstreamConfig(URI.create(upstream.baseUrl("s")), "up-model", 5_000, Optional.empty());
        UpstreamTierBackend backend = new UpstreamTierBackend(vertx, new TierConfig(Tier.SMALL, TierConfig.Engine.CHICORY,
                "unused", "nexus-small", 4, 16, TierConfig.WASM_PAGE, 1000, List.of(), Optional.of(config)),
                () -> Thresholds.DEFAULT, io.nexuscore.events.EventSink.DISCARD,
                new io.micrometer.core.instrument.simple.SimpleMeterRegistry(), 2);
        // New event-loop contexts take the loops in turn.
        Context loopA = ((io.vertx.core.internal.VertxInternal) vertx).createEventLoopContext();
        Context loopB = ((io.vertx.core.internal.VertxInternal) vertx).createEventLoopContext();
        assertNotEquals(threadOf(loopA), threadOf(loopB), "the test needs two different event loops");

        for (Context loop : List.of(loopA, loopB, loopA)) {
            CompletableFuture<TierReply> reply = new CompletableFuture<>();
            loop.runOnContext(v -> backend.submit(TierRequest.of("chat", "x")).whenComplete((r, e) -> {
                if (e != null) {
                    reply.completeExceptionally(e);
                } else {
                    reply.complete(r);
                }
            }));
            assertEquals("served by s", reply.get(10, TimeUnit.SECONDS).text());
        }
        List<Integer> ports = upstream.clientPorts();
        assertEquals(3, ports.size(), ports.toString());
        assertNotEquals(ports.get(0), ports.get(1), "loop B must not borrow loop A's connection: " + ports);
        assertEquals(ports.get(0), ports.get(2), "loop A keeps its own keep-alive connection: " + ports);
        backend.close();
    }

    private static String threadOf(Context context) throws Exception {
        CompletableFuture<String> name = new CompletableFuture<>();
        context.runOnContext(v -> name.complete(Thread.currentThread().getName()));
        return name.get(5, TimeUnit.SECONDS);
    }

    @Test
    void eachLoopHoldsItsShareOfTheTiersConnectionsAndWaiters() {
        assertEquals(64, UpstreamTierBackend.shareOf(64, 1));
        assertEquals(32, UpstreamTierBackend.shareOf(64, 2));
        assertEquals(2, UpstreamTierBackend.shareOf(3, 2)); // rounded up: never fewer in all than configured
        assertEquals(1, UpstreamTierBackend.shareOf(1, 4)); // every loop can forward
    }
}
