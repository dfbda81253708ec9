package io.nexuscore.telemetry;

import io.nexuscore.config.OtlpConfig;
import io.opentelemetry.api.metrics.MeterProvider;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporterBuilder;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.time.Duration;

/** Makes the exporter finished spans go to: OTLP in production; tests hand in an in-memory one. */
@FunctionalInterface
public interface SpanExporters {

    /** OTLP/HTTP with protobuf bodies, sent by the JDK's HttpClient. */
    SpanExporters OTLP = otlp -> {
        OtlpHttpSpanExporterBuilder builder = OtlpHttpSpanExporter.builder()
                .setEndpoint(otlp.tracesUrl())
                .setTimeout(Duration.ofMillis(otlp.timeoutMs()))
                .setCompression(otlp.compression())
                // The exporter's self-metrics would look for a global SDK; the router has none.
                .setMeterProvider(MeterProvider::noop);
        otlp.headers().forEach(builder::addHeader);
        return builder.build();
    };

    SpanExporter create(OtlpConfig otlp);
}
