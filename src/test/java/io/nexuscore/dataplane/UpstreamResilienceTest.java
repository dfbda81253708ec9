package io.nexuscore.dataplane;

import static io.nexuscore.dataplane.DataPlaneTest.assertProblem;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Counter;
import io.nexuscore.RouterRuntime;
import io.nexuscore.testing.FreePort;
import io.nexuscore.testing.LocalOpenAiServer;
import io.nexuscore.testing.RecordingEventSink;
import io.nexuscore.tiers.upstream.UpstreamTierBackend;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Upstream tiers against real OpenAI-compatible servers on loopback that stall, die, come back and
 * fail: every case ends in the documented answer, and no request is lost that could be saved.
 */
@ExtendWith(VertxExtension.class)
class UpstreamResilienceTest {

    private static JsonObject nanoUpstream(JsonObject config) {
        return config.getJsonObject("tiers").getJsonObject("nano").getJsonObject("upstream");
    }

    private static double counter(RouterRuntime router, String name) {
        return router.registry().find(name).counters().stream().mapToDouble(Counter::count).sum();
    }

    private static RouterFixture.Reply nano(HttpClient client, RouterRuntime router) {
        return RouterFixture.post(client, router.dataPlanePort(), "/v1/chat/completions", RouterFixture.chat(10)).await();
    }

    /** What a raw upstream writes back once it has read a request (head and JSON body). */
    @FunctionalInterface
    private interface RawAnswer {
        void write(OutputStream out) throws java.io.IOException;
    }

    /**
     * A started daemon thread that accepts one connection on {@code upstream}, reads one request
     * (head and JSON body) and writes {@code answer}; an I/O error (the router's reset) ends it quietly,
     * the test's assertions saying what went wrong.
     */
    private static Thread answerOneRequest(java.net.ServerSocket upstream, RawAnswer answer) {
        Thread server = new Thread(() -> {
            try (Socket socket = upstream.accept()) {
                java.io.InputStream in = socket.getInputStream();
                byte[] buffer = new byte[65536];
                String request = "";
                while (!request.contains("\r\n\r\n") || !request.endsWith("}")) {
                    int n = in.read(buffer);
                    if (n < 0) {
                        return;
                    }
                    request += new String(buffer, 0, n, StandardCharsets.ISO_8859_1);
                }
                OutputStream out = socket.getOutputStream();
                answer.write(out);
                out.flush();
            } catch (java.io.IOException e) {
                // reset or closed by the router
            }
        });
        server.setDaemon(true);
        server.start();
        return server;
    }

    @Test
    void upstreamStallingMidBodyIs504AtTheTierTimeout(Vertx vertx) {
        LocalOpenAiServer others = LocalOpenAiServer.start(vertx).await();
        LocalOpenAiServer stalling = LocalOpenAiServer.start(vertx).await();
        stalling.stallMidBody(true);
        JsonObject config = RouterFixture.config(others);
        // The idle timeout alone would wait a minute: the whole-request timeout must end it.
        nanoUpstream(config).put("baseUrl", stalling.baseUrl("nano")).put("timeoutMs", 500).put("idleTimeoutMs", 60_000);
        RouterRuntime router = RouterFixture.start(config, new RecordingEventSink());
        try {
            RouterFixture.Reply reply = nano(vertx.createHttpClient(), router);
            assertProblem(reply, 504, "deadline");
            String detail = reply.json().getString("detail");
            assertTrue(detail.contains("500 ms") && !detail.contains("idleTimeoutMs"),
                    "the whole-request timeout ended it, not the idle one: " + detail);
            assertEquals("nano", reply.header(DataPlaneHandler.HEADER_ASSIGNED_TIER));
        } finally {
            router.close();
        }
    }

