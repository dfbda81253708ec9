package io.nexuscore.dataplane;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.RouterRuntime;
import io.nexuscore.events.EventSink;
import io.nexuscore.testing.LocalOpenAiServer;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The OTLP exporter really sends: a router with telemetry.otlp pointed at a tiny collector on
 * loopback POSTs its span to /v1/traces as a protobuf body.
 */
@ExtendWith(VertxExtension.class)
@Timeout(120)
class OtlpExportTest {

    private static final String TRACE_ID = "0af7651916cd43dd8448eb211c80319c";

    /** One POST the collector received. */
    private record Export(String path, String contentType, Buffer body) {
    }

    @Test
    void spansReachAnOtlpHttpCollectorAsProtobuf(Vertx vertx) throws Exception {
        List<Export> exports = new CopyOnWriteArrayList<>();
        HttpServer collector = vertx.createHttpServer().requestHandler(request -> {
            if (request.method() != HttpMethod.POST) {
                request.response().setStatusCode(405).end();
                return;
            }
            request.body().onSuccess(body -> {
                exports.add(new Export(request.path(), request.getHeader("Content-Type"), body));
                // An empty ExportTraceServiceResponse: zero bytes of protobuf.
                request.response().putHeader("Content-Type", "application/x-protobuf").end();
            });
        }).listen(0, "127.0.0.1").await(10, TimeUnit.SECONDS);
        LocalOpenAiServer upstream = LocalOpenAiServer.start(vertx).await(10, TimeUnit.SECONDS);
        JsonObject config = RouterFixture.config(upstream).put("telemetry", new JsonObject()
                .put("serviceName", "nexuscore-otlp-test")
                .put("otlp", new JsonObject()
                        .put("enabled", true)
                        .put("endpoint", "http://127.0.0.1:" + collector.actualPort())
                        .put("scheduleDelayMs", 50)
                        .put("timeoutMs", 5_000)));
        RouterRuntime router = RouterFixture.start(config, EventSink.DISCARD);
        try {
            HttpClient client = vertx.createHttpClient();
            int status = RouterFixture.exchange(client, new RequestOptions().setMethod(HttpMethod.POST)
                            .setHost("127.0.0.1").setPort(router.dataPlanePort()).setURI("/v1/chat/completions")
                            .putHeader("traceparent", "00-" + TRACE_ID + "-b7ad6b7169203331-01"),
                    RouterFixture.chat(20).put("model", "otlp-model").toBuffer())
                    .await(10, TimeUnit.SECONDS).status();
            assertEquals(200, status);
            // The batch goes out within scheduleDelayMs; wait for it, bounded.
            for (int i = 0; i < 500 && exports.isEmpty(); i++) {
                Thread.sleep(10);
            }
        } finally {
            router.close();
            collector.close().await(10, TimeUnit.SECONDS);
        }
        assertTrue(!exports.isEmpty(), "the collector received no export");
        Export export = exports.get(0);
        assertEquals("/v1/traces", export.path());
        assertEquals("application/x-protobuf", export.contentType());
        byte[] body = export.body().getBytes();
        assertTrue(body.length > 0, "empty export body");
        // Protobuf carries strings and bytes fields verbatim: the trace id, attribute keys and values.
        assertTrue(contains(body, HexFormat.of().parseHex(TRACE_ID)), "the span's trace id is in the body");
        assertTrue(contains(body, "gen_ai.operation.name".getBytes(StandardCharsets.UTF_8)));
        assertTrue(contains(body, "chat otlp-model".getBytes(StandardCharsets.UTF_8)), "the span name");
        assertTrue(contains(body, "nexuscore-otlp-test".getBytes(StandardCharsets.UTF_8)), "service.name");
        assertTrue(contains(body, "nexuscore.assigned_tier".getBytes(StandardCharsets.UTF_8)));
    }

    private static boolean contains(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }
}
