package io.nexuscore.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class TelemetryConfigTest {

    @Test
    void offByDefaultAndTheRecordDefaultsEqualTheEmbeddedConfiguration() {
        TelemetryConfig config = RouterConfig.load(Optional.empty()).telemetry();
        assertFalse(config.enabled());
        assertEquals(TelemetryConfig.DEFAULT, config);
        assertEquals(TelemetryConfig.DEFAULT, TelemetryConfig.from(new Json(new JsonObject(), "telemetry")),
                "a config without the key gets the same defaults");
        assertEquals("http://127.0.0.1:4318/v1/traces", config.otlp().tracesUrl());
    }

    @Test
    void enabledWithEndpointHeadersAndBatching() {
        TelemetryConfig config = parse("""
                {"telemetry": {"serviceName": "edge-router", "samplePercent": 10, "otlp": {"enabled": true,
                 "endpoint": "https://collector.example:4318/otlp/", "compression": "gzip", "scheduleDelayMs": 200,
                 "maxQueueSize": 100, "maxExportBatchSize": 100, "headers": {"x-api-key": "k"}}}}
                """);
        assertTrue(config.enabled());
        assertEquals("edge-router", config.serviceName());
        assertEquals(10, config.samplePercent());
        assertEquals("https://collector.example:4318/otlp/v1/traces", config.otlp().tracesUrl());
        assertEquals(Map.of("x-api-key", "k"), config.otlp().headers());
        assertEquals(200, config.otlp().scheduleDelayMs());
    }

    @Test
    void badValuesNameTheKey() {
        assertMessage("telemetry.otlp.protocol must be http/protobuf", "{\"otlp\": {\"protocol\": \"grpc\"}}");
        assertMessage("telemetry.otlp.endpoint must be an http(s) URL with a host",
                "{\"otlp\": {\"endpoint\": \"ftp://x\"}}");
        assertMessage("telemetry.otlp.endpoint is not a URL", "{\"otlp\": {\"endpoint\": \"http://a b\"}}");
        assertMessage("telemetry.otlp.endpoint is the collector's base URL",
                "{\"otlp\": {\"endpoint\": \"http://127.0.0.1:4318/v1/traces\"}}");
        assertMessage("telemetry.otlp.compression must be none or gzip", "{\"otlp\": {\"compression\": \"zstd\"}}");
        assertMessage("telemetry.otlp.scheduleDelayMs must be in 1..600000, got 0",
                "{\"otlp\": {\"scheduleDelayMs\": 0}}");
        assertMessage("telemetry.otlp.maxExportBatchSize (600) must not exceed telemetry.otlp.maxQueueSize (500)",
                "{\"otlp\": {\"maxQueueSize\": 500, \"maxExportBatchSize\": 600}}");
        assertMessage("telemetry.otlp.enabled must be true or false", "{\"otlp\": {\"enabled\": \"yes\"}}");
        assertMessage("telemetry.otlp.headers.x-key must be a string", "{\"otlp\": {\"headers\": {\"x-key\": 1}}}");
        assertMessage("telemetry.otlp.headers: \"bad name\" is not a valid header name",
                "{\"otlp\": {\"headers\": {\"bad name\": \"v\"}}}");
        assertMessage("telemetry.otlp.headers.x-key holds a control character",
                "{\"otlp\": {\"headers\": {\"x-key\": \"a\\r\\nb\"}}}");
        assertMessage("telemetry.otlp.endpint is not a known setting", "{\"otlp\": {\"endpint\": \"http://x\"}}");
        assertMessage("telemetry.samplePercent must be in 0..100, got 101", "{\"samplePercent\": 101}");
        assertMessage("telemetry.serviceName must be a non-empty string", "{\"serviceName\": \" \"}");
        assertMessage("telemetry.otlp must be an object", "{\"otlp\": true}");
    }

    private static TelemetryConfig parse(String override) {
        JsonObject json = RouterConfig.embeddedDefaults().mergeIn(new JsonObject(override), true);
        return RouterConfig.fromJson(json).telemetry();
    }

    private static void assertMessage(String expectedPrefix, String telemetry) {
        JsonObject json = RouterConfig.embeddedDefaults()
                .mergeIn(new JsonObject().put("telemetry", new JsonObject(telemetry)), true);
        ConfigException e = assertThrows(ConfigException.class, () -> RouterConfig.fromJson(json));
        assertTrue(e.getMessage().startsWith(expectedPrefix), () -> "message was: " + e.getMessage());
    }
}