    @Test
    void upstreamSilentMidBodyIs504AtTheIdleTimeoutNamingIt(Vertx vertx) throws InterruptedException {
        LocalOpenAiServer others = LocalOpenAiServer.start(vertx).await();
        LocalOpenAiServer stalling = LocalOpenAiServer.start(vertx).await();
        stalling.stallMidBody(true);
        JsonObject config = RouterFixture.config(others);
        // The whole-request timeout would wait a minute: the body's idle timeout must end it.
        nanoUpstream(config).put("baseUrl", stalling.baseUrl("nano")).put("timeoutMs", 60_000).put("idleTimeoutMs", 300);
        RouterRuntime router = RouterFixture.start(config, new RecordingEventSink());
        try {
            RouterFixture.Reply reply = nano(vertx.createHttpClient(), router);
            assertProblem(reply, 504, "deadline");
            assertTrue(reply.json().getString("detail").contains("idleTimeoutMs"), reply.json().encode());
            assertEquals(1, stalling.awaitAbandoned(1), "the silent exchange's connection is reset, not left open");
        } finally {
            router.close();
        }
    }

    @Test
    void deadEndpointAmongTwoLosesNoRequestIsEjectedAndReadmittedWhenBack(Vertx vertx) throws Exception {
        LocalOpenAiServer alive = LocalOpenAiServer.start(vertx).await();
        int deadPort = FreePort.pick();
        JsonObject config = RouterFixture.config(alive);
        nanoUpstream(config).remove("baseUrl");
        nanoUpstream(config).put("baseUrls", new JsonArray().add(alive.baseUrl("nano"))
                        .add("http://127.0.0.1:" + deadPort + "/nano/v1"))
                .put("maxRetries", 1).put("ejectAfter", 2).put("ejectMs", 200);
        RecordingEventSink events = new RecordingEventSink();
        RouterRuntime router = RouterFixture.start(config, events);
        HttpClient client = vertx.createHttpClient();
        LocalOpenAiServer revived = null;
        try {
            for (int i = 0; i < 20; i++) {
                assertEquals(200, nano(client, router).status(), "request " + i + " was lost");
            }
            assertTrue(counter(router, "nexus_upstream_ejections") >= 1, "the dead endpoint was never ejected");
            assertTrue(counter(router, "nexus_upstream_retries") >= 1, "a connect error was not retried");
            assertTrue(events.events().stream().anyMatch(e -> e.type().equals(UpstreamTierBackend.EVENT)
                    && "ejected".equals(e.data().getString("event"))
                    && e.data().getString("endpoint").contains(":" + deadPort)));

            revived = LocalOpenAiServer.start(vertx, deadPort).await();
            for (int i = 0; i < 200 && counter(router, "nexus_upstream_readmissions") < 1; i++) {
                assertEquals(200, nano(client, router).status());
                Thread.sleep(20);
            }
            assertTrue(counter(router, "nexus_upstream_readmissions") >= 1, "the endpoint was not re-admitted");
            int before = revived.received();
            for (int i = 0; i < 10; i++) {
                assertEquals(200, nano(client, router).status());
            }
            assertTrue(revived.received() > before, "the re-admitted endpoint gets traffic again");
        } finally {
            router.close();
            if (revived != null) {
                revived.close();
            }
        }
    }

    @Test
    void retriesA503OnTheOtherEndpointBeforeAnsweringTheClient(Vertx vertx) {
        LocalOpenAiServer good = LocalOpenAiServer.start(vertx).await();
        LocalOpenAiServer overloaded = LocalOpenAiServer.start(vertx).await();
        overloaded.failWith(503);
        JsonObject config = RouterFixture.config(good);
        nanoUpstream(config).remove("baseUrl");
        nanoUpstream(config).put("baseUrls", new JsonArray().add(overloaded.baseUrl("nano")).add(good.baseUrl("nano")))
                .put("ejectAfter", 1000);
        RouterRuntime router = RouterFixture.start(config, new RecordingEventSink());
        HttpClient client = vertx.createHttpClient();
        try {
            for (int i = 0; i < 10; i++) {
                assertEquals(200, nano(client, router).status());
            }
            assertTrue(overloaded.received() >= 1, "least-outstanding balancing never tried the second endpoint");
            assertEquals(overloaded.received(), counter(router, "nexus_upstream_retries"));
        } finally {
            router.close();
        }
    }

