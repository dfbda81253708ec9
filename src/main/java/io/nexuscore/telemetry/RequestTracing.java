package io.nexuscore.telemetry;

import io.nexuscore.config.TelemetryConfig;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.metrics.MeterProvider;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.sdk.common.Clock;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.SpanLimits;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import io.vertx.core.MultiMap;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The router's tracer: an SDK tracer provider whose batch processor hands finished spans to one
 * exporter (OTLP unless a test gives another), or {@link #OFF}, which makes nothing.
 *
 * <p>Spans are SERVER spans: each is the router's handling of a client's remote call, the child of
 * the caller's span when a {@code traceparent} came along. The GenAI conventions describe the
 * client's side of such a call (CLIENT, or INTERNAL for an in-process model); the attributes are
 * theirs, the kind is the one OpenTelemetry gives every span that serves a remote request, so a
 * trace reads caller (CLIENT) → router (SERVER) → upstream.
 */
public final class RequestTracing implements AutoCloseable {

    /** Tracing off: {@link #enabled()} is false and no SDK object exists. */
    public static final RequestTracing OFF = new RequestTracing(null, null);

    private static final System.Logger LOG = System.getLogger(RequestTracing.class.getName());
    private static final AttributeKey<String> SERVICE_NAME = AttributeKey.stringKey("service.name");
    private static final String SCOPE = "io.nexuscore";
    /**
     * Longest string kept in a span's name and in each attribute value (the SDK's span limits cut
     * longer ones): the client chooses the request model, the upstream the response model and the
     * finish reason, and a span waiting in the export queue must not hold megabytes of them.
     */
    static final int MAX_VALUE_LENGTH = 256;
    private static final long CLOSE_TIMEOUT_MS = 5_000;

    private static final TextMapGetter<MultiMap> HEADERS = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(MultiMap carrier) {
            return carrier.names();
        }

        @Override
        public String get(MultiMap carrier, String key) {
            return carrier == null ? null : carrier.get(key);
        }
    };

    private final SdkTracerProvider provider;
    private final Tracer tracer;
    private final Clock clock = Clock.getDefault();

    private RequestTracing(SdkTracerProvider provider, Tracer tracer) {
        this.provider = provider;
        this.tracer = tracer;
    }

    /** Tracing as configured: {@link #OFF} unless {@code telemetry.otlp.enabled}, then OTLP export. */
    public static RequestTracing start(TelemetryConfig config) {
        return start(config, SpanExporters.OTLP);
    }

    /**
     * As {@link #start(TelemetryConfig)}, spans going to the exporter {@code exporters} makes. Off,
     * {@code exporters} is never called.
     */
    public static RequestTracing start(TelemetryConfig config, SpanExporters exporters) {
        if (!config.enabled()) {
            return OFF;
        }
        SpanExporter exporter = exporters.create(config.otlp());
        BatchSpanProcessor batches = BatchSpanProcessor.builder(exporter)
                .setScheduleDelay(Duration.ofMillis(config.otlp().scheduleDelayMs()))
                .setExporterTimeout(Duration.ofMillis(config.otlp().timeoutMs()))
                .setMaxQueueSize(config.otlp().maxQueueSize())
                .setMaxExportBatchSize(config.otlp().maxExportBatchSize())
                .setMeterProvider(MeterProvider::noop)
                .build();
        SdkTracerProvider provider = SdkTracerProvider.builder()
                .setResource(Resource.getDefault().merge(Resource.create(
                        Attributes.of(SERVICE_NAME, config.serviceName()))))
                .setSampler(sampler(config))
                .setSpanLimits(SpanLimits.builder().setMaxAttributeValueLength(MAX_VALUE_LENGTH).build())
                .addSpanProcessor(batches)
                .build();
        LOG.log(Level.INFO, "tracing on: spans to {0} ({1}% of new traces)", config.otlp().tracesUrl(),
                config.samplePercent());
        return new RequestTracing(provider, provider.get(SCOPE));
    }

    /**
     * Parent-based on the router's ratio; a remote parent marked "not sampled" is decided by the ratio
     * too, unless the operator lets clients opt out ({@code telemetry.honorClientSampled}).
     */
    static Sampler sampler(TelemetryConfig config) {
        Sampler ratio = Sampler.traceIdRatioBased(config.samplePercent() / 100.0);
        return config.honorClientSampled() ? Sampler.parentBased(ratio)
                : Sampler.parentBasedBuilder(ratio).setRemoteParentNotSampled(ratio).build();
    }

    public boolean enabled() {
        return tracer != null;
    }

    /**
     * The span of one inference request, named {@code "{operation} {requestModel}"} (the operation
     * alone when the model is unknown), the child of the W3C trace context in {@code headers} if
     * any, and end it with {@link InferenceSpan#end}. Only call when {@link #enabled()}.
     *
     * @param operation    gen_ai.operation.name
     * @param requestModel the model the client asked for, null when unknown
     * @param startNanos   {@link System#nanoTime()} when the request arrived
     * @param headers      the request's headers ({@code traceparent}, {@code tracestate})
     */
    public InferenceSpan inference(String operation, String requestModel, long startNanos, MultiMap headers) {
        String model = requestModel == null || requestModel.length() <= MAX_VALUE_LENGTH
                ? requestModel : requestModel.substring(0, MAX_VALUE_LENGTH);
        Context parent = W3CTraceContextPropagator.getInstance().extract(Context.root(), headers, HEADERS);
        // The span is made when the request is done: it starts back then and ends now.
        long now = clock.now();
        SpanBuilder builder = tracer.spanBuilder(model == null ? operation : operation + ' ' + model)
                .setSpanKind(SpanKind.SERVER)
                .setParent(parent)
                .setStartTimestamp(now - Math.max(0, System.nanoTime() - startNanos), TimeUnit.NANOSECONDS)
                .setAttribute(SpanAttributes.OPERATION_NAME, operation)
                .setAttribute(SpanAttributes.PROVIDER_NAME, SpanAttributes.PROVIDER);
        if (model != null) {
            builder.setAttribute(SpanAttributes.REQUEST_MODEL, model);
        }
        return new InferenceSpan(builder.startSpan(), now);
    }

    /** Exports every finished span now; false when that did not finish within {@code timeoutMs}. */
    public boolean flush(long timeoutMs) {
        return provider == null || provider.forceFlush().join(timeoutMs, TimeUnit.MILLISECONDS).isSuccess();
    }

    /** Exports what is pending (bounded wait) and stops the exporter. */
    @Override
    public void close() {
        if (provider != null && !provider.shutdown().join(CLOSE_TIMEOUT_MS, TimeUnit.MILLISECONDS).isSuccess()) {
            LOG.log(Level.WARNING, "tracing: pending spans not exported within {0} ms", CLOSE_TIMEOUT_MS);
        }
    }
}
