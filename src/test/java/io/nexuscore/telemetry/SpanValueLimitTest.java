package io.nexuscore.telemetry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.config.RouterConfig;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.vertx.core.MultiMap;
import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Strings a client or an upstream chooses reach spans cut to a bounded length. */
class SpanValueLimitTest {

    @Test
    void clientAndUpstreamStringsAreCutInTheExportedSpan() {
        InMemorySpanExporter exporter = InMemorySpanExporter.create();
        RouterConfig config = RouterConfig.fromJson(new JsonObject()
                .put("telemetry", new JsonObject().put("otlp", new JsonObject().put("enabled", true))));
        String huge = "m".repeat(1 << 20);
        SpanData span;
        try (RequestTracing tracing = RequestTracing.start(config.telemetry(), otlp -> exporter)) {
            tracing.inference("chat", huge, System.nanoTime(), MultiMap.caseInsensitiveMultiMap())
                    .set(SpanAttributes.RESPONSE_MODEL, huge)
                    .set(SpanAttributes.RESPONSE_FINISH_REASONS, List.of(huge))
                    .end(200, null);
            assertTrue(tracing.flush(5_000));
            span = exporter.getFinishedSpanItems().get(0); // read before close: shutting the exporter down clears it
        }

        int limit = RequestTracing.MAX_VALUE_LENGTH;
        assertEquals("chat " + "m".repeat(limit), span.getName());
        assertEquals(limit, span.getAttributes().get(SpanAttributes.REQUEST_MODEL).length());
        assertEquals(limit, span.getAttributes().get(SpanAttributes.RESPONSE_MODEL).length());
        assertEquals(limit, span.getAttributes().get(SpanAttributes.RESPONSE_FINISH_REASONS).get(0).length());
    }
}
