package io.nexuscore.telemetry;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.StatusCode;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One inference request's span, made once the outcome is known: started with the time the data
 * plane noted when the request arrived, given its attributes, ended now. The attributes a sampler
 * may look at (operation, provider, request model) were on the builder; the rest go to the started
 * span, and cost nothing when the sampler did not record it.
 */
public final class InferenceSpan {

    private final Span span;
    private final long endEpochNanos;

    InferenceSpan(Span span, long endEpochNanos) {
        this.span = span;
        this.endEpochNanos = endEpochNanos;
    }

    /** Sets {@code key} unless {@code value} is null. */
    public InferenceSpan set(AttributeKey<String> key, String value) {
        if (value != null && span.isRecording()) {
            span.setAttribute(key, value);
        }
        return this;
    }

    public InferenceSpan set(AttributeKey<Long> key, long value) {
        if (span.isRecording()) {
            span.setAttribute(key, value);
        }
        return this;
    }

    public InferenceSpan set(AttributeKey<Boolean> key, boolean value) {
        if (span.isRecording()) {
            span.setAttribute(key, value);
        }
        return this;
    }

    /** Sets {@code key} unless {@code value} is null. */
    public InferenceSpan set(AttributeKey<List<String>> key, List<String> value) {
        if (value != null && span.isRecording()) {
            span.setAttribute(key, value);
        }
        return this;
    }

    /**
     * Ends the span. A status of 400 or more (499: the client left first) is an operation that
     * ended in error: span status ERROR and {@code error.type}, as the GenAI conventions ask.
     *
     * @param status    the HTTP status sent (or 499)
     * @param errorType a low-cardinality name of the failure (the problem type's slug); used when
     *                  {@code status >= 400}, the status itself when null
     */
    public void end(int status, String errorType) {
        if (span.isRecording()) {
            span.setAttribute(SpanAttributes.HTTP_STATUS, status);
            if (status >= 400) {
                String type = errorType == null ? Integer.toString(status) : errorType;
                span.setAttribute(SpanAttributes.ERROR_TYPE, type);
                span.setStatus(StatusCode.ERROR, type);
            }
        }
        span.end(endEpochNanos, TimeUnit.NANOSECONDS);
    }
}