    /** An endpoint that accepts and never answers: past firstByteTimeoutMs the other endpoint answers. */
    @Test
    void retriesAnEndpointThatSentNoHeadOnTheOtherBeforeAnsweringTheClient(Vertx vertx) {
        LocalOpenAiServer good = LocalOpenAiServer.start(vertx).await();
        LocalOpenAiServer stalled = LocalOpenAiServer.start(vertx).await();
        stalled.hold();
        JsonObject config = RouterFixture.config(good);
        nanoUpstream(config).remove("baseUrl");
        nanoUpstream(config).put("baseUrls", new JsonArray().add(stalled.baseUrl("nano")).add(good.baseUrl("nano")))
                .put("ejectAfter", 1000).put("firstByteTimeoutMs", 300).put("timeoutMs", 5000);
        RouterRuntime router = RouterFixture.start(config, new RecordingEventSink());
        HttpClient client = vertx.createHttpClient();
        try {
            for (int i = 0; i < 6; i++) {
                assertEquals(200, nano(client, router).status());
            }
            assertTrue(stalled.received() >= 1, "least-outstanding balancing never tried the stalled endpoint");
            assertEquals(stalled.received(), counter(router, "nexus_upstream_retries"));
        } finally {
            stalled.release();
            router.close();
        }
    }

    @Test
    void allEndpointsDownTheFallbackTierAnswersMarkedAndCounted(Vertx vertx) {
        LocalOpenAiServer others = LocalOpenAiServer.start(vertx).await();
        JsonObject config = RouterFixture.config(others);
        config.getJsonObject("tiers").getJsonObject("nano").put("fallback", "small");
        nanoUpstream(config).put("baseUrl", "http://127.0.0.1:" + FreePort.pick() + "/v1").put("ejectAfter", 1);
        RecordingEventSink events = new RecordingEventSink();
        RouterRuntime router = RouterFixture.start(config, events);
        HttpClient client = vertx.createHttpClient();
        try {
            for (int i = 0; i < 3; i++) {
                RouterFixture.Reply reply = nano(client, router);
                assertEquals(200, reply.status(), reply.body().toString());
                assertEquals("nano", reply.header(DataPlaneHandler.HEADER_ASSIGNED_TIER));
                assertEquals("nano", reply.header(DataPlaneHandler.HEADER_FALLBACK_FROM));
                assertEquals("served by small", reply.json().getJsonArray("choices").getJsonObject(0)
                        .getJsonObject("message").getString("content"));
            }
            assertEquals(3, counter(router, "nexus_tier_fallbacks"));
            assertTrue(events.events().stream().anyMatch(e -> e.type().equals(RequestEvent.TYPE)
                    && "nano".equals(e.data().getString("fallback_from"))));
        } finally {
            router.close();
        }
    }

    @Test
    void problemDetailsNameTierAndKindButNeverTheUpstreamUrlOrBody(Vertx vertx) {
        LocalOpenAiServer others = LocalOpenAiServer.start(vertx).await();
        LocalOpenAiServer broken = LocalOpenAiServer.start(vertx).await();
        broken.failWith(500);
        JsonObject config = RouterFixture.config(others);
        nanoUpstream(config).put("baseUrl", "http://user:hunter2@127.0.0.1:" + broken.port() + "/nano/v1");
        RecordingEventSink events = new RecordingEventSink();
        RouterRuntime router = RouterFixture.start(config, events);
        try {
            RouterFixture.Reply reply = nano(vertx.createHttpClient(), router);
            assertProblem(reply, 502, "upstream");
            String body = reply.body().toString();
            assertTrue(reply.json().getString("detail").startsWith("tier nano: "), body);
            for (String secret : List.of("127.0.0.1", "hunter2", "sk-upstream-4711", "/nano/v1")) {
                assertFalse(body.contains(secret), "problem leaks " + secret + ": " + body);
            }
            JsonObject failure = events.events().stream()
                    .filter(e -> e.type().equals(UpstreamTierBackend.EVENT) && "failure".equals(e.data().getString("event")))
                    .findFirst().orElseThrow().data();
            assertTrue(failure.getString("detail").contains("sk-upstream-4711"), "the operator sees the upstream's body");
            assertFalse(failure.encode().contains("hunter2"), "credentials never reach the event stream");
        } finally {
            router.close();
        }
    }

