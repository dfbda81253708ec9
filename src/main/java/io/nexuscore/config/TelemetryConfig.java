package io.nexuscore.config;

import java.util.Set;

/**
 * Request tracing (io.nexuscore.telemetry): one OpenTelemetry span per inference request, exported
 * over OTLP when {@code otlp.enabled}. Off by default.
 *
 * @param serviceName   the {@code service.name} resource attribute of every span
 * @param samplePercent share of requests recorded (a request with a sampled W3C traceparent is
 *                      always recorded; one whose traceparent says "not sampled" is sampled like
 *                      a request without one, unless {@code honorClientSampled})
 * @param otlp          the exporter; its {@code enabled} is the switch for tracing as a whole
 * @param honorClientSampled a client's {@code traceparent} ending in {@code -00} suppresses the
 *                      router's span (default false: the span is the operator's audit trail, not
 *                      the client's to opt out of)
 */
public record TelemetryConfig(String serviceName, int samplePercent, OtlpConfig otlp, boolean honorClientSampled) {

    public static final TelemetryConfig DEFAULT = new TelemetryConfig("nexuscore", 100, OtlpConfig.DEFAULT, false);

    /** A client's unsampled flag does not suppress spans. */
    public TelemetryConfig(String serviceName, int samplePercent, OtlpConfig otlp) {
        this(serviceName, samplePercent, otlp, false);
    }

    public TelemetryConfig {
        if (serviceName == null || serviceName.isBlank()) {
            throw new ConfigException("telemetry.serviceName must be a non-empty string");
        }
        if (samplePercent < 0 || samplePercent > 100) {
            throw new ConfigException("telemetry.samplePercent must be in 0..100, got " + samplePercent);
        }
    }

    /** Whether inference requests are traced at all. */
    public boolean enabled() {
        return otlp.enabled();
    }

    static TelemetryConfig from(Json json) {
        json.allowOnly(Set.of("serviceName", "samplePercent", "otlp", "honorClientSampled"));
        return new TelemetryConfig(
                json.string("serviceName", DEFAULT.serviceName()),
                json.integer("samplePercent", DEFAULT.samplePercent(), 0, 100),
                OtlpConfig.from(json.section("otlp")),
                json.bool("honorClientSampled", DEFAULT.honorClientSampled()));
    }
}
