/**
 * Request tracing: one OpenTelemetry span per inference request, named and attributed as the GenAI
 * semantic conventions say ({@code gen_ai.*}), with the router's own facts (tier, score, route
 * source, misroute, tenant) under {@code nexuscore.*}, exported over OTLP/HTTP in batches. An
 * incoming W3C {@code traceparent} makes the span its child.
 *
 * <p>Off by default ({@code telemetry.otlp.enabled}); off, {@link io.nexuscore.telemetry.RequestTracing#OFF}
 * stands in and no SDK object exists. The data plane builds each span when the request completes,
 * with the start time it noted on arrival, so nothing is carried through the request's pipeline.
 */
package io.nexuscore.telemetry;