    @Test
    void requestWhoseDeadlinePassedWaitingForAPooledConnectionIsNeverSent(Vertx vertx) throws Exception {
        LocalOpenAiServer others = LocalOpenAiServer.start(vertx).await();
        LocalOpenAiServer held = LocalOpenAiServer.start(vertx).await();
        held.hold();
        JsonObject config = RouterFixture.config(others);
        config.getJsonObject("tiers").getJsonObject("nano").put("instances", 1).put("queueCapacity", 8)
                .put("maxQueueWaitMs", 60_000);
        nanoUpstream(config).put("baseUrl", held.baseUrl("nano")).put("timeoutMs", 400).put("ejectAfter", 1000);
        RouterRuntime router = RouterFixture.start(config, new RecordingEventSink());
        HttpClient client = vertx.createHttpClient();
        try {
            List<Future<RouterFixture.Reply>> replies = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                replies.add(RouterFixture.post(client, router.dataPlanePort(), "/v1/chat/completions", RouterFixture.chat(10)));
            }
            for (Future<RouterFixture.Reply> reply : replies) {
                assertProblem(reply.await(), 504, "deadline");
            }
            held.release();
            // All four started together on one connection. The first holds it until its deadline
            // resets it; the second may still make it onto the new connection before its own
            // deadline (a race of a loopback connect), the last two get theirs long after theirs.
            assertTrue(held.received() <= 2, held.received() + " requests were sent after their deadline");
        } finally {
            router.close();
        }
    }

    @Test
    void clientThatGoesAwayInterruptsTheRunningUpstreamCall(Vertx vertx) throws Exception {
        LocalOpenAiServer others = LocalOpenAiServer.start(vertx).await();
        LocalOpenAiServer held = LocalOpenAiServer.start(vertx).await();
        held.hold();
        JsonObject config = RouterFixture.config(others);
        nanoUpstream(config).put("baseUrl", held.baseUrl("nano")).put("timeoutMs", 60_000);
        RouterRuntime router = RouterFixture.start(config, new RecordingEventSink());
        try {
            byte[] body = RouterFixture.chat(10).toBuffer().getBytes();
            try (Socket socket = new Socket("127.0.0.1", router.dataPlanePort())) {
                OutputStream out = socket.getOutputStream();
                out.write(("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        + "Content-Length: " + body.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                out.write(body);
                out.flush();
                held.awaitReceived(1);
            }
            assertEquals(1, held.awaitAbandoned(1), "the upstream call was left running after its client left");
        } finally {
            held.release();
            router.close();
        }
    }

    /**
     * A streamed answer whose head carries a control byte in a header value (a broken or hostile
     * upstream): refused by the upstream client's header check before any byte reached the client,
     * so the client gets the documented 502 rather than a stream that dies on the way out.
     */
    @Test
    void streamWithAControlByteInAnUpstreamHeaderIs502(Vertx vertx) throws Exception {
        LocalOpenAiServer others = LocalOpenAiServer.start(vertx).await();
        String events = "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,"
                + "\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n";
        try (java.net.ServerSocket upstream = new java.net.ServerSocket(0, 8, java.net.InetAddress.getLoopbackAddress())) {
            Thread server = answerOneRequest(upstream, out -> out.write(("HTTP/1.1 200 OK\r\nContent-Type: "
                    + "text/event-stream\u0001x\r\nContent-Length: " + events.length() + "\r\nConnection: close\r\n\r\n"
                    + events).getBytes(StandardCharsets.ISO_8859_1)));
            JsonObject config = RouterFixture.config(others);
            nanoUpstream(config).put("baseUrl", "http://127.0.0.1:" + upstream.getLocalPort() + "/v1").put("maxRetries", 0);
            RouterRuntime router = RouterFixture.start(config, new RecordingEventSink());
            try {
                RouterFixture.Reply reply = RouterFixture.post(vertx.createHttpClient(), router.dataPlanePort(),
                        "/v1/chat/completions", RouterFixture.chat(10).put("stream", true)).await();
                assertProblem(reply, 502, "upstream");
                assertEquals("nano", reply.header(DataPlaneHandler.HEADER_ASSIGNED_TIER));
            } finally {
                router.close();
            }
        }
    }

    /**
     * An upstream's refusal of the client's own request (here a context-length complaint) reaches
     * the client with its status and the upstream's message, never the rest of its body; the endpoint
     * stays in rotation. A refusal that is the router's fault (401: its upstream key) stays a 502.
     */
    @Test
    void aRefusalOfTheClientsRequestIsPassedOnWithItsStatusAndMessage(Vertx vertx) {
        LocalOpenAiServer upstream = LocalOpenAiServer.start(vertx).await();
        upstream.failWith(400, "{\"error\":{\"message\":\"This model's maximum context length is 4096 tokens.\\n"
                + "Reduce the length of the messages.\",\"type\":\"invalid_request_error\"},"
                + "\"debug\":\"internal secret sk-upstream-4711\"}", null);
        RouterRuntime router = RouterFixture.start(RouterFixture.config(upstream), new RecordingEventSink());
        try {
            HttpClient client = vertx.createHttpClient();
            double ejected = counter(router, "nexus_upstream_ejections");
            RouterFixture.Reply reply = nano(client, router);
            assertProblem(reply, 400, "upstream-refused");
            String detail = reply.json().getString("detail");
            assertEquals("tier nano: the upstream refused the request (400): This model's maximum context length is "
                    + "4096 tokens. Reduce the length of the messages.", detail, "the line break became a space");
            assertFalse(reply.body().toString().contains("sk-upstream-4711"), reply.body().toString());

            upstream.failWith(429, "{\"error\":{\"message\":\"Rate limit reached\"}}", "7");
            RouterFixture.Reply limited = nano(client, router);
            assertProblem(limited, 429, "upstream-refused");
            assertEquals("7", limited.header("Retry-After"));
            upstream.failWith(429, "not json", "Wed, 21 Oct 2015 07:28:00 GMT");
            RouterFixture.Reply dated = nano(client, router);
            assertProblem(dated, 429, "upstream-refused");
            assertEquals("tier nano: the upstream refused the request (429)", dated.json().getString("detail"));
            assertEquals(null, dated.header("Retry-After"), "an HTTP date is not passed on");

            upstream.failWith(401, "{\"error\":{\"message\":\"Incorrect API key provided: sk-upstream-4711\"}}", null);
            assertProblem(nano(client, router), 502, "upstream");
            assertEquals(ejected, counter(router, "nexus_upstream_ejections"), "a 4xx never ejects the endpoint");
            upstream.failWith(0);
            assertEquals(200, nano(client, router).status());
        } finally {
            router.close();
        }
    }

    /**
     * An upstream that answers 400 with an endless body (a hostile or broken server): the router
     * reads the first 8 KiB, answers the client from them and resets the connection; it used to
     * read the whole body into memory before answering.
     */
    @Test
    void anErrorBodyIsReadOnlyUpToItsBound(Vertx vertx) throws Exception {
        LocalOpenAiServer others = LocalOpenAiServer.start(vertx).await();
        long total = 256L << 20;
        long[] written = {0};
        try (java.net.ServerSocket upstream = new java.net.ServerSocket(0, 8, java.net.InetAddress.getLoopbackAddress())) {
            Thread server = answerOneRequest(upstream, out -> {
                out.write(("HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: " + total
                        + "\r\n\r\n{\"error\":{\"message\":\"bad temperature\"},\"pad\":\"").getBytes(StandardCharsets.ISO_8859_1));
                byte[] pad = "x".repeat(65536).getBytes(StandardCharsets.ISO_8859_1);
                while (written[0] < total) {
                    out.write(pad);
                    written[0] += pad.length;
                }
            });
            JsonObject config = RouterFixture.config(others);
            nanoUpstream(config).put("baseUrl", "http://127.0.0.1:" + upstream.getLocalPort() + "/v1").put("maxRetries", 0);
            RouterRuntime router = RouterFixture.start(config, new RecordingEventSink());
            try {
                RouterFixture.Reply reply = nano(vertx.createHttpClient(), router);
                assertProblem(reply, 400, "upstream-refused");
                assertEquals("tier nano: the upstream refused the request (400)", reply.json().getString("detail"),
                        "the first 8 KiB are not a whole JSON object: no message to quote");
                server.join(30_000);
                assertFalse(server.isAlive());
                assertTrue(written[0] < total, "the router stopped reading: " + written[0] + " of " + total + " bytes written");
            } finally {
                router.close();
            }
        }
    }
}
