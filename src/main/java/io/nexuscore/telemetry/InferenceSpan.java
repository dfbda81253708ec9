package io.nexuscore.telemetry;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.sdk.common.Clock;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One inference request's span, assembled once the outcome is known and then recorded in one go:
 * every attribute is on the builder before the span starts, so a sampler sees them all, and the
 * start time is the one the data plane noted when the request arrived.
 */
public final class InferenceSpan {

    private final SpanBuilder builder;
    private final Clock clock;
    private final long startNanos;

    InferenceSpan(SpanBuilder builder, Clock clock, long startNanos) {
        this.builder = builder;
        this.clock = clock;
        this.startNanos = startNanos;
    }

    /** Sets {@code key} unless {@code value} is null. */
    public InferenceSpan set(AttributeKey<String> key, String value) {
        if (value != null) {
            builder.setAttribute(key, value);
        }
        return this;
    }

    public InferenceSpan set(AttributeKey<Long> key, long value) {
        builder.setAttribute(key, value);
        return this;
    }

    public InferenceSpan set(AttributeKey<Boolean> key, boolean value) {
        builder.setAttribute(key, value);
        return this;
    }

    public InferenceSpan set(AttributeKey<List<String>> key, List<String> value) {
        builder.setAttribute(key, value);
        return this;
    }

    /**
     * Records the span, ending now. A status of 400 or more (499: the client left first) is an
     * operation that ended in error: span status ERROR and {@code error.type}, as the GenAI
     * conventions ask.
     *
     * @param status    the HTTP status sent (or 499)
     * @param errorType a low-cardinality name of the failure (the problem type's slug); used when
     *                  {@code status >= 400}
     */
    public void end(int status, String errorType) {
        long now = clock.now();
        builder.setStartTimestamp(now - Math.max(0, System.nanoTime() - startNanos), TimeUnit.NANOSECONDS)
                .setAttribute(SpanAttributes.HTTP_STATUS, status);
        boolean failed = status >= 400;
        String type = errorType == null ? Integer.toString(status) : errorType;
        if (failed) {
            builder.setAttribute(SpanAttributes.ERROR_TYPE, type);
        }
        Span span = builder.startSpan();
        if (failed) {
            span.setStatus(StatusCode.ERROR, type);
        }
        span.end(now, TimeUnit.NANOSECONDS);
    }
}
