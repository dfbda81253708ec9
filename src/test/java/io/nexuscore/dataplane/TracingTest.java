package io.nexuscore.dataplane;

import static io.nexuscore.dataplane.DataPlaneHandler.HEADER_ASSIGNED_TIER;
import static io.nexuscore.dataplane.DataPlaneHandler.HEADER_MISROUTE;
import static io.nexuscore.dataplane.DataPlaneHandler.HEADER_ROUTE_SOURCE;
import static io.nexuscore.dataplane.DataPlaneHandler.HEADER_SCORE;
import static io.nexuscore.dataplane.DataPlaneHandler.HEADER_TIER;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.RouterRuntime;
import io.nexuscore.config.RouterConfig;
import io.nexuscore.events.EventSink;
import io.nexuscore.telemetry.RequestTracing;
import io.nexuscore.telemetry.SpanAttributes;
import io.nexuscore.testing.FreePort;
import io.nexuscore.testing.LocalOpenAiServer;
import io.nexuscore.testing.RecordingEventSink;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Request tracing over real sockets: a router whose spans go to the SDK's in-memory exporter (the
 * {@link RouterRuntime#start(RouterConfig, EventSink, io.nexuscore.telemetry.SpanExporters)} seam),
 * every tier backed by a real local upstream but large, whose upstream refuses connections.
 */
@ExtendWith(VertxExtension.class)
@Timeout(120)
class TracingTest {

    private static final String TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
    private static final String PARENT_SPAN_ID = "00f067aa0ba902b7";

    private static LocalOpenAiServer upstream;
    private static InMemorySpanExporter exporter;
    private static RecordingEventSink events;
    private static RouterRuntime router;
    private static HttpClient client;
    private static int port;

    @BeforeAll
    static void start(Vertx vertx) throws Exception {
        upstream = LocalOpenAiServer.start(vertx).await(10, TimeUnit.SECONDS);
        exporter = InMemorySpanExporter.create();
        events = new RecordingEventSink();
        JsonObject config = RouterFixture.config(upstream)
                .put("telemetry", new JsonObject().put("otlp", new JsonObject().put("enabled", true)));
        // Nothing listens on a freshly freed port: the large tier's connect is refused (502).
        config.getJsonObject("tiers").getJsonObject("large").getJsonObject("upstream")
                .put("baseUrl", "http://127.0.0.1:" + FreePort.pick() + "/v1");
        router = RouterRuntime.start(RouterConfig.fromJson(config), events, otlp -> exporter);
        port = router.dataPlanePort();
        client = vertx.createHttpClient(new PoolOptions().setHttp1MaxSize(4));
    }

    @AfterAll
    static void stop() {
        router.close();
    }

    @BeforeEach
    void clear() {
        router.tracing().flush(5_000);
        exporter.reset();
        events.clear();
    }

    @Test
    void chatRequestIsOneServerSpanWithTheGenAiAndRouterAttributes(Vertx vertx) throws Exception {
        JsonObject body = RouterFixture.chat(20).put("model", "gpt-test").put("max_tokens", 64);
        RouterFixture.Reply reply = post("/v1/chat/completions", body.toBuffer(), null);
        assertEquals(200, reply.status(), reply.body().toString());
        SpanData span = onlySpan();
        JsonObject json = reply.json();
        JsonObject usage = json.getJsonObject("usage");

        assertEquals("chat gpt-test", span.getName());
        assertEquals(SpanKind.SERVER, span.getKind());
        assertFalse(span.getParentSpanContext().isValid(), "no traceparent: a root span");
        assertEquals(StatusCode.UNSET, span.getStatus().getStatusCode());
        assertEquals("chat", attr(span, SpanAttributes.OPERATION_NAME));
        assertEquals("nexuscore", attr(span, SpanAttributes.PROVIDER_NAME));
        assertEquals("gpt-test", attr(span, SpanAttributes.REQUEST_MODEL));
        assertEquals(64L, attr(span, SpanAttributes.REQUEST_MAX_TOKENS));
        assertEquals(json.getString("model"), attr(span, SpanAttributes.RESPONSE_MODEL));
        assertEquals(usage.getLong("prompt_tokens"), attr(span, SpanAttributes.USAGE_INPUT_TOKENS));
        assertEquals(usage.getLong("completion_tokens"), attr(span, SpanAttributes.USAGE_OUTPUT_TOKENS));
        assertEquals(List.of(json.getJsonArray("choices").getJsonObject(0).getString("finish_reason")),
                attr(span, SpanAttributes.RESPONSE_FINISH_REASONS));
        assertEquals("127.0.0.1", attr(span, SpanAttributes.SERVER_ADDRESS));
        assertEquals((long) port, attr(span, SpanAttributes.SERVER_PORT));
        assertEquals(200L, attr(span, SpanAttributes.HTTP_STATUS));
        assertNull(attr(span, SpanAttributes.ERROR_TYPE));

        assertEquals(reply.header(HEADER_ASSIGNED_TIER), attr(span, SpanAttributes.ASSIGNED_TIER));
        assertEquals("nano", attr(span, SpanAttributes.ASSIGNED_TIER), "test premise: a short chat is nano");
        assertEquals(reply.header(HEADER_TIER), attr(span, SpanAttributes.TIER));
        assertEquals(Long.valueOf(reply.header(HEADER_SCORE)), attr(span, SpanAttributes.SCORE));
        assertEquals(reply.header(HEADER_ROUTE_SOURCE), attr(span, SpanAttributes.ROUTE_SOURCE));
        assertEquals(reply.header(HEADER_MISROUTE), attr(span, SpanAttributes.MISROUTE));
        assertEquals(false, attr(span, SpanAttributes.STREAM));
        RecordingEventSink.Event event = events.awaitEvent(vertx, e -> e.type().equals("request"))
                .await(10, TimeUnit.SECONDS);
        assertEquals(event.data().getString("tenant"), attr(span, SpanAttributes.TENANT));
        assertTrue(span.getEndEpochNanos() > span.getStartEpochNanos());
    }

    /** The upstream's answer goes to the client as it came: the span says the finish reason it says. */
    @Test
    void aToolCallAnswersSpanCarriesItsFinishReason() throws Exception {
        JsonObject body = RouterFixture.chat(20).put("tools", new JsonArray().add(new JsonObject().put("type", "function")
                .put("function", new JsonObject().put("name", "lookup").put("parameters", new JsonObject()))));
        RouterFixture.Reply reply = post("/v1/chat/completions", body.toBuffer(), null);
        assertEquals(200, reply.status(), reply.body().toString());
        assertEquals("tool_calls", reply.json().getJsonArray("choices").getJsonObject(0).getString("finish_reason"));
        assertEquals(List.of("tool_calls"), attr(onlySpan(), SpanAttributes.RESPONSE_FINISH_REASONS));
    }

    /** The Responses and Messages APIs are chats to GenAI conventions; the task says which API it was. */
    @Test
    void responsesAndMessagesRequestsAreChatSpansNamingTheirApi() {
        RouterFixture.Reply responses = post("/v1/responses", new JsonObject().put("model", "gpt-resp")
                .put("input", RouterFixture.words(40)).put("max_output_tokens", 32).toBuffer(), null);
        assertEquals(200, responses.status(), responses.body().toString());
        SpanData span = onlySpan();
        assertEquals("chat gpt-resp", span.getName());
        assertEquals("chat", attr(span, SpanAttributes.OPERATION_NAME));
        assertEquals("responses", attr(span, SpanAttributes.TASK));
        assertEquals(32L, attr(span, SpanAttributes.REQUEST_MAX_TOKENS));
        assertEquals(responses.json().getJsonObject("usage").getLong("input_tokens"), attr(span, SpanAttributes.USAGE_INPUT_TOKENS));
        router.tracing().flush(5_000);
        exporter.reset();

        RouterFixture.Reply messages = post("/v1/messages", new JsonObject().put("model", "claude-x").put("max_tokens", 16)
                .put("messages", new JsonArray().add(new JsonObject().put("role", "user").put("content", "hi")))
                .toBuffer(), null);
        assertEquals(200, messages.status(), messages.body().toString());
        span = onlySpan();
        assertEquals("chat claude-x", span.getName());
        assertEquals("messages", attr(span, SpanAttributes.TASK));
        assertEquals(messages.json().getJsonObject("usage").getLong("output_tokens"),
                attr(span, SpanAttributes.USAGE_OUTPUT_TOKENS));
    }

    @Test
    void completionRequestIsATextCompletionSpan() {
        JsonObject body = new JsonObject().put("model", "davinci-test").put("prompt", RouterFixture.words(40));
        RouterFixture.Reply reply = post("/v1/completions", body.toBuffer(), null);
        assertEquals(200, reply.status(), reply.body().toString());
        SpanData span = onlySpan();
        JsonObject usage = reply.json().getJsonObject("usage");
        assertEquals("text_completion davinci-test", span.getName());
        assertEquals("text_completion", attr(span, SpanAttributes.OPERATION_NAME));
        assertEquals("davinci-test", attr(span, SpanAttributes.REQUEST_MODEL));
        assertNull(attr(span, SpanAttributes.REQUEST_MAX_TOKENS), "no max_tokens in the request");
        assertEquals(reply.json().getString("model"), attr(span, SpanAttributes.RESPONSE_MODEL));
        assertEquals(usage.getLong("prompt_tokens"), attr(span, SpanAttributes.USAGE_INPUT_TOKENS));
        assertEquals(usage.getLong("completion_tokens"), attr(span, SpanAttributes.USAGE_OUTPUT_TOKENS));
        assertEquals(reply.header(HEADER_ASSIGNED_TIER), attr(span, SpanAttributes.ASSIGNED_TIER));
        assertEquals(reply.header(HEADER_TIER), attr(span, SpanAttributes.TIER));
        assertEquals("completion", attr(span, SpanAttributes.TASK));
    }

    @Test
    void incomingTraceparentMakesTheSpanItsChild() {
        RouterFixture.Reply reply = post("/v1/chat/completions", RouterFixture.chat(20).toBuffer(),
                "00-" + TRACE_ID + "-" + PARENT_SPAN_ID + "-01");
        assertEquals(200, reply.status());
        SpanData span = onlySpan();
        assertEquals(TRACE_ID, span.getTraceId());
        assertEquals(PARENT_SPAN_ID, span.getParentSpanId());
        assertTrue(span.getParentSpanContext().isRemote());
        assertEquals("chat whatever", span.getName(), "RouterFixture.chat names the model \"whatever\"");
    }

    @Test
    void aClientsUnsampledFlagDoesNotSuppressTheServerSpan() {
        RouterFixture.Reply reply = post("/v1/chat/completions", RouterFixture.chat(20).toBuffer(),
                "00-" + TRACE_ID + "-" + PARENT_SPAN_ID + "-00");
        assertEquals(200, reply.status());
        SpanData span = onlySpan();
        assertEquals(TRACE_ID, span.getTraceId(), "still the client's trace");
        assertEquals(PARENT_SPAN_ID, span.getParentSpanId());
        assertTrue(span.getSpanContext().isSampled(), "recorded: the span is the operator's audit trail");
    }

    @Test
    void anOperatorWhoOptsInLetsAnUnsampledTraceparentSuppressTheSpan(Vertx vertx) throws Exception {
        InMemorySpanExporter own = InMemorySpanExporter.create();
        JsonObject config = RouterFixture.config(upstream).put("telemetry", new JsonObject()
                .put("honorClientSampled", true).put("otlp", new JsonObject().put("enabled", true)));
        RouterRuntime optedIn = RouterRuntime.start(RouterConfig.fromJson(config), new RecordingEventSink(), otlp -> own);
        try {
            HttpClient c = vertx.createHttpClient();
            for (String flags : new String[] {"00", "01"}) {
                RequestOptions options = new RequestOptions().setMethod(HttpMethod.POST).setHost("127.0.0.1")
                        .setPort(optedIn.dataPlanePort()).setURI("/v1/chat/completions")
                        .putHeader("Content-Type", "application/json")
                        .putHeader("traceparent", "00-" + TRACE_ID + "-" + PARENT_SPAN_ID + "-" + flags);
                assertEquals(200, RouterFixture.exchange(c, options, RouterFixture.chat(20).toBuffer()).await().status());
            }
            optedIn.tracing().flush(5_000);
            assertEquals(1, own.getFinishedSpanItems().size(), "only the sampled request's span: " + own.getFinishedSpanItems());
        } finally {
            optedIn.close();
        }
    }

    @Test
    void malformedJsonIsAnErrorSpanWithItsProblemType() {
        RouterFixture.Reply reply = post("/v1/chat/completions", Buffer.buffer("{\"messages\": [ nope"), null);
        assertEquals(400, reply.status());
        SpanData span = onlySpan();
        assertEquals("chat", span.getName(), "no model could be read: the operation alone");
        assertEquals(StatusCode.ERROR, span.getStatus().getStatusCode());
        assertEquals("malformed-json", attr(span, SpanAttributes.ERROR_TYPE));
        assertEquals(400L, attr(span, SpanAttributes.HTTP_STATUS));
        assertNull(attr(span, SpanAttributes.ASSIGNED_TIER), "refused before any tier was assigned");
    }

    @Test
    void tierFailureIsAnErrorSpanWithTheRoutingFacts() {
        JsonObject body = RouterFixture.chat(900).put("model", "big-test");
        RouterFixture.Reply reply = post("/v1/chat/completions", body.toBuffer(), null);
        assertEquals(502, reply.status(), reply.body().toString());
        SpanData span = onlySpan();
        assertEquals("chat big-test", span.getName());
        assertEquals(StatusCode.ERROR, span.getStatus().getStatusCode());
        assertEquals("upstream", attr(span, SpanAttributes.ERROR_TYPE));
        assertEquals(502L, attr(span, SpanAttributes.HTTP_STATUS));
        assertEquals("large", attr(span, SpanAttributes.ASSIGNED_TIER));
        assertEquals(reply.header(HEADER_ASSIGNED_TIER), attr(span, SpanAttributes.ASSIGNED_TIER));
        assertNull(attr(span, SpanAttributes.USAGE_INPUT_TOKENS), "no answer, no usage");
        assertNull(attr(span, SpanAttributes.RESPONSE_MODEL));
    }

    @Test
    void streamedRequestIsOneSpanEndedWhenTheStreamEnds() {
        JsonObject body = RouterFixture.chat(20).put("model", "stream-test").put("stream", true);
        long before = System.currentTimeMillis() * 1_000_000L;
        RouterFixture.Reply reply = post("/v1/chat/completions", body.toBuffer(), null);
        assertEquals(200, reply.status());
        assertTrue(reply.body().toString().contains("data: [DONE]"), reply.body().toString());
        SpanData span = onlySpan();
        assertEquals("chat stream-test", span.getName());
        assertEquals(true, attr(span, SpanAttributes.STREAM));
        assertEquals(StatusCode.UNSET, span.getStatus().getStatusCode());
        assertEquals(reply.header(HEADER_ASSIGNED_TIER), attr(span, SpanAttributes.ASSIGNED_TIER));
        assertTrue(span.hasEnded());
        assertTrue(span.getStartEpochNanos() >= before - 1_000_000_000L, "started with this request");
        // The reason the upstream's last content chunk names, not one the router makes up.
        assertTrue(reply.body().toString().contains("\"finish_reason\":\"length\""), reply.body().toString());
        assertEquals(List.of("length"), attr(span, SpanAttributes.RESPONSE_FINISH_REASONS));
    }

    @Test
    void telemetryOffMakesNoExporterAndNoSpan() throws Exception {
        AtomicInteger exportersMade = new AtomicInteger();
        InMemorySpanExporter unused = InMemorySpanExporter.create();
        RouterConfig untraced = RouterConfig.fromJson(RouterFixture.config(upstream));
        RouterRuntime off = RouterRuntime.start(untraced, EventSink.DISCARD, otlp -> {
            exportersMade.incrementAndGet();
            return unused;
        });
        try {
            assertSame(RequestTracing.OFF, off.tracing());
            RouterFixture.Reply reply = RouterFixture.post(client, off.dataPlanePort(), "/v1/chat/completions",
                    RouterFixture.chat(20)).await(10, TimeUnit.SECONDS);
            assertEquals(200, reply.status());
        } finally {
            off.close();
        }
        assertEquals(0, exportersMade.get(), "telemetry off: no exporter is made");
        assertTrue(unused.getFinishedSpanItems().isEmpty());
        assertTrue(exporter.getFinishedSpanItems().isEmpty(), "the traced router saw nothing either");
    }

    private static RouterFixture.Reply post(String path, Buffer body, String traceparent) {
        RequestOptions options = new RequestOptions().setMethod(HttpMethod.POST).setHost("127.0.0.1").setPort(port)
                .setURI(path);
        if (traceparent != null) {
            options.putHeader("traceparent", traceparent);
        }
        Future<RouterFixture.Reply> reply = RouterFixture.exchange(client, options, body);
        try {
            return reply.await(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /**
     * The one span the last request made. The span is recorded just after the answer is written, so
     * this flushes until one is there (bounded), then once more to catch a second one.
     */
    private static SpanData onlySpan() {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (exporter.getFinishedSpanItems().isEmpty() && System.nanoTime() < deadline) {
            router.tracing().flush(1_000);
            if (exporter.getFinishedSpanItems().isEmpty()) {
                sleep(10);
            }
        }
        router.tracing().flush(1_000);
        List<SpanData> spans = exporter.getFinishedSpanItems();
        assertEquals(1, spans.size(), "spans: " + spans);
        return spans.get(0);
    }

    private static <T> T attr(SpanData span, io.opentelemetry.api.common.AttributeKey<T> key) {
        return span.getAttributes().get(key);
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
